"""The answer-quality rules' evidence read from the database (``research.quality``): each chosen
participant's submitted pages (server clock, the load the server showed, the script's counts), numeric
answers and detection items, and, over the study's participants (every version, pilots left out), the
free texts compared for duplicates and the arrivals compared by address range (:class:`Comparisons`, made
once per export). Shared by the export, the streamed export and the dashboard.

A dashboard at 20,000 participants reads no participant's answers on its views: a completed participant's
own rules (their pages and answers never change once they completed) are assessed once per version of the
study file, when they complete (``research.quality_writes``), and stored (``research.quality_verdicts``), for
every process; the near-duplicate index of the
free texts is kept per process and study (:class:`_Memo`) and brought up to date with the texts new since
the last look (:class:`research.quality.DuplicateTexts`)."""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from threading import Lock

from django.db.models import Count, Q, QuerySet

from core.caching import BoundedCache
from participation.models import Answer, PageVisit, Participant
from research.quality import (
    DuplicateTexts,
    Evidence,
    ItemAnswer,
    Quality,
    VisitSignals,
    assess,
    burst_sizes,
    comparison_flags,
    detected,
    options,
    with_comparisons,
)
from research.quality_verdicts import OwnVerdict, Version, flagged_or_unassessed, store_verdicts, stored_verdicts
from research.tables import TASK_MEASURES
from studies.models import Study

BINARY = {
    measure
    for columns in TASK_MEASURES.values()
    for measure, column in columns.items()
    if column.type == "0/1" or len(column.levels) == 2
}
_VISIT_FIELDS = (
    "participant_id",
    "first_shown_at",
    "submitted_at",
    "focus_losses",
    "pastes",
    "pasted_chars",
    "keystrokes",
    "text_chars",
    "time_on_page_ms",
    "words_shown",
    "inputs_shown",
)


def free_text_questions(spec: dict) -> set[tuple[str, str]]:
    """(block key, question key) of the study file's free-text questionnaire questions."""
    return {
        (block["key"], question["key"])
        for block in spec.get("blocks", [])
        if block["type"] == "questionnaire"
        for question in block["questions"]
        if question["type"] == "text"
    }


def _visits(chosen: QuerySet[Participant]) -> dict[int, list[VisitSignals]]:
    out: dict[int, list[VisitSignals]] = defaultdict(list)
    rows = PageVisit.objects.filter(participant__in=chosen, submitted_at__isnull=False).values_list(*_VISIT_FIELDS)
    for pid, shown, sent, *counts, on_page, words, inputs in rows.iterator(chunk_size=5000):
        blurs, pastes, pasted, keys, chars = counts
        seconds = (sent - shown).total_seconds()
        out[pid].append(VisitSignals(seconds, blurs, pastes, pasted, keys, chars, on_page, words, inputs))
    return out


def _answers(chosen: QuerySet[Participant]) -> tuple[dict, dict]:
    """Participant -> their numeric answers in saved order, and -> their detection (page, flag) pairs."""
    numbers: dict[int, list[ItemAnswer]] = defaultdict(list)
    detections: dict[int, list[tuple[str, float | None]]] = defaultdict(list)
    rows = (
        Answer.objects.filter(participant__in=chosen, number__isnull=False)
        .order_by("participant_id", "id")
        .values_list("participant_id", "page", "measure", "set_key", "subject_key", "number")
    )
    for pid, page, measure, set_key, subject, number in rows.iterator(chunk_size=5000):
        if measure == "detection":
            detections[pid].append((page, number))
        elif number is not None:  # always (the filter): for the type checker
            numbers[pid].append(ItemAnswer(measure, set_key, subject, number, measure in BINARY))
    return numbers, detections


def _text_answers(studies: list[Study]) -> QuerySet[Answer]:
    """The free-text questionnaire answers of the study's participants (every version, pilots too)."""
    wanted = Q(pk__in=[])
    for study in studies:
        for block, question in free_text_questions(study.spec):
            wanted |= Q(participant__study=study, set_key=block, subject_key=question)
    return Answer.objects.filter(wanted, measure="questionnaire").exclude(text="")


@dataclass
class _Memo:
    """One study's near-duplicate index kept between looks (see the module's docstring); ``lock`` held while
    it is read or updated."""

    texts: DuplicateTexts | None = None
    text_ids: set[int] = field(default_factory=set)
    text_limits: tuple = ()
    lock: Lock = field(default_factory=Lock)


