"""Validate a study file (JSON) before anything is stored.

Structure and ranges are checked with a JSON Schema; references between parts (a stimulus set's
subjects, attention-check answers, series lengths) by the semantic checks below. Every problem is
reported as ``path: rule`` where the path names the offending field, e.g.
``conditions[0].subjects[3].risk_score: must be <= 1``. See the docs, "Study file format 1".
"""

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.utils.translation import gettext_noop, override
from jsonschema import Draft202012Validator

from tasks.detection import CHECKS
from tasks.fair_score import DEFAULT_RISK_LABEL
from tasks.pair_distance import DEFAULT_BTS_PROMPT, LIKERT, likert_defaults
from tasks.schema import KEY, LIKERT_QUESTIONS, SHOWN, TEXT, duplicates

RELATIONS = (
    "similar_trend_similar_total",
    "different_trend_similar_total",
    "similar_trend_different_total",
    "different_trend_different_total",
)
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{1,58}[a-z0-9]$"

_text, _shown, _key = TEXT, SHOWN, KEY
_code = {"type": "string", "pattern": r"^[A-Za-z0-9_-]{1,64}$"}  # a completion code, e.g. Prolific's
_count = {"type": "integer", "minimum": 1}
QUOTAS_SCHEMA = {  # studies.quotas: its rules and caps
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["question"],
        "properties": {
            "question": {"type": "string", "minLength": 1},
            "max": {"oneOf": [_count, {"type": "object", "minProperties": 1, "additionalProperties": _count}]},
            "share": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            },
            "tolerance": {"type": "number", "minimum": 0, "maximum": 0.5},
            "of": _count,
            "min": {"oneOf": [_count, {"type": "object", "minProperties": 1, "additionalProperties": _count}]},
            "bins": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": ["number", "null"]},
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            "message": _shown,
        },
    },
}
_bonus = {
    "type": "object",
    "required": ["amount", "top_fraction"],
    "additionalProperties": False,
    "properties": {
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "top_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "min_respondents": {"type": "integer", "minimum": 2},  # honesty: analysis.bts.MIN_RESPONDENTS
        "description": _text,
    },
}

