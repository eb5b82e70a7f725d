"""Quotas by stakeholder group: the study file's ``quotas`` over the screening answer or a
questionnaire question (format 2: single choice, multiple choice or number), each group with a cap
on the participants it holds and/or a minimum it must reach.

A quota names a ``question`` and gives ``max`` (a number: at most N per group; ``{group: N}``: the
groups listed), ``share`` (``{group: p}`` with ``of`` = N: at most ``floor((p + t) * N)``, ``t`` =
``tolerance``, default 0.05), ``min`` (a number or ``{group: N}``, with ``of``: the group's minimum,
rule in ``admission``) or ``max`` / ``share`` with ``min``. Groups are the question's options
(screening: its eligible ones); a number question's groups are the quota's ``bins`` (``{label:
[low, high]}``, bounds inclusive, ``null`` open), so "age 18-29 / 30-44 / 45+" is
``{"18-29": [18, 29], "30-44": [30, 44], "45+": [45, null]}``. A multiple-choice participant is in
every group they chose. ``message`` is the screened-out page's text for this quota. Q is ``screening``
or a questionnaire column (the question key, ``block/key`` when two blocks share the key). The schema
is ``studies.study_file.QUOTAS_SCHEMA``; the participant runtime (``participation.quotas``) enforces it.
"""

import json
import math
from dataclasses import dataclass
from itertools import pairwise

from django.utils.translation import gettext, gettext_noop

from studies.study_file import StudyFileProblem
from tasks import questions

DEFAULT_TOLERANCE = 0.05
DEFAULT_MESSAGE = gettext_noop(
    "Thank you for your interest. This study already has all the participants it needs from your group, "
    "so it ends here. Please return your submission on Prolific."
)
MINIMUMS = "minimums"  # the reason of a screening out that keeps places for other groups' minimums


@dataclass(frozen=True)
class QuotaGroup:
    """One group: answers ``text`` (an option, or a number bin's label) to the stored question
    ``question`` (``Answer.question``); ``label`` is the question as the study file names it;
    ``cap`` None = no cap; ``low``/``high``: a number bin's inclusive bounds (None = open)."""

    label: str
    question: str
    text: str
    cap: int | None
    minimum: int = 0
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Quota:
    """One quota of the study file: its groups, the question's ``kind`` (choice, multiple or number),
    the planned sample ``of`` (None without it) and its screened-out ``message`` ("" for the default)."""

    label: str
    question: str
    kind: str
    groups: tuple[QuotaGroup, ...]
    of: int | None
    message: str

    def groups_of(self, text: str, number: float | None) -> list[str]:
        """The groups one stored answer places its participant in (multiple choice: each option chosen)."""
        if self.kind == "number":
            return [
                g.text
                for g in self.groups
                if number is not None and (g.low is None or number >= g.low) and (g.high is None or number <= g.high)
            ]
        chosen = set(json.loads(text)) if self.kind == "multiple" else {text}
        return [g.text for g in self.groups if g.text in chosen]


def _questions(spec: dict) -> dict[str, tuple[str, str, list[str]]]:
    """Quota question name -> (the answer's stored question key, kind, the options a quota may name)."""
    found = {}
    if spec.get("screening"):
        found["screening"] = (questions.SCREENING, "choice", list(spec["screening"]["eligible"]))
    if spec.get("format", 1) == 2:
        from studies.format2 import questionnaire_columns

        kinds = {"single_choice": "choice", "multiple_choice": "multiple", "number": "number"}
        columns = questionnaire_columns([spec])
        for block in spec["blocks"]:
            for q in block.get("questions", []) if block["type"] == "questionnaire" else []:
                if q["type"] in kinds:
                    stored = f"{block['key']}/{q['key']}"
                    found[columns[(block["key"], q["key"])]] = (stored, kinds[q["type"]], list(q.get("options", [])))
    return found


def _listed(quota: dict, field: str) -> dict:
    return quota[field] if isinstance(quota.get(field), dict) else {}


def _bin_problems(quota: dict, kind: str, add) -> None:
    if (kind == "number") != ("bins" in quota):
        add(".bins", "a number question's quota needs bins" if kind == "number" else "only used with number questions")
    bounds = quota.get("bins", {}).items()
    spans = sorted(
        (-math.inf if lo is None else lo, math.inf if hi is None else hi, label) for label, (lo, hi) in bounds
    )
    for lo, hi, label in spans:
        if lo > hi:
            add(f".bins.{label}", "the low bound is above the high bound")
    for (_, hi, label), (lo, _, after) in pairwise(spans):
        if lo <= hi:
            add(f".bins.{after}", f"overlaps bin {label!r}")


