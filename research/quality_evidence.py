"""The answer-quality rules' evidence read from the database (``research.quality``): each chosen
participant's submitted pages (server clock, the load the server showed, the script's counts), numeric
answers and detection items, and, over the study's participants (every version, pilots left out), the
free texts compared for duplicates and the arrivals compared by address range (:class:`Comparisons`, made
once per export). Shared by the export, the streamed export and the dashboard.

Kept per process and study (:class:`_Memo`), so that a dashboard at 20,000 participants does not read every
answer on every view: a completed participant's own rules (their pages and answers never change once they
completed) are assessed once per version of the study file, and the comparisons are updated from the texts
and arrivals that are new since the last look (:class:`research.quality.DuplicateTexts`)."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from threading import Lock

from django.db.models import Q, QuerySet

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
    """One study's quality evidence kept between looks (see the module's docstring); ``lock`` held while
    it is read or updated."""

    own: dict[tuple[int, str], Quality] = field(default_factory=dict)  # (completed participant, file hash)
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


def study_comparisons(studies: list[Study], also: QuerySet[Participant] | None = None) -> Comparisons:
    """The :class:`Comparisons` over every non-pilot participant of ``studies`` (one study's versions) and
    ``also``, with the newest version's thresholds: the arrivals and the texts new since the last look."""
    limits = options(max(studies, key=lambda s: s.version).spec)
    chosen = Q(pk__in=also if also is not None else [])
    everyone = Participant.objects.filter(Q(study__in=studies, pilot=False) | chosen)
    arrivals = list(everyone.values_list("pk", "arrived_at", "address_range"))
    compared = {pk for pk, _, _ in arrivals}
    memo = _memo(studies)
    with memo.lock:
        matches = _duplicates(memo, studies, limits).matches(compared)
    return Comparisons(matches, burst_sizes(arrivals, limits["burst_minutes"]))


def _own_qualities(memo: _Memo, studies: list[Study], chosen: QuerySet[Participant]) -> dict[int, tuple[Quality, int]]:
    """Each participant of ``chosen`` assessed on their own pages and answers (comparisons unknown), with
    their study version's id: from the memo for completed participants assessed before under the same file, read
    (in batches of 5,000 participants) and assessed otherwise."""
    specs = {s.pk: s.spec for s in studies}
    hashes = {s.pk: s.spec_hash for s in studies}
    rows = list(chosen.values_list("pk", "study_id", "status"))
    done = Participant.Status.COMPLETED
    out: dict[int, tuple[Quality, int]] = {}
    with memo.lock:
        for pk, sid, status in rows:
            if status == done and (pk, hashes[sid]) in memo.own:
                out[pk] = (memo.own[pk, hashes[sid]], sid)
    missing = [row for row in rows if row[0] not in out]
    if len(missing) == len(rows):
        batches = [(chosen, missing)]
    else:
        parts = [missing[i : i + 5000] for i in range(0, len(missing), 5000)]
        batches = [(Participant.objects.filter(pk__in=[pk for pk, _, _ in part]), part) for part in parts]
    for source, part in batches:
        visits = _visits(source)
        numbers, detections = _answers(source)
        for pk, sid, status in part:
            evidence = Evidence(
                visits=tuple(visits.get(pk, ())),
                answers=tuple(numbers.get(pk, ())),
                detections=detected(detections.get(pk, ()), specs[sid]),
            )
            quality = assess(evidence, specs[sid])
            out[pk] = (quality, sid)
            if status == done:
                with memo.lock:
                    memo.own[pk, hashes[sid]] = quality
    return out


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
        for pk, (quality, sid) in _own_qualities(_memo(studies), studies, chosen).items()
    }


def database_flags(studies: Iterable[Study], chosen: QuerySet[Participant]) -> dict[int, tuple[set[str], dict]]:
    """Each participant of ``chosen`` with the quality rules that flag them and their study file: the flags
    of :func:`database_qualities` without building each participant's rule results anew (the dashboard)."""
    studies = list(studies)
    if not studies:
        return {}
    found = study_comparisons(studies, chosen)
    specs = {s.pk: s.spec for s in studies}
    limits = {s.pk: options(s.spec) for s in studies}
    out = {}
    for pk, (quality, sid) in _own_qualities(_memo(studies), studies, chosen).items():
        compared = comparison_flags(found.duplicates.get(pk), found.bursts.get(pk), limits[sid])
        out[pk] = (set(quality.flags) | compared, specs[sid])
    return out
