"""The answer-quality rules' evidence read from the database (``research.quality``): each chosen
participant's submitted pages (server clock, the load the server showed, the script's counts), numeric
answers and detection items, and, over the study's participants (every version, pilots left out), the
free texts compared for duplicates and the arrivals compared by address range (:class:`Comparisons`, made
once per export). Shared by the export, the streamed export and the dashboard."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from participation.models import Answer, PageVisit, Participant
from research.quality import (
    Evidence,
    ItemAnswer,
    Quality,
    VisitSignals,
    assess,
    burst_sizes,
    detected,
    duplicate_counts,
    options,
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


def _texts(studies: list[Study], everyone: QuerySet[Participant]) -> dict[int, list[str]]:
    """Participant -> their free-text answers, over the study's participants."""
    wanted = Q(pk__in=[])
    for study in studies:
        for block, question in free_text_questions(study.spec):
            wanted |= Q(participant__study=study, set_key=block, subject_key=question)
    out: dict[int, list[str]] = defaultdict(list)
    rows = Answer.objects.filter(wanted, participant__in=everyone, measure="questionnaire").exclude(text="")
    for pid, text in rows.values_list("participant_id", "text").iterator(chunk_size=5000):
        out[pid].append(text)
    return out


@dataclass(frozen=True)
class Comparisons:
    """The cross-participant evidence of a study: participant -> other participants with a (near-)duplicate
    free text, and -> arrivals from their address range within the window (``research.quality``)."""

    duplicates: dict[int, int]
    bursts: dict[int, int]


def study_comparisons(studies: list[Study], also: QuerySet[Participant] | None = None) -> Comparisons:
    """The :class:`Comparisons` over every non-pilot participant of ``studies`` (one study's versions) and
    ``also``, with the newest version's thresholds: two queries, made once per export."""
    limits = options(max(studies, key=lambda s: s.version).spec)
    everyone = Participant.objects.filter(Q(study__in=studies, pilot=False) | Q(pk__in=also if also else []))
    texts = _texts(studies, everyone)
    arrivals = everyone.values_list("pk", "arrived_at", "address_range")
    return Comparisons(
        duplicate_counts(texts, min_chars=limits["min_text_chars"], similarity=limits["near_duplicate"]),
        burst_sizes(arrivals, limits["burst_minutes"]),
    )


def database_qualities(
    studies: Iterable[Study], chosen: QuerySet[Participant], comparisons: Comparisons | None = None
) -> dict[int, tuple[Quality, dict]]:
    """Each participant of ``chosen`` (participants of ``studies``, one study's versions) with their answer
    quality and study file, from three queries and the study's :class:`Comparisons` (made here with
    ``chosen`` among the compared when not given)."""
    studies = list(studies)
    if not studies:
        return {}
    specs = {s.pk: s.spec for s in studies}
    found = comparisons or study_comparisons(studies, chosen)
    visits = _visits(chosen)
    numbers, detections = _answers(chosen)
    out = {}
    for pk, study_id in chosen.values_list("pk", "study_id"):
        spec = specs[study_id]
        evidence = Evidence(
            visits=tuple(visits.get(pk, ())),
            answers=tuple(numbers.get(pk, ())),
            detections=detected(detections.get(pk, ()), spec),
            duplicates=found.duplicates.get(pk),
            burst=found.bursts.get(pk),
        )
        out[pk] = (assess(evidence, spec), spec)
    return out
