"""Where completed participants' answer-quality verdicts (``research.quality_verdicts``) are written: when
the participant completes (:func:`store_completed_verdict`, answering
:data:`participation.services.participant_completed` after the completing page's transaction), and by
``manage.py backfill_quality_verdicts`` (:func:`backfill_verdicts`) for those without a current one: the
participants of a study copied or imported without their verdicts, and every participant of a version
whose file was replaced or after :data:`research.quality_verdicts.QUALITY_REVISION` was raised. The
researcher's views only read them.

A stored verdict is the participant's own rules (their pages, answers and attention checks, final once
they completed): no other participant changes it. The rules that compare participants (``duplicate``: a
near-duplicate free text; ``burst``: arrivals from one address range) are evaluated on every look at the
study (``research.quality_evidence.study_comparisons``), so a participant who completes later can add a
``duplicate`` or ``burst`` flag to an earlier one, and a deleted participant can remove one, without any
stored verdict being rewritten."""

from collections.abc import Callable, Iterable

from django.db import transaction

from participation.models import Participant
from research.quality_evidence import assess_own
from research.quality_verdicts import held_current
from studies.models import Study
from studies.study_facts import study_facts

BATCH = 5000  # participants assessed per step of the backfill (their answers and page visits read at once)


def store_completed_verdict(sender, *, participant_id: int, study_id: int, condition_id: int | None, **kwargs) -> None:
    """Assess the participant who just completed on their own pages and answers and store the verdict: three
    queries (their page visits, their numeric answers, the upsert) in one transaction, the study file from the
    process's cache."""
    facts = study_facts(study_id, condition_id)
    row = (participant_id, study_id, Participant.Status.COMPLETED)
    with transaction.atomic():  # one transaction: its reads' cursors are not held past it, one commit
        assess_own({study_id: facts}, [row], Participant.objects.filter(pk=participant_id))


def missing_verdicts(studies: Iterable[Study]) -> list[tuple[int, int, str]]:
    """(id, study version id, status) of the completed participants of ``studies`` without a verdict under
    their version's current basis (none stored, or a stale one), by id."""
    studies = list(studies)
    completed = Participant.objects.filter(study__in=studies, status=Participant.Status.COMPLETED)
    rows = completed.exclude(held_current(studies)).order_by("pk").values_list("pk", "study_id", "status")
    return list(rows)


def backfill_verdicts(studies: Iterable[Study], *, progress: Callable[[int, int], None] | None = None) -> int:
    """Assess and store the missing or stale verdicts of the completed participants of ``studies`` in
    batches of :data:`BATCH` (``progress(done, total)`` after each); returns how many. Idempotent: a second
    call finds none missing."""
    studies = list(studies)
    missing = missing_verdicts(studies)
    versions = {s.pk: s for s in studies}
    for start in range(0, len(missing), BATCH):
        assess_own(versions, missing[start : start + BATCH], None)
        if progress is not None:
            progress(min(start + BATCH, len(missing)), len(missing))
    return len(missing)