GENERALISE = ("stimuli",)  # the study file's analysis.generalise values (analysis.pipeline.GENERALISE)
# The answer-quality rules a study may exclude by (research.quality states each one): those the server
# measures, those over what the page's script reports (CLIENT_REPORTED_RULES, which never exclude alone), and
# one per check of the detection items (tasks.detection).
CLIENT_REPORTED_RULES = ("pasted", "away", "untyped")
QUALITY_RULES = (
    "fast",
    "hurried",
    "clock",
    "straightline",
    "inconsistent",
    "duplicate_text",
    "burst",
    *CLIENT_REPORTED_RULES,
    *CHECKS,
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "slug", "title", "consent", "instructions", "conditions", "completion"],
    "properties": {
        "format": {"const": 1},
        "slug": {"type": "string", "pattern": SLUG_PATTERN},
        "title": _shown,
        "description": {"type": "string"},
        "consent": {
            "type": "object",
            "required": ["text"],
            "additionalProperties": False,
            "properties": {"text": _shown, "decline_message": _shown},
        },
        "instructions": _text,
        "likert": LIKERT,
        "bts": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "questions": {
                    "type": "array",
                    "items": {"enum": list(LIKERT_QUESTIONS)},
                    "uniqueItems": True,
                },
                "prompt": _text,
            },
        },
        "rationale_factors": {"type": "boolean"},
        "conditions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["key", "label", "feature", "unit", "desirable", "subjects", "stimulus_sets"],
                "properties": {
                    "key": _key,
                    "label": _text,
                    "feature": _text,
                    "unit": _text,
                    "desirable": {"type": "boolean"},
                    "aggregate_scale": {"type": "number", "exclusiveMinimum": 0},
                    "time_labels": {"type": "array", "items": _text},
                    "context": {"type": "string"},
                    "risk_label": _text,
                    "subjects": {
                        "type": "array",
                        "minItems": 2,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["id", "series", "risk_score", "label"],
                            "properties": {
                                "id": _key,
                                "series": {
                                    "type": "array",
                                    "minItems": 3,
                                    "items": {"type": "number", "minimum": 0},
                                },
                                "demographics": {
                                    "type": "object",
                                    "additionalProperties": {"type": ["string", "number"]},
                                },
                                "risk_score": {"type": "number", "minimum": 0, "maximum": 1},
                                "label": {"enum": [0, 1]},
                            },
                        },
                    },
                    "stimulus_sets": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["key", "reference", "comparisons"],
                            "properties": {
                                "key": _key,
                                "reference": _key,
                                "comparisons": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "required": ["subject", "relation"],
                                        "properties": {
                                            "subject": _key,
                                            "relation": {"enum": list(RELATIONS)},
                                        },
                                    },
                                },
                            },
                        },
                    },
                    "disagreement_prompts": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["key", "subject"],
                            "properties": {"key": _key, "subject": _key},
                        },
                    },
                },
            },
        },
        "attention_checks": {
            "type": "object",
            "additionalProperties": False,
            "required": ["items"],
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["key", "question", "options", "correct"],
                        "properties": {
                            "key": _key,
                            "question": _text,
                            "options": {"type": "array", "minItems": 2, "items": _text},
                            "correct": _text,
                            "after_pair": {"type": "integer", "minimum": 0},
                        },
                    },
                },
                "exclude_if_failed": {"type": "integer", "minimum": 1},
                "return_if_failed": {"type": "integer", "minimum": 1},
            },
        },
        "screening": {
            "type": "object",
            "additionalProperties": False,
            "required": ["question", "options", "eligible"],
            "properties": {
                "question": _shown,
                "options": {"type": "array", "minItems": 2, "items": _shown},
                "eligible": {"type": "array", "minItems": 1, "items": _text, "uniqueItems": True},
            },
        },
        "quotas": QUOTAS_SCHEMA,
        "time_limit": {
            "type": "object",
            "additionalProperties": False,
            "required": ["max_minutes"],
            "properties": {
                "max_minutes": {"type": "integer", "minimum": 1, "maximum": 10080},
                "may_finish_late": {"type": "boolean"},
            },
        },
        "prolific": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "completion_codes": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        outcome: _code for outcome in ("completed", "failed_attention", "screened_out", "declined")
                    },
                },
                "failed_attention_message": _shown,
                "screened_out_message": _shown,
            },
        },
        "bonus": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"currency": _text, "honesty": _bonus, "rationale": _bonus},
        },
        # analysis options; generalise "stimuli": alpha's CI resamples stimuli too (analysis.pipeline.GENERALISE)
        "analysis": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"generalise": {"enum": list(GENERALISE)}},
        },
        # Interaction signals (participation.signals) and the quality rules over them (research.quality).
        "telemetry": {"type": "boolean"},
        "quality": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "min_seconds_per_page": {"type": "number", "minimum": 0, "maximum": 600},
                "fast_share": {"type": "number", "minimum": 0, "maximum": 1},
                "skim_wpm": {"type": "number", "minimum": 50, "maximum": 5000},
                "seconds_per_input": {"type": "number", "minimum": 0, "maximum": 60},
                "hurried_share": {"type": "number", "minimum": 0, "maximum": 1},
                "clock_slack_seconds": {"type": "number", "minimum": 0, "maximum": 600},
                "max_identical_run": {"type": "integer", "minimum": 2, "maximum": 1000},
                "repeat_tolerance": {"type": "number", "minimum": 0, "maximum": 1000},
                "max_inconsistent": {"type": "integer", "minimum": 1, "maximum": 1000},
                "min_text_chars": {"type": "integer", "minimum": 1, "maximum": 100000},
                "near_duplicate": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "burst_size": {"type": "integer", "minimum": 2, "maximum": 100000},
                "burst_minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 10080},
                "min_pasted_chars": {"type": "integer", "minimum": 1, "maximum": 100000},
                "away_share": {"type": "number", "minimum": 0, "maximum": 1},
                "exclude_if": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": {"enum": list(QUALITY_RULES)},
                },
            },
        },
        "completion": {
            "type": "object",
            "additionalProperties": False,
            "required": ["code"],
            "properties": {
                "code": _code,
                "url": {"type": "string", "pattern": r"^https?://\S+$"},
            },
        },
    },
}


