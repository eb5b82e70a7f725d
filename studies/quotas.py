"""Quotas by stakeholder group: the study file's ``quotas`` over the screening answer or a
single-choice questionnaire question (format 2), each group with a cap on the participants it holds.

A quota is ``{"question": Q, "max": N}`` (every option of Q, for screening every eligible one, at
most N participants), ``{"question": Q, "max": {option: N, ...}}`` (the options listed) or
``{"question": Q, "share": {option: p, ...}, "tolerance": t, "of": N}`` (the options listed at most
``floor((p + t) * N)`` of a sample of N: "50% women within +-5 points of 200" caps women at 110;
listing every option bounds each from below too, by N minus the others' caps). ``tolerance``
defaults to 0.05. Q is ``screening`` or a questionnaire column (the question key, ``block/key`` when
two blocks share the key). The schema is ``studies.study_file.QUOTAS_SCHEMA`` (both formats); the
participant runtime (``participation.quotas``) enforces the caps.
"""

import math
from dataclasses import dataclass

from studies.study_file import StudyFileProblem
from tasks import questions

DEFAULT_TOLERANCE = 0.05


@dataclass(frozen=True)
class QuotaGroup:
    """One capped group: answers ``text`` to the stored question ``question`` (``Answer.question``);
    ``label`` is the question as the study file names it."""

    label: str
    question: str
    text: str
    cap: int


def _options(spec: dict) -> dict[str, tuple[str, list[str]]]:
    """Quota question name -> (the answer's stored question key, the options a quota may cap)."""
    found = {}
    if spec.get("screening"):
        found["screening"] = (questions.SCREENING, list(spec["screening"]["eligible"]))
    if spec.get("format", 1) == 2:
        from studies.format2 import questionnaire_columns

        columns = questionnaire_columns([spec])
        for block in spec["blocks"]:
            for q in block.get("questions", []) if block["type"] == "questionnaire" else []:
                if q["type"] == "single_choice":
                    found[columns[(block["key"], q["key"])]] = (
                        f"{block['key']}/{q['key']}",
                        list(q.get("options", [])),
                    )
    return found


def quota_problems(spec: dict) -> list[StudyFileProblem]:
    """The quotas' rules: the question exists and is single choice (or screening), one of ``max`` or
    ``share`` (``share`` with ``of``, ``tolerance`` only with ``share``), the options named are the
    question's (screening: eligible ones), shares sum to at most 1, a question capped once."""
    problems: list[StudyFileProblem] = []
    if not spec.get("quotas"):
        return problems
    options = _options(spec)
    seen: set[str] = set()
    for i, quota in enumerate(spec.get("quotas", [])):
        base, name = f"quotas[{i}]", quota["question"]

        def add(path: str, rule: str, base: str = base) -> None:
            problems.append(StudyFileProblem(f"{base}{path}", rule))

        if name not in options:
            known = ", ".join(options) or "none: the file has no screening or single-choice question"
            add(".question", f"{name!r} is not the screening or a single-choice questionnaire question ({known})")
            continue
        if name in seen:
            add(".question", f"{name!r} already has a quota")
        seen.add(name)
        if ("max" in quota) == ("share" in quota):
            add("", "give either max or share")
        if "share" in quota and "of" not in quota:
            add(".of", "a share quota needs the planned sample size 'of'")
        for field in ("tolerance", "of"):
            if field in quota and "share" not in quota:
                add(f".{field}", "only used with share")
        listed = quota["max"] if isinstance(quota.get("max"), dict) else quota.get("share", {})
        for option in listed:
            if option not in options[name][1]:
                allowed = "eligible answers" if name == "screening" else "options"
                add(f".{'share' if 'share' in quota else 'max'}.{option}", f"{option!r} is not one of the {allowed}")
        if sum(quota.get("share", {}).values()) > 1 + 1e-9:
            add(".share", "the shares add up to more than 1")
    return problems


def quota_groups(spec: dict) -> list[QuotaGroup]:
    """Every capped group of a validated study file, in file order."""
    options = _options(spec)
    groups = []
    for quota in spec.get("quotas", []):
        name = quota["question"]
        stored, choices = options[name]
        if "share" in quota:
            tolerance = quota.get("tolerance", DEFAULT_TOLERANCE)
            caps = {o: math.floor((p + tolerance) * quota["of"] + 1e-9) for o, p in quota["share"].items()}
        elif isinstance(quota["max"], dict):
            caps = dict(quota["max"])
        else:
            caps = dict.fromkeys(choices, quota["max"])
        groups += [QuotaGroup(name, stored, option, cap) for option, cap in caps.items()]
    return groups


def planned_group_sizes(spec: dict, n: int) -> dict[str, float]:
    """Each quota group's size in a sample of ``n`` (``question = option``): its share of n (share
    quotas) or as many as its cap allows (max quotas: the most it can hold), never above the cap."""
    sizes = {}
    shares = {(q["question"], o): p for q in spec.get("quotas", []) for o, p in q.get("share", {}).items()}
    for group in quota_groups(spec):
        planned = shares.get((group.label, group.text), 1.0) * n
        sizes[f"{group.label} = {group.text}"] = min(planned, group.cap)
    return sizes