_MEMOS: BoundedCache[_Memo] = BoundedCache(16)


def _memo(studies: list[Study]) -> _Memo:
    key = studies[0].slug
    return _MEMOS.get(key) or _MEMOS.put(key, _Memo())


def _duplicates(memo: _Memo, studies: list[Study], limits: dict) -> DuplicateTexts:
    """The memo's near-duplicate index brought up to date: the texts answered since the last look added;
    built again when a text it holds is gone (its participant deleted) or the thresholds changed."""
    wanted = (limits["min_text_chars"], limits["near_duplicate"])
    answers = _text_answers(studies)
    ids = set(answers.values_list("pk", flat=True))
    if memo.texts is None or memo.text_limits != wanted or not memo.text_ids <= ids:
        memo.texts = DuplicateTexts(min_chars=wanted[0], similarity=wanted[1])
        memo.text_ids, memo.text_limits = set(), wanted
    new = ids - memo.text_ids
    if new:
        texts: dict[int, list[str]] = defaultdict(list)
        rows = answers.filter(pk__in=sorted(new)).order_by("pk").values_list("participant_id", "text")
        for pid, text in rows.iterator(chunk_size=5000):
            texts[pid].append(text)
        memo.texts.add(texts)
        memo.text_ids |= new
    return memo.texts


@dataclass(frozen=True)
class Comparisons:
    """The cross-participant evidence of a study: participant -> other participants with a (near-)duplicate
    free text, and -> arrivals from their address range within the window (``research.quality``)."""

    duplicates: dict[int, int]
    bursts: dict[int, int]


def study_comparisons(
    studies: list[Study], also: QuerySet[Participant] | None = None, *, flagged_only: bool = False
) -> Comparisons:
    """The :class:`Comparisons` over every non-pilot participant of ``studies`` (one study's versions) and
    ``also``, with the newest version's thresholds: the arrivals and the texts new since the last look.
    ``flagged_only``: the arrivals read are only those from address ranges with at least the versions'
    smallest ``burst_size`` participants (a database aggregate), so ``bursts`` holds the participants the
    ``burst`` rule may flag, with their exact counts, and no one else."""
    limits = options(max(studies, key=lambda s: s.version).spec)
    chosen = Q(pk__in=also if also is not None else [])
    everyone = Participant.objects.filter(Q(study__in=studies, pilot=False) | chosen)
    ranged = everyone
    if flagged_only:
        least = min(options(s.spec)["burst_size"] for s in studies)
        crowded = everyone.exclude(address_range="").values("address_range").annotate(n=Count("pk"))
        ranged = everyone.filter(address_range__in=crowded.filter(n__gte=least).values("address_range"))
    arrivals = ranged.exclude(address_range="").values_list("pk", "arrived_at", "address_range")
    memo = _memo(studies)
    with memo.lock:
        texts = _duplicates(memo, studies, limits)
        # whom a match may count (not a pilot left out), read only when some texts match
        matches = texts.matches(set(everyone.values_list("pk", flat=True)) if texts.has_matches else None)
    return Comparisons(matches, burst_sizes(arrivals, limits["burst_minutes"]))


def assess_own(
    versions: Mapping[int, Version], rows: list[tuple[int, int, str]], source: QuerySet[Participant] | None
) -> dict[int, OwnVerdict]:
    """Each participant of ``rows`` (id, study version id, status) assessed on their own pages and answers
    (comparisons unknown), read in batches of 5,000 participants (or at once from ``source`` when it holds
    exactly them); the completed ones' verdicts stored (``research.quality_verdicts``)."""
    batches = (
        [(source, rows)]
        if source is not None
        else [
            (Participant.objects.filter(pk__in=[pk for pk, _, _ in part]), part)
            for part in (rows[i : i + 5000] for i in range(0, len(rows), 5000))
        ]
    )
    out: dict[int, OwnVerdict] = {}
    for participants, part in batches:
        visits = _visits(participants)
        numbers, detections = _answers(participants)
        for pk, sid, _ in part:
            spec = versions[sid].spec
            answers = tuple(numbers.get(pk, ()))
            evidence = Evidence(tuple(visits.get(pk, ())), answers, detected(detections.get(pk, ()), spec))
            failed = sum(a.measure == "attention" and a.number == 0 for a in answers)
            out[pk] = OwnVerdict(assess(evidence, spec), failed)
    completed = {pk: sid for pk, sid, status in rows if status == Participant.Status.COMPLETED}
    if completed:
        store_verdicts({pk: out[pk] for pk in completed}, {pk: versions[sid] for pk, sid in completed.items()})
    return out