FORMAT1_LANGUAGES = (
    "format 1 files are in one language: convert the file to format 2 (manage.py convert_study) and give "
    "its texts in each language there"
)
DEFAULT_DECLINE_MESSAGE = gettext_noop(
    "Thank you. You chose not to take part, and no answers were recorded. You may close this page."
)


@dataclass(frozen=True)
class StudyFileProblem:
    path: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path or '(top level)'}: {self.rule}"


class InvalidStudyFile(ValueError):
    """The study file breaks one or more rules; ``problems`` lists each with its path."""

    def __init__(self, problems: list[StudyFileProblem]):
        self.problems = problems
        super().__init__("invalid study file:\n" + "\n".join(f"  - {p}" for p in problems))


def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _schema_problems(spec: Any, schema: dict) -> list[StudyFileProblem]:
    validator = Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(spec), key=lambda e: list(map(str, e.absolute_path))):
        problems.append(StudyFileProblem(_path(error.absolute_path), _schema_rule(error)))
    return problems


def _schema_rule(error) -> str:
    from studies.translation import shown_rule

    shown = shown_rule(error)
    if shown is not None:
        return shown
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    if error.validator == "additionalProperties":
        return error.message
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
        return f"must be {sign[error.validator]} {error.validator_value} (got {error.instance!r})"
    if error.validator == "pattern":
        return f"{error.instance!r} does not match the required pattern {error.validator_value}"
    return error.message


def _semantic_problems(spec: dict) -> list[StudyFileProblem]:
    problems: list[StudyFileProblem] = []

    def add(path: str, rule: str) -> None:
        problems.append(StudyFileProblem(path, rule))

    likert = spec.get("likert", {})
    points = likert.get("points", 6)
    if "labels" in likert and len(likert["labels"]) != points:
        add("likert.labels", f"must have exactly {points} labels (one per point), has {len(likert['labels'])}")
    if likert.get("similar_max", 1) >= points:
        add("likert.similar_max", f"must be below the number of points ({points})")

    for dup in duplicates([c["key"] for c in spec["conditions"]]):
        add("conditions", f"condition key {dup!r} is used twice")
    pair_counts = []
    for ci, cond in enumerate(spec["conditions"]):
        base = f"conditions[{ci}]"
        ids = [s["id"] for s in cond["subjects"]]
        for dup in duplicates(ids):
            add(f"{base}.subjects", f"subject id {dup!r} is used twice")
        lengths = {len(s["series"]) for s in cond["subjects"]}
        if len(lengths) > 1:
            add(f"{base}.subjects", f"every series must have the same number of time steps, found {sorted(lengths)}")
        steps = max(lengths)
        if "time_labels" in cond and len(cond["time_labels"]) != steps:
            add(f"{base}.time_labels", f"must have one label per time step ({steps}), has {len(cond['time_labels'])}")
        known = set(ids)
        for dup in duplicates([s["key"] for s in cond["stimulus_sets"]]):
            add(f"{base}.stimulus_sets", f"stimulus set key {dup!r} is used twice")
        pairs = 0
        for si, sset in enumerate(cond["stimulus_sets"]):
            sbase = f"{base}.stimulus_sets[{si}]"
            if sset["reference"] not in known:
                add(f"{sbase}.reference", f"subject {sset['reference']!r} is not among this condition's subjects")
            members = [c["subject"] for c in sset["comparisons"]]
            for dup in duplicates(members):
                add(f"{sbase}.comparisons", f"subject {dup!r} appears twice in one set")
            for xi, comp in enumerate(sset["comparisons"]):
                if comp["subject"] not in known:
                    add(
                        f"{sbase}.comparisons[{xi}].subject",
                        f"subject {comp['subject']!r} is not among this condition's subjects",
                    )
                if comp["subject"] == sset["reference"]:
                    add(f"{sbase}.comparisons[{xi}].subject", "a comparison subject cannot be the reference subject")
            pairs += len(sset["comparisons"])
        pair_counts.append(pairs)
        prompts = cond.get("disagreement_prompts", [])
        for dup in duplicates([p["key"] for p in prompts]):
            add(f"{base}.disagreement_prompts", f"prompt key {dup!r} is used twice")
        for pi, prompt in enumerate(prompts):
            if prompt["subject"] not in known:
                add(
                    f"{base}.disagreement_prompts[{pi}].subject",
                    f"subject {prompt['subject']!r} is not among this condition's subjects",
                )

    checks = spec.get("attention_checks", {})
    items = checks.get("items", [])
    for dup in duplicates([c["key"] for c in items]):
        add("attention_checks.items", f"attention check key {dup!r} is used twice")
    for ai, item in enumerate(items):
        if item["correct"] not in item["options"]:
            add(f"attention_checks.items[{ai}].correct", f"{item['correct']!r} is not one of the options")
        if "after_pair" in item and item["after_pair"] > min(pair_counts):
            add(f"attention_checks.items[{ai}].after_pair", f"must be <= the number of pairs ({min(pair_counts)})")
    for name in ("exclude_if_failed", "return_if_failed"):
        # exclude_if_failed's default without checks (1) is inert, so a validated file validates again
        if name in checks and checks[name] > max(len(items), name == "exclude_if_failed"):
            add(f"attention_checks.{name}", f"cannot exceed the number of checks ({len(items)})")
    problems.extend(screening_problems(spec))
    problems.extend(completion_code_problems(spec))
    problems.extend(quota_problems(spec))
    return problems


