"""Format 2 study files: an ordered list of blocks (pages of questions, or a task type applied to
items of an item pool), item pools of decision subjects, between-subjects conditions with caps.

Checked like format 1: structure with a JSON Schema, references and counts by the semantic checks,
every problem as ``path: rule``. The docs' "Study file format 2" reference, generated from it, lists every field; the
task types are those of the registry (``tasks.BLOCK_TASKS``): each checks, defaults and counts its
own blocks' options (``tasks.base.BlockTask``). A pool read from a CSV (``pools[i].csv``) is turned into
inline subjects when the file is read (:mod:`studies.pools`), so a stored version never changes.
"""

import json
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext

from studies import study_file as v1
from studies.format1 import KEPT
from tasks import BLOCK_TASKS, block_task
from tasks.attention import Attention
from tasks.detection import CHECKS, apply_detection_defaults, detection_problems
from tasks.item_shapes import SUBJECTS
from tasks.schema import LABELS, PAGE_KEY, duplicates, once

QUESTION_TYPES = ("single_choice", "multiple_choice", "number", "text", "likert")
DEFAULT_CONDITION = {"key": "main", "label": "Main"}
# Adaptive options' upper bounds: a decision scores and stores every candidate while the participant's
# page waits (500 candidates of 60 subjects' pairs: about 18 KB stored, 10-16 ms; bench/adaptive_candidates.py);
# a refit at least every 10,000 answers.
MAX_CANDIDATES = 500
MAX_REFIT_EVERY = 10_000