def _own_qualities(studies: list[Study], chosen: QuerySet[Participant]) -> dict[int, tuple[Quality, int]]:
    """Each participant of ``chosen`` assessed on their own pages and answers (comparisons unknown), with
    their study version's id: the stored verdict of a completed participant, assessed otherwise."""
    versions = {s.pk: s for s in studies}
    rows = list(chosen.values_list("pk", "study_id", "status"))
    stored = stored_verdicts(studies, chosen.filter(status=Participant.Status.COMPLETED))
    missing = [row for row in rows if row[0] not in stored]
    assessed = assess_own(versions, missing, chosen if len(missing) == len(rows) else None) if missing else {}
    return {pk: ((stored.get(pk) or assessed[pk]).quality, sid) for pk, sid, _ in rows}


def database_qualities(
    studies: Iterable[Study], chosen: QuerySet[Participant], comparisons: Comparisons | None = None
) -> dict[int, tuple[Quality, dict]]:
    """Each participant of ``chosen`` (participants of ``studies``, one study's versions) with their answer
    quality and study file: their own rules (:func:`_own_qualities`) and the study's :class:`Comparisons`
    (made here with ``chosen`` among the compared when not given)."""
    studies = list(studies)
    if not studies:
        return {}
    found = comparisons or study_comparisons(studies, chosen)
    specs = {s.pk: s.spec for s in studies}
    return {
        pk: (with_comparisons(quality, found.duplicates.get(pk), found.bursts.get(pk), specs[sid]), specs[sid])
        for pk, (quality, sid) in _own_qualities(studies, chosen).items()
    }


@dataclass(frozen=True)
class Flagged:
    """A completed participant some quality rule flags or who failed an attention check: their flags (own
    and comparisons), failed attention checks and study file."""

    flags: frozenset[str]
    attention_failed: int
    spec: dict


OwnFlags = dict[int, tuple[int, list[str], int]]  # participant -> (study version id, own flags, failed checks)


def completed_own_flags(studies: Iterable[Study], completed: QuerySet[Participant]) -> OwnFlags:
    """The participants of ``completed`` (completed participants of ``studies``, one study's versions) whose own
    rules flag them or who failed an attention check: one query over the stored verdicts, and the evidence read
    only of those without a current verdict (then stored). They change only as participants complete or
    withdraw, or a version's file changes."""
    studies = list(studies)
    versions = {s.pk: s for s in studies}
    own, missing = flagged_or_unassessed(studies, completed)
    version_of = {pk: sid for pk, sid, _ in missing}
    for pk, verdict in (assess_own(versions, missing, None) if missing else {}).items():
        if verdict.quality.flags or verdict.attention_failed:
            own[pk] = (version_of[pk], list(verdict.quality.flags), verdict.attention_failed)
    return own


def completed_flags(
    studies: Iterable[Study], completed: QuerySet[Participant], own: OwnFlags | None = None
) -> dict[int, Flagged]:
    """The participants of ``completed`` (completed participants of ``studies``, one study's versions) that a
    quality rule flags or who failed an attention check, and no others (the dashboard): their own flags
    (``own``, else :func:`completed_own_flags`) and the comparisons with the study's other participants, in a
    handful of queries whatever the number of participants."""
    studies = list(studies)
    if not studies:
        return {}
    versions = {s.pk: s for s in studies}
    own = completed_own_flags(studies, completed) if own is None else own
    found = study_comparisons(studies, completed, flagged_only=True)
    limits = {s.pk: options(s.spec) for s in studies}
    compared = {pk for pk, n in found.duplicates.items() if n} | set(found.bursts)
    study_of = dict(completed.filter(pk__in=sorted(compared - set(own))).values_list("pk", "study_id"))
    study_of.update({pk: sid for pk, (sid, _, _) in own.items()})
    out = {}
    for pk, sid in study_of.items():
        _, mine, failed = own.get(pk, (sid, [], 0))
        flags = frozenset(mine) | comparison_flags(found.duplicates.get(pk), found.bursts.get(pk), limits[sid])
        if flags or failed:
            out[pk] = Flagged(flags, failed, versions[sid].spec)
    return out