def completion_code_problems(spec: dict) -> list[StudyFileProblem]:
    """Each outcome's code differs from the others' (Prolific refuses a study with a code twice, and a shared
    code would not tell the outcomes apart); ``completed`` defaults to ``completion.code`` (both formats)."""
    codes = {"completed": spec["completion"]["code"], **spec.get("prolific", {}).get("completion_codes", {})}
    return [
        StudyFileProblem("prolific.completion_codes", f"{code!r} is the code of more than one outcome")
        for code in duplicates(list(codes.values()))
    ]


def quota_problems(spec: dict) -> list[StudyFileProblem]:
    """``studies.quotas.quota_problems`` (imported when called: that module uses this one's names)."""
    from studies.quotas import quota_problems as problems

    return problems(spec)


def screening_problems(spec: dict) -> list[StudyFileProblem]:
    """The screening question's rules (both formats): options listed once, eligible answers among
    them, and not every option eligible."""
    screening = spec.get("screening")
    if not screening:
        return []
    problems = [
        StudyFileProblem("screening.options", f"option {dup!r} is listed twice")
        for dup in duplicates(screening["options"])
    ]
    for i, option in enumerate(screening["eligible"]):
        if option not in screening["options"]:
            problems.append(StudyFileProblem(f"screening.eligible[{i}]", f"{option!r} is not one of the options"))
    if set(screening["eligible"]) >= set(screening["options"]):
        problems.append(
            StudyFileProblem("screening.eligible", "every option is eligible, so nobody would be screened out")
        )
    return problems


