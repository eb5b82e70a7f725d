"""Per-participant answer quality from the pages' interaction signals (``participation.signals``) and
the server's clock: each rule below flags a participant or not, or is unknown when the participant's
pages carry no signals (no JavaScript); the quality score is the share of the rules that could be
evaluated that did not flag. A study excludes flagged participants from its analyses with
``quality: {exclude_if: [rule, ...]}`` (like ``attention.exclude_if_failed``); the exports show every
rule's value (``quality`` table) and the flags and score per participant (``participants`` table).

Rules (named in the study file's schema, ``studies.study_file.QUALITY_RULES``; thresholds are the study
file's ``quality`` options, defaults in ``DEFAULTS``):

- ``fast``: more than ``fast_share`` (0.5) of the submitted pages were submitted within
  ``min_seconds_per_page`` (2 s) of being shown, by the server's clock (no JavaScript needed). Speeding
  as a marker of inattentive or automated answering: Greszki, Meyer & Schoen (2015), Public Opinion
  Quarterly 79(2); Westwood (2025, PNAS) on automated respondents answering at machine speed.
- ``pasted``: at least ``min_pasted_chars`` (20) characters were pasted into text fields. Pasting into
  free text marks text written elsewhere, often by a language model (Veselovsky, Ribeiro & West 2023,
  "Artificial artificial artificial intelligence"; disabling paste halved LLM use in their follow-up).
- ``away``: focus was lost (another tab or window) on more than ``away_share`` (0.5) of the pages with
  signals: answers looked up or generated elsewhere.
- ``untyped``: a page was sent with text in its text fields but saw no key pressed and nothing pasted
  there: the text was put in by a script, not typed.
- ``hidden``, ``shibboleth``, ``copy``: one of the participant's detection items of that check
  (``tasks.detection``, which states each with its source) flagged their answer: the hidden instruction
  followed, the machine's answer to a reverse shibboleth, the sentence typed beyond the tolerance or
  pasted (the page's signals). Only for studies with such blocks; unknown until one is answered.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce

from participation.models import Answer, PageVisit
from studies.models import Study
from tasks.detection import CHECKS

DEFAULTS = {"min_seconds_per_page": 2.0, "fast_share": 0.5, "min_pasted_chars": 20, "away_share": 0.5}


@dataclass(frozen=True)
class PageCounts:
    """A participant's submitted pages, counted: ``timed`` submitted, ``fast`` of them within the
    study's floor (server clock); ``seen`` with signals, of which ``away`` lost focus, ``with_text`` were
    sent with text in text fields and ``untyped`` of those saw neither a key nor a paste there;
    ``pasted_chars`` in all. Counted by :func:`counts` in Python or by SQL (``research.dashboard``)."""

    timed: int = 0
    fast: int = 0
    seen: int = 0
    away: int = 0
    with_text: int = 0
    untyped: int = 0
    pasted_chars: int = 0


@dataclass(frozen=True)
class VisitSignals:
    """One submitted page: seconds from shown to submitted (server) and the script's counts (None:
    unknown)."""

    seconds: float | None
    focus_losses: int | None = None
    pastes: int | None = None
    pasted_chars: int | None = None
    keystrokes: int | None = None
    text_chars: int | None = None


def counts(visits: Iterable[VisitSignals], spec: dict) -> PageCounts:
    """The :class:`PageCounts` of a participant's submitted pages."""
    floor = options(spec)["min_seconds_per_page"]
    visits = list(visits)
    timed = [v.seconds for v in visits if v.seconds is not None]
    seen = [v for v in visits if v.keystrokes is not None]
    return PageCounts(
        timed=len(timed),
        fast=sum(s < floor for s in timed),
        seen=len(seen),
        away=sum(bool(v.focus_losses) for v in seen),
        with_text=sum(bool(v.text_chars) for v in seen),
        untyped=sum(bool(v.text_chars) and not v.keystrokes and not v.pastes for v in seen),
        pasted_chars=sum(v.pasted_chars or 0 for v in seen),
    )


@dataclass(frozen=True)
class RuleResult:
    rule: str
    value: float | None  # the measured share or count (None: unknown)
    threshold: float
    flagged: bool | None  # None: unknown (no signals)


@dataclass(frozen=True)
class Quality:
    rules: tuple[RuleResult, ...]

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(r.rule for r in self.rules if r.flagged)

    @property
    def score(self) -> float | None:
        """Share of the evaluable rules that did not flag (1 = no flag); None when none is evaluable."""
        known = [r for r in self.rules if r.flagged is not None]
        return sum(not r.flagged for r in known) / len(known) if known else None


def options(spec: dict) -> dict:
    """The study's quality thresholds (its ``quality`` options over ``DEFAULTS``)."""
    return {**DEFAULTS, **{k: v for k, v in spec.get("quality", {}).items() if k in DEFAULTS}}


def detection_checks(spec: dict) -> dict[str, str]:
    """Detection block key (its page's key) -> its check, for a format 2 study's detection blocks."""
    return {b["key"]: b["check"] for b in spec.get("blocks", []) if b["type"] == "detection"}


@dataclass(frozen=True)
class Detected:
    """A participant's detection items of one check: how many were ``answered`` and how many ``flagged``."""

    answered: int = 0
    flagged: int = 0