_text, _shown, _key = v1._text, v1._shown, v1._key
_v1_condition = v1.SCHEMA["properties"]["conditions"]["items"]["properties"]
_value = {"type": ["string", "number"]}
_columns = {"type": "array", "items": _text, "uniqueItems": True}
_labels = LABELS
_options = {"type": "array", "minItems": 2, "items": _shown}
_subject = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id"],
    "properties": {
        "id": _key,
        "features": {"type": "object", "additionalProperties": _value},
        "groups": {"type": "object", "additionalProperties": _value},
        "series": {"type": "array", "minItems": 3, "items": {"type": "number", "minimum": 0}},
        "outcome": {"enum": [0, 1]},
        "models": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "score": {"type": "number", "minimum": 0, "maximum": 1},
                    "label": {"enum": [0, 1]},
                },
            },
        },
    },
}
_pool = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "display"],
    "properties": {
        "key": _key,
        "subject_noun": _shown,
        "subject_noun_plural": _shown,
        "outcome_column": _text,
        "subjects": {"type": "array", "minItems": 1, "items": _subject},
        "csv": {
            "type": "object",
            "additionalProperties": False,
            "required": ["path", "id_column"],
            "properties": {
                "path": _text,
                "id_column": _text,
                "feature_columns": _columns,
                "group_columns": _columns,
                "models": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {"score_column": _text, "label_column": _text},
                    },
                },
            },
        },
        "display": {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {
                "profile": _shown,
                "table": {**_columns, "minItems": 1},
                "chart": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["feature", "unit"],
                    "properties": {
                        "feature": _shown,
                        "unit": _shown,
                        "time_labels": {"type": "array", "items": _shown},
                    },
                },
            },
        },
    },
    "oneOf": [{"required": ["subjects"]}, {"required": ["csv"]}],
}
_question = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "type", "text"],
    "properties": {
        "key": _key,
        "type": {"enum": list(QUESTION_TYPES)},
        "text": _shown,
        "required": {"type": "boolean"},
        "options": {**_options, "uniqueItems": True},
        "min_choices": {"type": "integer", "minimum": 0},
        "max_choices": {"type": "integer", "minimum": 1},
        "min": {"type": "number"},
        "max": {"type": "number"},
        "integer": {"type": "boolean"},
        "max_length": {"type": "integer", "minimum": 1, "maximum": 5000},
        "labels": _labels,
    },
}
BLOCK_TYPES = ["instructions", "questionnaire", "attention", "detection", "task"]
_block_common = {"key": _key, "type": {"enum": BLOCK_TYPES}}
_block_conditions = {"type": "array", "minItems": 1, "items": _key, "uniqueItems": True}
# A task block: the common fields, and the options of every registered task type (each type's own
# options are checked against its type in _task_problems, so "not used by a rate task" names the rule).
_task_options = {name: schema for task in BLOCK_TASKS.values() for name, schema in task.options.items()}
_task_block = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "type", "task", "pool"],
    "properties": {
        **_block_common,
        "conditions": _block_conditions,
        "task": {"enum": list(BLOCK_TASKS)},
        "pool": _key,
        "title": _shown,
        "intro": _shown,
        "assignment": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "per_participant": {"type": "integer", "minimum": 1},
                "stratify_by": _text,
                "adaptive": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "refit_every": {"type": "integer", "minimum": 1, "maximum": MAX_REFIT_EVERY},
                        "candidates": {"type": "integer", "minimum": 1, "maximum": MAX_CANDIDATES},
                    },
                },
            },
        },
        "order": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "randomise": {"type": "boolean"},
                "fixed": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            },
        },
        **_task_options,
    },
}
_page_blocks = {
    "instructions": {
        "required": ["key", "type", "text"],
        "properties": {**_block_common, "conditions": _block_conditions, "title": _shown, "text": _shown},
    },
    "questionnaire": {
        "required": ["key", "type", "questions"],
        "properties": {
            **_block_common,
            "conditions": _block_conditions,
            "title": _shown,
            "intro": _shown,
            "questions": {"type": "array", "minItems": 1, "items": _question},
        },
    },
    "attention": {
        "required": ["key", "type", "question", "options", "correct"],
        "properties": {
            **_block_common,
            "conditions": _block_conditions,
            "question": _shown,
            "options": _options,
            "correct": _text,
            "page_key": PAGE_KEY,
            "among": {
                "type": "object",
                "additionalProperties": False,
                "required": ["blocks", "after_items"],
                "properties": {
                    "blocks": {"type": "array", "minItems": 1, "items": _key, "uniqueItems": True},
                    "after_items": {"type": "integer", "minimum": 0},
                },
            },
        },
    },
    "detection": {
        "required": ["key", "type", "check"],
        "properties": {
            **_block_common,
            "conditions": _block_conditions,
            "check": {"enum": list(CHECKS)},
            "question": _shown,
            "options": _options,
            "flag_if": _text,  # an option's value: the first language's text, like attention's correct
            "instruction": _shown,
            "sentence": _shown,
            "max_error_share": {"type": "number", "minimum": 0, "maximum": 1},
        },
    },
}
_block = {
    "type": "object",
    "required": ["key", "type"],
    "properties": {"type": {"enum": BLOCK_TYPES}},
    "allOf": [
        {
            "if": {"properties": {"type": {"const": kind}}},
            "then": {"type": "object", "additionalProperties": False, **rules},
        }
        for kind, rules in _page_blocks.items()
    ]
    + [{"if": {"properties": {"type": {"const": "task"}}}, "then": _task_block}],
}
_shared = {name: v1.SCHEMA["properties"][name] for name in ("slug", "title", *KEPT)}  # as format 1 writes them
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "slug", "title", "consent", "pools", "blocks", "completion"],
    "dependentRequired": {"translations": ["languages"]},
    "properties": {
        **_shared,
        "format": {"const": 2},
        "seed": {"type": "integer", "minimum": 0},
        "attention": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "exclude_if_failed": {"type": "integer", "minimum": 1},
                "return_if_failed": {"type": "integer", "minimum": 1},
            },
        },
        "conditions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["key", "label"],
                "properties": {
                    "key": _key,
                    "label": _text,
                    "cap": {"type": "integer", "minimum": 1},
                    **{name: _v1_condition[name] for name in ("desirable", "aggregate_scale")},
                },
            },
        },
        # participation.recruitment: the study closes when this many participants have completed it
        "recruitment": {
            "type": "object",
            "additionalProperties": False,
            "required": ["target"],
            "properties": {"target": {"type": "integer", "minimum": 1}},
        },
        "languages": {"type": "array"},  # studies.translation checks it and the texts in each language
        "translations": {"type": "object"},  # written by studies.translation from the texts per language
        "pools": {"type": "array", "minItems": 1, "items": _pool},
        "blocks": {"type": "array", "minItems": 1, "items": _block},
        "shuffle": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["units"],
                "properties": {
                    "units": {"type": "array", "minItems": 2, "items": {"type": "array", "minItems": 1, "items": _key}}
                },
            },
        },
    },
}