def with_defaults(spec: dict) -> dict:
    """A copy with the documented defaults filled in (6-point labelled Likert, BTS on 'overall')."""
    out = json.loads(json.dumps(spec))
    out["likert"] = likert_defaults(out.get("likert", {}))
    bts = out.setdefault("bts", {})
    bts.setdefault("questions", ["overall"])
    bts.setdefault("prompt", DEFAULT_BTS_PROMPT)
    out.setdefault("rationale_factors", True)
    out["consent"].setdefault("decline_message", DEFAULT_DECLINE_MESSAGE)
    checks = out.setdefault("attention_checks", {"items": []})
    checks.setdefault("exclude_if_failed", max(1, (2 * len(checks["items"]) + 2) // 3) if checks["items"] else 1)
    bonus = out.setdefault("bonus", {})
    bonus.setdefault("currency", "GBP")
    for cond in out["conditions"]:
        steps = len(cond["subjects"][0]["series"])
        cond.setdefault("time_labels", [f"Year {i + 1}" for i in range(steps)])
        cond.setdefault("aggregate_scale", 1.0)
        cond.setdefault("context", "")
        cond.setdefault("risk_label", DEFAULT_RISK_LABEL)
        cond.setdefault("disagreement_prompts", [])
        for subject in cond["subjects"]:
            subject.setdefault("demographics", {})
    return out


MAX_DEPTH = 50
LONG_TEXT_FIELDS = ("instructions", "consent.text")
_LONG_BLOCK_TEXT = re.compile(r"blocks\[\d+\]\.(text|intro)")  # format 2 instructions
MAX_LONG_TEXT = 50_000
MAX_TEXT = 5_000
MAX_LIST_ITEMS = 10_000
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")  # C0 controls except tab, line feed, carriage return


class _NonFinite:
    """Stands for NaN / Infinity / -Infinity in the parsed file until its path is known."""

    def __init__(self, text: str):
        self.text = text


def _content_problems(spec: Any, duplicates: dict[int, dict[str, int]] | None = None) -> list[StudyFileProblem]:
    """Rules JSON Schema cannot state, checked without recursion: finite numbers, nesting depth,
    no control characters in strings or keys, text and list lengths, no duplicate keys."""
    problems: list[StudyFileProblem] = []
    stack: list[tuple[Any, tuple]] = [(spec, ())]
    while stack and len(problems) < 50:
        value, parts = stack.pop()
        path = _path(parts)
        if len(parts) > MAX_DEPTH:
            problems.append(StudyFileProblem(path, f"nested deeper than the limit of {MAX_DEPTH} levels"))
            continue
        if isinstance(value, _NonFinite):
            problems.append(StudyFileProblem(path, f"{value.text} is not allowed: numbers must be finite"))
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append(StudyFileProblem(path, f"{value!r} is not allowed: numbers must be finite"))
        elif isinstance(value, str):
            limit = MAX_LONG_TEXT if path in LONG_TEXT_FIELDS or _LONG_BLOCK_TEXT.fullmatch(path) else MAX_TEXT
            if len(value) > limit:
                problems.append(StudyFileProblem(path, f"text longer than {limit:,} characters ({len(value):,})"))
            problems.extend(_control_problem(value, path))
        elif isinstance(value, dict):
            for key, count in (duplicates or {}).get(id(value), {}).items():
                problems.append(
                    StudyFileProblem(
                        _path((*parts, key)), f"duplicate key (appears {count} times); each key may appear once"
                    )
                )
            for key, inner in value.items():
                problems.extend(_control_problem(str(key), path, key=True))
                stack.append((inner, (*parts, key)))
        elif isinstance(value, list):
            if len(value) > MAX_LIST_ITEMS:
                problems.append(StudyFileProblem(path, f"more than {MAX_LIST_ITEMS:,} items ({len(value):,})"))
                continue
            stack.extend((inner, (*parts, i)) for i, inner in enumerate(value))
    return sorted(problems, key=lambda p: p.path)


def _control_problem(text: str, path: str, *, key: bool = False) -> list[StudyFileProblem]:
    found = _CONTROL.search(text)
    if found is None:
        return []
    where = f"key {text!r}" if key else "text"
    char = f"U+{ord(found.group()):04X}"
    return [StudyFileProblem(path, f"{where} contains the control character {char} at position {found.start()}")]


DEFAULT_MAX_PAGES = 500
_NAMED_PARTS = 5


def page_limit_problems(
    conditions: list[str], parts: list[tuple[str, int, list[str] | None]], paths: dict[str, str]
) -> list[StudyFileProblem]:
    """The condition whose participants would see the most pages, when that exceeds
    ``STUDY_MAX_PAGES_PER_PARTICIPANT``, with the parts of the file that add up to it.

    ``parts`` are (label, pages, the conditions that show them or None for all), counted from the
    file's list lengths by the caller: no plan is built, so the check costs no more than the file's size."""
    limit = _setting_int("STUDY_MAX_PAGES_PER_PARTICIPANT", DEFAULT_MAX_PAGES)
    common = sum(pages for _, pages, keys in parts if keys is None)
    totals = dict.fromkeys(conditions, common)
    for _, pages, keys in parts:
        for key in set(keys or ()) & totals.keys():
            totals[key] += pages
    over = [key for key in conditions if totals[key] > limit]
    if not over:
        return []
    worst = max(over, key=totals.__getitem__)
    shown = sorted(
        ((label, pages) for label, pages, keys in parts if pages and (keys is None or worst in keys)),
        key=lambda part: -part[1],
    )
    named = ", ".join(f"{label} {pages:,}" for label, pages in shown[:_NAMED_PARTS])
    if len(shown) > _NAMED_PARTS:
        rest = shown[_NAMED_PARTS:]
        named += f", {len(rest):,} more with {sum(pages for _, pages in rest):,}"
    who = f"a participant of condition {worst!r}" if len(conditions) > 1 else "a participant"
    others = f" (as in {len(over) - 1:,} other condition{'s' if len(over) > 2 else ''})" if len(over) > 1 else ""
    rule = (
        f"{who} would see {totals[worst]:,} pages{others}, more than the limit of {limit:,} pages per participant "
        f"(STUDY_MAX_PAGES_PER_PARTICIPANT); pages: {named}. Show fewer items per participant or split the study"
    )
    return [StudyFileProblem(paths[worst], rule)]


def _page_parts(spec: dict) -> list[tuple[str, int, list[str] | None]]:
    """Format 1: the pages of one participant (as the format 1 plan had them) by part of the file."""
    parts: list[tuple[str, int, list[str] | None]] = [
        ("screening", int("screening" in spec), None),
        ("instructions", 1, None),
        ("attention_checks.items", len(spec.get("attention_checks", {}).get("items", [])), None),
    ]
    for ci, cond in enumerate(spec["conditions"]):
        pairs = sum(len(s["comparisons"]) for s in cond["stimulus_sets"])
        pages = len(LIKERT_QUESTIONS) * pairs + len(cond["stimulus_sets"])  # 3 per pair, an output page per set
        prompts = int(bool(cond.get("disagreement_prompts")))  # one page holds them all
        parts.append((f"conditions[{ci}].stimulus_sets", pages, [cond["key"]]))
        parts.append((f"conditions[{ci}].disagreement_prompts", prompts, [cond["key"]]))
    return parts


def pages_per_participant(spec: dict) -> dict[str, int]:
    """Format 1: condition key -> pages one participant of it sees, counted (not by building a plan)."""
    parts = _page_parts(spec)
    common = sum(pages for _, pages, keys in parts if keys is None)
    return {c["key"]: common + sum(p for _, p, keys in parts if keys == [c["key"]]) for c in spec["conditions"]}


def _page_problems(spec: dict) -> list[StudyFileProblem]:
    conditions = [c["key"] for c in spec["conditions"]]
    paths = {key: f"conditions[{ci}]" for ci, key in reversed(list(enumerate(conditions)))}
    return page_limit_problems(conditions, _page_parts(spec), paths)


def validate_study(spec: Any) -> dict:
    """Return the study with defaults filled in, or raise :class:`InvalidStudyFile`."""
    return _validate(spec, None)


def _validate(spec: Any, duplicates: dict[int, dict[str, int]] | None) -> dict:
    problems = _content_problems(spec, duplicates)
    if problems:
        raise InvalidStudyFile(problems)
    if not isinstance(spec, dict) or spec.get("format") not in (1, 2):
        found = spec.get("format", "missing") if isinstance(spec, dict) else type(spec).__name__
        raise InvalidStudyFile([StudyFileProblem("format", f"must be 1 or 2 (got {found!r})")])
    from studies import format2  # format 2 builds on this module's schema parts
    from studies.translation import DEFAULT_LANGUAGE, translated_file

    schema, pages, semantic, defaults = (
        (SCHEMA, _page_problems, _semantic_problems, with_defaults)
        if spec["format"] == 1
        else (format2.SCHEMA, format2.page_problems, format2._semantic_problems, format2.with_defaults)
    )

    def checked(spec: dict) -> list[StudyFileProblem]:
        # pages before any check whose cost grows with the pages
        return _schema_problems(spec, schema) or pages(spec) or semantic(spec)

    if "languages" in spec:
        if spec["format"] == 1:
            raise InvalidStudyFile([StudyFileProblem("languages", FORMAT1_LANGUAGES)])
        stored, problems = translated_file(
            spec, schema, problem=StudyFileProblem, schema_problems=_schema_problems, check=checked, defaults=defaults
        )
    else:
        problems = checked(spec)
        if not problems:
            with override(DEFAULT_LANGUAGE):  # the defaults' texts in English
                stored = defaults(spec)
    if problems:
        raise InvalidStudyFile(problems)
    return stored


def read_study_file(path: str | Path, *, max_bytes: int | None = None) -> dict:
    """Parse and validate a study file; JSON syntax errors are reported with line and column.

    Refused as well: a file larger than ``max_bytes`` (default: the ``STUDY_FILE_MAX_BYTES``
    setting, 5 MB), a key that appears twice in one object (JSON parsers silently keep the last),
    ``NaN`` / ``Infinity``, nesting deeper than :data:`MAX_DEPTH`, control characters in text.
    """
    if max_bytes is None:
        max_bytes = _setting_max_bytes()
    try:
        size = Path(path).stat().st_size
        if size > max_bytes:
            raise InvalidStudyFile(
                [StudyFileProblem("", f"file is larger than the limit of {max_bytes:,} bytes ({size:,})")]
            )
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidStudyFile([StudyFileProblem("", f"cannot read {path}: {exc}")]) from exc
    return read_study_text(text, folder=Path(path).parent)


def read_study_text(text: str, *, folder: Path | None = None) -> dict:
    """Parse and validate a study file's text (an upload, already within the size limit): the
    same rules as :func:`read_study_file`. A format 2 pool given as a CSV (``pools[i].csv.path``,
    relative to ``folder``) is read into inline subjects first (:mod:`studies.pools`); without a
    folder (an uploaded file alone) such a pool is refused with its path."""
    spec, duplicates = parse_study_text(text)
    if folder is not None and isinstance(spec, dict) and spec.get("format") == 2:
        from studies.pools import inline_csv_pools

        spec = inline_csv_pools(spec, folder)
    return _validate(spec, duplicates)


def parse_study_text(text: str) -> tuple[Any, dict[int, dict[str, int]]]:
    """JSON with NaN / Infinity kept as markers and duplicate keys recorded (id of the object ->
    key -> count), so that :func:`_content_problems` can name their paths; a file too deeply
    nested for the parser is refused here."""
    duplicates: dict[int, dict[str, int]] = {}
    keep: list[dict] = []  # objects with duplicates stay alive, so that their ids are not reused

    def pairs(items: list[tuple[str, Any]]) -> dict:
        out = dict(items)
        if len(out) != len(items):
            counts: dict[str, int] = {}
            for key, _ in items:
                counts[key] = counts.get(key, 0) + 1
            duplicates[id(out)] = {key: n for key, n in counts.items() if n > 1}
            keep.append(out)
        return out

    try:
        spec = json.loads(text, object_pairs_hook=pairs, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise InvalidStudyFile(
            [StudyFileProblem("", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")]
        ) from exc
    except RecursionError as exc:
        raise InvalidStudyFile([StudyFileProblem("", f"nested deeper than the limit of {MAX_DEPTH} levels")]) from exc
    return spec, duplicates


def _setting_max_bytes() -> int:
    return _setting_int("STUDY_FILE_MAX_BYTES", DEFAULT_MAX_FILE_BYTES)


def _setting_int(name: str, default: int) -> int:
    """A Django setting, or ``default`` outside Django (a notebook)."""
    try:
        from django.conf import settings

        return int(getattr(settings, name, default))
    except Exception:  # noqa: BLE001 - used outside Django (a notebook): the documented default
        return default