def detected(answers: Iterable[tuple[str, float | None, int | None]], spec: dict) -> dict[str, Detected]:
    """Check -> :class:`Detected` from a participant's detection answers, each (page key, stored flag,
    pastes on the page or None): an item flags when its answer did, or, for ``copy``, when its page saw
    a paste."""
    checks = detection_checks(spec)
    out: dict[str, Detected] = {}
    for page, flag, pastes in answers:
        check = checks[page]
        hit = bool(flag) or (check == "copy" and bool(pastes))
        seen = out.get(check, Detected())
        out[check] = Detected(seen.answered + 1, seen.flagged + hit)
    return out


def assess(page_counts: PageCounts, spec: dict, detections: Mapping[str, Detected] | None = None) -> Quality:
    """The participant's rule results (see the module's rules); a rule is unknown (None) when none of
    the pages it looks at carries what it needs. ``detections`` (:func:`detected`) adds a rule per check
    the study's detection blocks have."""
    limits = options(spec)
    used, items = set(detection_checks(spec).values()), []
    for check in (c for c in CHECKS if c in used):
        d = (detections or {}).get(check, Detected())
        items.append(RuleResult(check, d.flagged if d.answered else None, 1, bool(d.flagged) if d.answered else None))
    c = page_counts
    fast = c.fast / c.timed if c.timed else None
    pasted = c.pasted_chars if c.seen else None
    away = c.away / c.seen if c.seen else None
    untyped = c.untyped if c.with_text else None
    return Quality(
        (
            RuleResult("fast", fast, limits["fast_share"], None if fast is None else fast > limits["fast_share"]),
            RuleResult(
                "pasted",
                pasted,
                limits["min_pasted_chars"],
                None if pasted is None else pasted >= limits["min_pasted_chars"],
            ),
            RuleResult("away", away, limits["away_share"], None if away is None else away > limits["away_share"]),
            RuleResult("untyped", untyped, 1, None if untyped is None else untyped >= 1),
            *items,
        )
    )


# Which quality flags exclude a participant: those the study's ``quality.exclude_if`` names ("study", the
# default), none ("none": every participant kept, the sensitivity analysis's "all"), or any ("flagged": its
# "without_flagged").
EXCLUSION_MODES = ("study", "none", "flagged")


def excluded_by_quality(quality: Quality, spec: dict, mode: str = "study") -> bool:
    """Whether the participant is excluded for answer quality under ``mode`` (:data:`EXCLUSION_MODES`):
    by default when the study's ``quality.exclude_if`` names one of the participant's flags."""
    if mode not in EXCLUSION_MODES:
        raise ValueError(f"quality exclusion must be one of {list(EXCLUSION_MODES)}, got {mode!r}")
    if mode == "none":
        return False
    named = set(quality.flags) if mode == "flagged" else set(spec.get("quality", {}).get("exclude_if", ()))
    return bool(named & set(quality.flags))


def database_qualities(studies: Iterable[Study], chosen) -> dict[int, tuple[Quality, dict]]:
    """Each participant of ``chosen`` (a queryset of participants of ``studies``, the study's versions) with
    their answer quality and study file, from one aggregate query per version: the :class:`PageCounts`
    counted by the database (the dashboard and the streamed export, which build no export table)."""
    out: dict[int, tuple[Quality, dict]] = {}
    for study in studies:
        floor = timedelta(seconds=options(study.spec)["min_seconds_per_page"])
        sent = Q(visits__submitted_at__isnull=False)
        seen = sent & Q(visits__keystrokes__isnull=False)
        text = seen & Q(visits__text_chars__gt=0)
        rows = (
            chosen.filter(study=study)
            .annotate(
                timed=Count("visits", filter=sent),
                fast=Count("visits", filter=Q(visits__submitted_at__lt=F("visits__first_shown_at") + floor)),
                seen=Count("visits", filter=seen),
                away=Count("visits", filter=seen & Q(visits__focus_losses__gt=0)),
                with_text=Count("visits", filter=text),
                untyped=Count("visits", filter=text & Q(visits__keystrokes=0, visits__pastes=0)),
                pasted_chars=Coalesce(Sum("visits__pasted_chars", filter=seen), 0),
            )
            .values_list("pk", *(f.name for f in fields(PageCounts)))
        )
        found = _database_detections(study, chosen.filter(study=study))
        out |= {pk: (assess(PageCounts(*values), study.spec, found.get(pk)), study.spec) for pk, *values in rows}
    return out


def _database_detections(study: Study, chosen) -> dict[int, dict[str, Detected]]:
    """Participant -> their :func:`detected` checks, from two queries (detection answers, pastes on the
    copy pages); nothing when the study has no detection block."""
    checks = detection_checks(study.spec)
    if not checks:
        return {}
    answers = Answer.objects.filter(participant__in=chosen, measure="detection")
    copies = [key for key, check in checks.items() if check == "copy"]
    visits = PageVisit.objects.filter(participant__in=chosen, page__in=copies)
    pastes = {(pid, page): n for pid, page, n in visits.values_list("participant_id", "page", "pastes")}
    rows: dict[int, list] = {}
    for pid, page, flag in answers.values_list("participant_id", "page", "number"):
        rows.setdefault(pid, []).append((page, flag, pastes.get((pid, page))))
    return {pid: detected(found, study.spec) for pid, found in rows.items()}