def quota_problems(spec: dict) -> list[StudyFileProblem]:
    """The quotas' rules: the question exists and is single/multiple choice, number (with ``bins``,
    not overlapping) or screening; ``max`` or ``share`` (not both) and/or ``min``; ``share`` and
    ``min`` with ``of``, ``tolerance`` only with ``share``; the groups named are the question's
    (screening: eligible answers; number: bins); shares sum to at most 1, minimums to at most ``of``,
    no minimum above its group's cap; a question has one quota."""
    problems: list[StudyFileProblem] = []
    if not spec.get("quotas"):
        return problems
    found = _questions(spec)
    seen: set[str] = set()
    for i, quota in enumerate(spec.get("quotas", [])):
        base, name, before = f"quotas[{i}]", quota["question"], len(problems)

        def add(path: str, rule: str, base: str = base) -> None:
            problems.append(StudyFileProblem(f"{base}{path}", rule))

        if name not in found:
            known = ", ".join(found) or "none: the file has no screening, choice or number question"
            add(".question", f"{name!r} is not the screening or a choice or number questionnaire question ({known})")
            continue
        if name in seen:
            add(".question", f"{name!r} already has a quota")
        seen.add(name)
        kind = found[name][1]
        _bin_problems(quota, kind, add)
        if "max" in quota and "share" in quota:
            add("", "give either max or share")
        elif not {"max", "share", "min"} & set(quota):
            add("", "give max, share or min")
        for field in ("share", "min"):
            if field in quota and "of" not in quota:
                add(".of", f"a {field} quota needs the planned sample size 'of'")
        if "tolerance" in quota and "share" not in quota:
            add(".tolerance", "only used with share")
        if "of" in quota and not {"share", "min"} & set(quota):
            add(".of", "only used with share or min")
        groups = list(quota.get("bins", {})) if kind == "number" else found[name][2]
        allowed = "bins" if kind == "number" else "eligible answers" if name == "screening" else "options"
        for field in ("max", "share", "min"):
            for group in _listed(quota, field):
                if group not in groups:
                    add(f".{field}.{group}", f"{group!r} is not one of the {allowed}")
        if sum(quota.get("share", {}).values()) > 1 + 1e-9:
            add(".share", "the shares add up to more than 1")
        if "min" in quota and "of" in quota and len(problems) == before:
            groups_made = _quota(quota, found[name])[1]
            if sum(g.minimum for g in groups_made) > quota["of"]:
                add(".min", "the minimums add up to more than of")
            for group in groups_made:
                if group.cap is not None and group.minimum > group.cap:
                    add(f".min.{group.text}", f"above the group's cap ({group.cap})")
    return problems


def _quota(quota: dict, found: tuple[str, str, list[str]]) -> tuple[str, list[QuotaGroup]]:
    """(kind, groups) of one quota entry."""
    stored, kind, options = found
    names = list(quota.get("bins", {})) if kind == "number" else options
    if "share" in quota:
        tolerance = quota.get("tolerance", DEFAULT_TOLERANCE)
        caps = {o: math.floor((p + tolerance) * quota["of"] + 1e-9) for o, p in quota["share"].items()}
    elif "max" in quota:
        caps = dict(quota["max"]) if isinstance(quota["max"], dict) else dict.fromkeys(names, quota["max"])
    else:
        caps = {}
    least = quota.get("min", {})
    minimums = dict(least) if isinstance(least, dict) else dict.fromkeys(names, least)
    bins = quota.get("bins", {})
    groups = [
        QuotaGroup(quota["question"], stored, g, caps.get(g), minimums.get(g, 0), *bins.get(g, (None, None)))
        for g in names
        if g in caps or g in minimums
    ]
    return kind, groups


def quotas(spec: dict) -> list[Quota]:
    """Every quota of a validated study file, in file order."""
    found = _questions(spec)
    out = []
    for quota in spec.get("quotas", []):
        kind, groups = _quota(quota, found[quota["question"]])
        message = quota.get("message", "")  # "": the default, in the participant's language (quota_message)
        out.append(Quota(quota["question"], groups[0].question, kind, tuple(groups), quota.get("of"), message))
    return out


def quota_groups(spec: dict) -> list[QuotaGroup]:
    """Every group of every quota of a validated study file, in file order."""
    return [group for quota in quotas(spec) for group in quota.groups]


def admission(quota: Quota, counts: dict[str, int], answered: int, chosen: list[str]) -> str:
    """Why a newcomer whose answer places them in the groups ``chosen`` is screened out ('' if admitted),
    given each group's members ``counts`` and the ``answered`` members who answered the question.

    Caps: a group in ``chosen`` already holding its cap screens out (reason ``question = group``).
    Minimums (quotas with ``min``): with R = of - answered places left and the shortfall after the
    newcomer D' = sum over groups g of max(0, min_g - counts_g - [g in chosen]), the newcomer is
    admitted only if D' <= R - 1, i.e. the places left after them still cover every other group's
    minimum (reason ``question: minimums``). So once D = R, only members of groups below their
    minimum get in; D <= R holds after every admission (it holds at the start as the minimums sum
    to at most ``of``), so every minimum stays reachable, and the quota admits at most ``of``."""
    for group in quota.groups:
        if group.text in chosen and group.cap is not None and counts[group.text] >= group.cap:
            return f"{quota.label} = {group.text}"
    if quota.of is not None and any(g.minimum for g in quota.groups):
        shortfall = sum(max(0, g.minimum - counts[g.text] - (g.text in chosen)) for g in quota.groups)
        if shortfall > quota.of - answered - 1:
            return f"{quota.label}: {MINIMUMS}"
    return ""


def quota_message(spec: dict, reason: str) -> str:
    """The screened-out page's text for a participant screened out for ``reason`` (``admission``): the
    quota's own message (``spec``: the file in the participant's language, ``translation.localized``),
    else the default in the participant's language (the platform's catalogue)."""
    for quota in quotas(spec):
        if reason.startswith((f"{quota.label} = ", f"{quota.label}: ")):
            return quota.message or gettext(DEFAULT_MESSAGE)
    return gettext(DEFAULT_MESSAGE)


def planned_group_sizes(spec: dict, n: int) -> dict[str, float]:
    """Each quota group's size in a sample of ``n`` (``question = group``): its share of n (share
    quotas) or as many as its cap allows (max quotas: the most it can hold; min only: its minimum)."""
    sizes = {}
    shares = {(q["question"], o): p for q in spec.get("quotas", []) for o, p in q.get("share", {}).items()}
    for group in quota_groups(spec):
        if group.cap is None:
            sizes[f"{group.label} = {group.text}"] = float(group.minimum)
            continue
        planned = shares.get((group.label, group.text), 1.0) * n
        sizes[f"{group.label} = {group.text}"] = min(planned, group.cap)
    return sizes