def block_items(block: dict, pool: dict) -> list[str]:
    """The item ids of a task block, in file order."""
    return list(block_task(block).item_map(block, pool))


def page_problems(spec: dict) -> list[v1.StudyFileProblem]:
    """Pages per participant above the limit (:func:`studies.study_file.page_limit_problems`), from
    the file's list lengths (after the schema, before the semantic checks): screening, one per page
    block, and per task block its items shown (``per_participant`` or all) times pages per item
    (``BlockTask.item_count`` and ``pages_shown``: pair_distance one per measure, a one_page block one)."""
    pools = {p["key"]: p for p in spec["pools"]}
    memo: dict = {}
    parts: list[tuple[str, int, list[str] | None]] = [("screening", int("screening" in spec), None)]
    for bi, block in enumerate(spec["blocks"]):
        pages = 1
        if block["type"] == "task":
            task, pool = block_task(block), pools.get(block["pool"], {})
            items = task.item_count(block, pool)
            shown = min(block.get("assignment", {}).get("per_participant", items), items)
            pages = task.pages_shown(block, pool, shown, memo)
        parts.append((f"blocks[{bi}] ({block['key']})", pages, block.get("conditions")))
    conditions = [c["key"] for c in spec.get("conditions", [DEFAULT_CONDITION])]
    return v1.page_limit_problems(conditions, parts, dict.fromkeys(conditions, "blocks"))


def subject_value(subject: Mapping[str, Any], column: str):
    """A subject's value of a column: its id, a group or a feature (None when it has none)."""
    if column == "id":
        return subject["id"]
    return subject.get("groups", {}).get(column, subject.get("features", {}).get(column))


def subject_outcome(subject: dict, column: str):
    """A subject's true outcome: its ``outcome`` (never shown, never a feature), or in files that kept it among
    the features or groups, that column's value."""
    return subject["outcome"] if "outcome" in subject else subject_value(subject, column)


def shown_columns(pool: dict) -> set[str] | None:
    """The columns the pool's pages show: the profile's placeholders and the table's columns (None when the
    profile is malformed: that is its own problem)."""
    display = pool["display"]
    profile = display.get("profile", "")
    return None if placeholder_problems(profile) else {*display.get("table", []), *placeholders(profile)}


