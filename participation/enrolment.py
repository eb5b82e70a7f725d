"""What never changes about a consented participant: their study version, condition and plan.

A participant's plan is fixed at consent, so the page-submission path reads it from a per-process
cache instead of the database; whether the participant may still answer a page (status, position)
is always decided by the database, in the submission's own UPDATE.
"""

from dataclasses import dataclass, field
from datetime import datetime

from core.caching import BoundedCache, json_bytes
from participation.models import Participant
from tasks.page_index import Page


@dataclass(frozen=True)
class Enrolment:
    participant_id: int
    study_id: int
    condition_id: int
    plan: list[Page]
    places: dict[str, int] = field(repr=False)  # page key -> 0-based position in the plan
    arrived_at: datetime | None = None  # when the study's time limit started to run


def enrolment_of(participant: Participant) -> Enrolment | None:
    """The enrolment of a participant row as read (None before consent)."""
    if not participant.plan or participant.condition_id is None:
        return None
    return Enrolment(
        participant_id=participant.pk,
        study_id=participant.study_id,
        condition_id=participant.condition_id,
        plan=participant.plan,
        places={page["key"]: i for i, page in enumerate(participant.plan)},
        arrived_at=participant.arrived_at,
    )


# At most 20,000 participants and 128 MB per worker (the effort demo's 44-page plan: about 27 KB).
_CACHE: BoundedCache[Enrolment] = BoundedCache(
    size=20_000, max_bytes=128 * 1024 * 1024, weigh=lambda enrolment: json_bytes(enrolment.plan)
)


def cached_enrolment(participant_id: int) -> Enrolment | None:
    """The participant's enrolment, read from the database once per process (None, and not
    cached, when there is no such participant or they have not consented)."""
    enrolment = _CACHE.get(participant_id)
    if enrolment is None:
        participant = Participant.objects.filter(pk=participant_id).first()
        enrolment = enrolment_of(participant) if participant is not None else None
        if enrolment is not None:
            _CACHE.put(participant_id, enrolment)
    return enrolment