def placeholders(template: str) -> list[str]:
    """The ``{column}`` names in a profile text (``{{`` and ``}}`` are literal braces)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


_PLAIN_PLACEHOLDER = re.compile(r"[^.\[\]{}!:]+")


def placeholder_problems(template: str) -> list[str]:
    """Why a profile text is not only plain ``{column}`` placeholders (the rule of the builder's
    ``--profile`` and of study files): malformed braces, or a placeholder with a format spec,
    conversion, attribute or index, which would render Python objects or pad without bound."""
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return [f"{exc}; write {{column}} for a value and {{{{ or }}}} for a brace"]
    return [
        f"placeholder {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}} is not a plain "
        "{column}: formats, conversions, attributes and indexes are not allowed"
        for name, spec, conv in fields
        if spec or conv or not _PLAIN_PLACEHOLDER.fullmatch(name)
    ]


def _semantic_problems(spec: dict) -> list[v1.StudyFileProblem]:
    problems: list[v1.StudyFileProblem] = []

    def add(path: str, rule: str) -> None:
        problems.append(v1.StudyFileProblem(path, rule))

    conditions = [c["key"] for c in spec.get("conditions", [DEFAULT_CONDITION])]
    for dup in duplicates(conditions):
        add("conditions", f"condition key {dup!r} is used twice")
    for ci, condition in enumerate(spec.get("conditions", [])):
        if "aggregate_scale" in condition and "desirable" not in condition:
            add(f"conditions[{ci}].aggregate_scale", "needs desirable (both describe the condition's effort feature)")
    pools = {}
    for dup in duplicates([p["key"] for p in spec["pools"]]):
        add("pools", f"pool key {dup!r} is used twice")
    for pi, pool in enumerate(spec["pools"]):
        pools[pool["key"]] = pool
        _pool_problems(pool, f"pools[{pi}]", add)
    for dup in duplicates([b["key"] for b in spec["blocks"]]):
        add("blocks", f"block key {dup!r} is used twice")
    n_attention, known = 0, set(conditions)
    memo: dict = {}  # what depends only on a pool, computed once however many blocks use it
    for bi, block in enumerate(spec["blocks"]):
        base = f"blocks[{bi}]"
        for ci, key in enumerate(block.get("conditions", [])):
            if key not in known:
                add(f"{base}.conditions[{ci}]", f"{key!r} is not one of the conditions ({_listing(conditions)})")
        if block["type"] == "attention":
            n_attention += 1
            if block["correct"] not in block["options"]:
                add(f"{base}.correct", f"{block['correct']!r} is not one of the options")
            _page_key_problems(block, Attention.format1_part, base, add)
        elif block["type"] == "questionnaire":
            _questionnaire_problems(block, base, add)
        elif block["type"] == "detection":
            detection_problems(block, base, add)
        elif block["type"] == "task":
            if block["pool"] not in pools:
                add(f"{base}.pool", f"{block['pool']!r} is not one of the pools ({_listing(pools)})")
                continue
            _task_problems(block, pools[block["pool"]], base, add, memo)
            _page_key_problems(block, block_task(block).format1_part, base, add)
    checks = spec.get("attention", {})
    for name in ("exclude_if_failed", "return_if_failed"):
        # exclude_if_failed's default without checks (1) is inert, so a validated file validates again
        if name in checks and checks[name] > max(n_attention, name == "exclude_if_failed"):
            add(f"attention.{name}", f"cannot exceed the number of attention blocks ({n_attention})")
    checks_used = {block["check"] for block in spec["blocks"] if block["type"] == "detection"}
    for ri, rule in enumerate(spec.get("quality", {}).get("exclude_if", [])):
        if rule in CHECKS and rule not in checks_used:
            add(f"quality.exclude_if[{ri}]", f"{rule!r} needs a detection block with check {rule!r}")
    caps = [c.get("cap") for c in spec.get("conditions", [])]
    target = spec.get("recruitment", {}).get("target")
    if target and caps and None not in caps and target > sum(caps):
        add("recruitment.target", f"{target} is more than the conditions' caps allow ({sum(caps)}): never reached")
    problems.extend(_shuffle_problems(spec))
    problems.extend(_among_problems(spec, conditions, pools))
    problems.extend(v1.screening_problems(spec))
    problems.extend(v1.completion_code_problems(spec))
    problems.extend(v1.quota_problems(spec))
    return problems


def _page_key_problems(block: dict, part: str | None, base: str, add) -> None:
    """A converted block's ``page_key`` (``tasks.questions.page_key``): the format 1 part its type was,
    the set or check key where format 1's page keys hold one, and a disagreement block asked as format 1
    asked it (one page, one answer per prompt)."""
    keys = block.get("page_key")
    if keys is None:
        return
    if keys["block"] != part:
        add(f"{base}.page_key.block", f"must be {part!r} for this block" if part else "not used by this block")
    elif part in ("pairs", "attention") and "key" not in keys:
        add(f"{base}.page_key", f"a {part!r} page key needs 'key' (the format 1 set or check)")
    elif part == "disagreement" and (not block.get("one_page") or block.get("confidence") or "bts" in block):
        add(f"{base}.page_key", "a 'disagreement' page key needs one_page, without confidence or bts")


def _shuffle_problems(spec: dict) -> list[v1.StudyFileProblem]:
    """Each unit of a ``shuffle`` lists blocks of the file, consecutive and in file order, and no
    block is in two units."""
    problems: list[v1.StudyFileProblem] = []
    position = {b["key"]: i for i, b in enumerate(spec["blocks"])}
    seen: set[str] = set()
    for si, shuffle in enumerate(spec.get("shuffle", [])):
        for ui, unit in enumerate(shuffle["units"]):
            base = f"shuffle[{si}].units[{ui}]"
            for ki, key in enumerate(unit):
                if key not in position:
                    problems.append(v1.StudyFileProblem(f"{base}[{ki}]", f"{key!r} is not a block"))
                elif key in seen:
                    problems.append(v1.StudyFileProblem(f"{base}[{ki}]", f"block {key!r} is in another unit"))
                seen.add(key)
            places = [position[key] for key in unit if key in position]
            if len(places) == len(unit) and places != list(range(places[0], places[0] + len(unit))):
                problems.append(v1.StudyFileProblem(base, "a unit's blocks must be consecutive blocks, in file order"))
    return problems


def _among_problems(spec: dict, conditions: list[str], pools: dict[str, dict]) -> list[v1.StudyFileProblem]:
    """An attention block ``among`` task blocks names task blocks, is in no ``shuffle`` unit (it moves
    with its blocks' items), and comes after at most the items of its blocks that a participant of
    each of its conditions is shown (``per_participant`` or all)."""
    problems: list[v1.StudyFileProblem] = []
    blocks = {b["key"]: b for b in spec["blocks"]}
    shuffled = {key for shuffle in spec.get("shuffle", []) for unit in shuffle["units"] for key in unit}
    for bi, block in enumerate(spec["blocks"]):
        if "among" not in block:
            continue
        base, among = f"blocks[{bi}].among", block["among"]
        if block["key"] in shuffled:
            problems.append(
                v1.StudyFileProblem(base, "an attention block among task items cannot be in a shuffle unit")
            )
        hosts = [blocks.get(key, {}) for key in among["blocks"]]
        for ki, (key, host) in enumerate(zip(among["blocks"], hosts, strict=True)):
            if host.get("type") != "task":
                problems.append(v1.StudyFileProblem(f"{base}.blocks[{ki}]", f"{key!r} is not a task block"))
            elif host.get("task") in BLOCK_TASKS and block_task(host).one_page(host):
                problems.append(
                    v1.StudyFileProblem(f"{base}.blocks[{ki}]", f"{key!r} asks its items on one page (one_page)")
                )
        if any(h.get("type") != "task" or h["pool"] not in pools for h in hosts):
            continue
        shown = {}
        for host in hosts:
            items = block_task(host).item_count(host, pools[host["pool"]])
            shown[host["key"]] = min(host.get("assignment", {}).get("per_participant", items), items)
        for condition in block.get("conditions", conditions):
            n = sum(shown[h["key"]] for h in hosts if condition in h.get("conditions", conditions))
            if among["after_items"] > n:
                problems.append(
                    v1.StudyFileProblem(
                        f"{base}.after_items",
                        f"must be <= the items of its blocks shown in condition {condition!r} ({n})",
                    )
                )
    return problems


def _listing(names, most: int = 10) -> str:
    """Names for a message, at most ``most`` of them (a message must not grow with the file)."""
    names = list(names)
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown}, ... {len(names):,} in all"


NO_ID_SHOWN = (
    "a subject's id is the study file's, not something to show participants (the pages call the people they "
    "show Person A, Person B, ...): show columns of the subjects instead"
)


def _pool_problems(pool: dict, base: str, add) -> None:
    if "subjects" not in pool:  # a CSV pool not yet read: studies.pools reads it when the file is read
        add(f"{base}.csv", "a pool read from a CSV can only be loaded with its file (load_study PATH or build_study)")
        return
    subjects = pool["subjects"]
    for dup in duplicates([s["id"] for s in subjects]):
        add(f"{base}.subjects", f"subject id {dup!r} is used twice")
    display = pool["display"]
    columns = {"id"} | {c for s in subjects for c in (*s.get("features", {}), *s.get("groups", {}))}
    malformed = placeholder_problems(display.get("profile", ""))
    for rule in malformed:
        add(f"{base}.display.profile", rule)
    names = [] if malformed else placeholders(display.get("profile", ""))
    for name in names:
        if name == "id":
            add(f"{base}.display.profile", NO_ID_SHOWN)
        elif name not in columns:
            add(f"{base}.display.profile", f"placeholder {{{name}}} is not a column of the pool's subjects")
    for ti, column in enumerate(display.get("table", [])):
        if column == "id":
            add(f"{base}.display.table[{ti}]", NO_ID_SHOWN)
        elif column not in columns:
            add(f"{base}.display.table[{ti}]", f"{column!r} is not a column of the pool's subjects")
    outcome = pool.get("outcome_column")
    stored = any("outcome" in s for s in subjects)
    if outcome is not None and not stored and outcome not in columns - {"id"}:
        add(
            f"{base}.outcome_column",
            f"{outcome!r} is neither the subjects' outcome nor a column of the pool's subjects",
        )
    elif outcome is not None:
        wrong = [s["id"] for s in subjects if subject_outcome(s, outcome) not in (0, 1)]
        if wrong:
            add(f"{base}.outcome_column", f"{outcome!r} must be 0 or 1 for every subject; {wrong[0]!r} has not")
    elif stored:
        add(f"{base}.outcome_column", "the subjects have an outcome: name its column (outcome_column)")
    for si, subject in enumerate(subjects):
        missing = [c for c in names if subject_value(subject, c) is None]
        if missing and all(c in columns for c in missing):
            add(f"{base}.subjects[{si}]", f"has no value for {', '.join(missing)} (used by display.profile)")
    if "chart" in display:
        lengths = {len(s.get("series", [])) for s in subjects}
        if 0 in lengths:
            add(f"{base}.display.chart", "every subject needs a series to be shown as a chart")
        elif len(lengths) > 1:
            add(f"{base}.subjects", f"every series must have the same number of time steps, found {sorted(lengths)}")
        elif "time_labels" in display["chart"] and len(display["chart"]["time_labels"]) != lengths.pop():
            add(f"{base}.display.chart.time_labels", "must have one label per time step of the series")


def _questionnaire_problems(block: dict, base: str, add) -> None:
    for dup in duplicates([q["key"] for q in block["questions"]]):
        add(f"{base}.questions", f"question key {dup!r} is used twice")
    needs = {"single_choice": "options", "multiple_choice": "options", "likert": "labels"}
    for qi, question in enumerate(block["questions"]):
        qbase, kind = f"{base}.questions[{qi}]", question["type"]
        if kind in needs and needs[kind] not in question:
            add(qbase, f"a {kind} question needs {needs[kind]!r}")
        allowed = {
            "single_choice": {"options"},
            "multiple_choice": {"options", "min_choices", "max_choices"},
            "number": {"min", "max", "integer"},
            "text": {"max_length"},
            "likert": {"labels"},
        }[kind]
        for name in ("options", "min_choices", "max_choices", "min", "max", "integer", "max_length", "labels"):
            if name in question and name not in allowed:
                add(f"{qbase}.{name}", f"not used by a {kind} question")
        if "min" in question and "max" in question and question["min"] > question["max"]:
            add(f"{qbase}.max", f"must be >= min ({question['min']})")
        n = len(question.get("options", []))
        for name in ("min_choices", "max_choices"):
            if name in question and question[name] > n:
                add(f"{qbase}.{name}", f"cannot exceed the number of options ({n})")
        if question.get("min_choices", 0) > question.get("max_choices", n):
            add(f"{qbase}.min_choices", "cannot exceed max_choices")


def _task_problems(block: dict, pool: dict, base: str, add, memo: dict) -> None:
    task = block_task(block)
    for name in sorted(_task_options.keys() - task.options.keys()):
        if name in block:
            add(f"{base}.{name}", f"not used by a {task.name} task")
    for name in task.needs:
        if name not in block:
            add(base, f"a {task.name} task needs {name!r}")
    if "subjects" not in pool or any(name not in block for name in task.needs):
        return
    task.check_block(block, pool, base, add, memo)
    _assignment_problems(block, pool, base, add, memo)
    shown = shown_columns(pool) if task.weighs_features else None
    if shown is not None:
        features = once(memo, (pool["key"], "features"), lambda: _feature_names(pool))
        unseen = [c for c in features if c not in shown]
        if unseen:
            add(
                f"{base}.pool",
                f"the {task.name} estimator weighs every feature of pool {pool['key']!r}, but no page shows "
                f"{_listing(unseen)}: show it in the pool's display (profile or table) or take it out of the "
                "subjects' features",
            )


def _feature_names(pool: dict) -> list[str]:
    """The feature columns of the pool's subjects, in first-seen order."""
    return list(dict.fromkeys(c for subject in pool["subjects"] for c in subject.get("features", {})))


def _assignment_problems(block: dict, pool: dict, base: str, add, memo: dict) -> None:
    # a block over the pool's subjects has the pool's items (once per pool); pairs and sets are its own
    scope = pool["key"] if block_task(block).item_shape is SUBJECTS else id(block)
    items = once(memo, (scope, "items"), lambda: block_items(block, pool))
    shown = len(items)
    assignment = block.get("assignment", {})
    if "per_participant" in assignment:
        m = assignment["per_participant"]
        if m > len(items):
            add(f"{base}.assignment.per_participant", f"must be <= the number of items ({len(items)})")
        shown = min(m, len(items))
        column = assignment.get("stratify_by")
        if column is not None:
            strata = once(memo, (scope, "strata", column), lambda: item_strata(block, pool, column))
            if strata is None:
                add(f"{base}.assignment.stratify_by", f"{column!r} is not a column of every subject of the pool")
            elif m % len(strata):
                add(
                    f"{base}.assignment.per_participant",
                    f"must be divisible by the number of values of {column!r} ({len(strata)})",
                )
            else:
                small = {value: len(ids) for value, ids in strata.items() if len(ids) < m // len(strata)}
                for value, n in small.items():
                    add(
                        f"{base}.assignment.stratify_by",
                        f"{column}={value!r} has {n} items, fewer than {m // len(strata)}",
                    )
    elif "stratify_by" in assignment:
        add(f"{base}.assignment.stratify_by", "needs per_participant (stratification applies to a sample)")
    if "adaptive" in assignment:
        _adaptive_problems(block, assignment, base, add)
    fixed = block.get("order", {}).get("fixed", {})
    listed = set(items) if fixed else set()
    for item, position in fixed.items():
        if item not in listed:
            add(f"{base}.order.fixed.{item}", "is not an item of this block")
        elif position >= shown:
            add(f"{base}.order.fixed.{item}", f"must be < the number of items shown per participant ({shown})")
        elif "per_participant" in assignment:
            add(f"{base}.order.fixed.{item}", "a fixed item must be shown to everyone: not with per_participant")
    for dup in duplicates([str(p) for p in fixed.values()]):
        add(f"{base}.order.fixed", f"position {dup} is given to more than one item")


def _adaptive_problems(block: dict, assignment: dict, base: str, add) -> None:
    adaptive = sorted(name for name, task in BLOCK_TASKS.items() if task.adaptive)
    if not block_task(block).adaptive:
        add(f"{base}.assignment.adaptive", f"adaptive assignment is available for {', '.join(adaptive)} blocks")
    if "per_participant" not in assignment:
        add(f"{base}.assignment.adaptive", "needs per_participant (how many items each participant judges)")
    if "stratify_by" in assignment:
        add(f"{base}.assignment.stratify_by", "not with adaptive (the fit chooses the items)")


def item_strata(block: Mapping[str, Any], pool: Mapping[str, Any], column: str) -> dict[str, list[str]] | None:
    """Item ids by the value of ``column`` (for pairs: the value of subject a); None when a subject lacks it
    or the items are not subjects (feature columns)."""
    by_id = {s["id"]: s for s in pool["subjects"]}
    strata: dict[str, list[str]] = {}
    task = block_task(block)
    for item, given in task.item_map(block, pool).items():
        shown = task.item_subjects(item, given)
        value = subject_value(by_id[shown[0]], column) if shown else None  # feature items show no subject
        if value is None:
            return None
        strata.setdefault(str(value), []).append(item)
    return strata


def with_defaults(spec: dict) -> dict:
    """A copy with the documented defaults filled in (texts in the active language)."""
    out = json.loads(json.dumps(spec))
    out.setdefault("seed", 0)
    out.setdefault("conditions", [dict(DEFAULT_CONDITION)])
    for condition in out["conditions"]:
        if "desirable" in condition:  # an effort feature: its aggregate's scale as in format 1
            condition.setdefault("aggregate_scale", 1.0)
    out["consent"].setdefault("decline_message", gettext(v1.DEFAULT_DECLINE_MESSAGE))
    n_checks = sum(b["type"] == "attention" for b in out["blocks"])
    attention = out.setdefault("attention", {})
    attention.setdefault("exclude_if_failed", max(1, (2 * n_checks + 2) // 3) if n_checks else 1)
    out.setdefault("bonus", {}).setdefault("currency", "GBP")
    pools = {p["key"]: p for p in out["pools"]}
    for pool in out["pools"]:
        if "subject_noun" not in pool:  # the default noun and its plural, in the catalogue's language
            pool["subject_noun"], pool["subject_noun_plural"] = gettext("person"), gettext("people")
        for subject in pool["subjects"]:
            for name in ("features", "groups", "models"):
                subject.setdefault(name, {})
        chart = pool["display"].get("chart")
        if chart is not None:
            years = range(1, len(pool["subjects"][0]["series"]) + 1)
            chart.setdefault("time_labels", [gettext("Year %(number)d") % {"number": i} for i in years])
    every = [c["key"] for c in out["conditions"]]
    for block in out["blocks"]:
        if "conditions" not in block:
            block["conditions"] = list(every)
        if block["type"] == "detection":
            apply_detection_defaults(block)
        if block["type"] == "questionnaire":
            for question in block["questions"]:
                question.setdefault("required", True)
                if question["type"] == "text":
                    question.setdefault("max_length", 500)
        if block["type"] != "task":
            continue
        order = block.setdefault("order", {})
        order.setdefault("randomise", True)
        order.setdefault("fixed", {})
        block.setdefault("assignment", {})
        block_task(block).apply_defaults(block, pools[block["pool"]])
    return out


@dataclass(frozen=True)
class BlockItems:
    """The items of a task block one participant sees: the count its assignment shows and how its item
    shape names them (``label``, "16 triplets")."""

    block: str
    task: str
    shape: str
    count: int
    label: str


@dataclass(frozen=True)
class ConditionSeen:
    """What one participant of a condition sees: ``pages`` (screening, every page block, one page per task
    item shown, pair_distance one per measure, a ``one_page`` block one in all) and each task block's items."""

    pages: int
    blocks: tuple[BlockItems, ...]


def condition_summaries(spec: dict) -> dict[str, ConditionSeen]:
    """What one participant of each condition sees of a validated format 2 file (:class:`ConditionSeen`),
    in one pass over the blocks' condition lists (never blocks x conditions)."""
    pools = {p["key"]: p for p in spec["pools"]}
    pages = {c["key"]: int("screening" in spec) for c in spec["conditions"]}
    blocks: dict[str, list[BlockItems]] = {c["key"]: [] for c in spec["conditions"]}
    for block in spec["blocks"]:
        seen, items = 1, None
        if block["type"] == "task":
            task, pool = block_task(block), pools[block["pool"]]
            shape, count = task.item_shape, task.item_count(block, pool)
            shown = block["assignment"].get("per_participant", count)
            seen, items = (
                task.pages_shown(block, pool, shown),
                BlockItems(block["key"], task.name, shape.name, shown, shape.label(shown)),
            )
        for key in set(block["conditions"]):
            pages[key] += seen
            if items is not None:
                blocks[key].append(items)
    return {key: ConditionSeen(pages[key], tuple(blocks[key])) for key in pages}


def questionnaire_columns(specs: list[dict]) -> dict[tuple[str, str], str]:
    """(block, question key) -> the question's column in the questionnaire table, over the versions'
    questionnaire blocks in order: the key, or ``block/key`` when another block has the same key
    (keys are unique within a block only)."""
    questions = list(
        dict.fromkeys(
            (block["key"], q["key"])
            for spec in specs
            if spec.get("format", 1) == 2
            for block in spec["blocks"]
            if block["type"] == "questionnaire"
            for q in block["questions"]
        )
    )
    counts = Counter(key for _, key in questions)
    return {(block, key): key if counts[key] == 1 else f"{block}/{key}" for block, key in questions}


def questionnaire_questions(spec: dict) -> dict[str, dict]:
    """Every questionnaire question of the study by its column in the questionnaire table
    (``studies.format2.questionnaire_columns``: the key, or ``block/key`` when two blocks share a key)."""
    columns = questionnaire_columns([spec])
    return {
        columns[(block["key"], q["key"])]: q
        for block in spec["blocks"]
        if block["type"] == "questionnaire"
        for q in block["questions"]
    }


# ``--by language``: the participant's language (the participants table's column) as a rater group,
# unless a questionnaire question has that key.
BY_LANGUAGE = "language"


def check_by(spec: dict, by: Sequence[str]) -> tuple[str, ...]:
    """``by`` as a tuple of questionnaire question keys (or ``language``, :data:`BY_LANGUAGE`; none: one
    rater group, ``fairness.task_blocks.ONE_GROUP``); a specific error for anything else."""
    by = tuple(by)
    known = questionnaire_questions(spec)
    unknown = [key for key in by if key not in known and key != BY_LANGUAGE]
    if unknown:
        choices = ", ".join(known) or "none: the study has no questionnaire"
        raise ValueError(
            f"--by {unknown[0]!r} is not a questionnaire question of the study; its questions: {choices} "
            f"(or --by {BY_LANGUAGE}: the participant's language)"
        )
    if len(set(by)) < len(by):
        raise ValueError("--by names a question twice")
    return by
