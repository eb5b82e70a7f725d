"""A study's lifecycle: draft, pilot, live, paused, closed (``Study.Status``), the same on every
version of a slug, each change logged (``StudyStatusChange``: who, when, from, to, why).

The state decides who may *start* the study (register as a new participant):

- draft, pilot: the researcher's pilot link only;
- live: everyone with the study link (and pilot links);
- paused, closed: no one.

Participants who already started (arrived, consented, on their pages) go on and may finish in every
state: a pause or a close, by hand or by the recruitment target, never loses a participant who has
begun. Any state may follow any other (a closed study can be reopened).
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from studies.models import Study, StudyStatusChange

STATUSES: tuple[str, ...] = tuple(Study.Status.values)
STATUS_CHOICES = Study.Status.choices  # (value, label): the API names this set StudyStatusEnum (settings)
PILOT_STATES = (Study.Status.DRAFT, Study.Status.PILOT, Study.Status.LIVE)
# What each state means to the researcher (dashboard), and the button that puts the study in it.
MEANINGS: dict[str, str] = {
    Study.Status.DRAFT: "Draft: only your pilot link starts the study; the study link shows participants that it has "
    "not started yet.",
    Study.Status.PILOT: "Piloting: only your pilot link starts the study; the study link shows participants that it "
    "has not started yet.",
    Study.Status.LIVE: "Live: anyone with the study link can take part.",
    Study.Status.PAUSED: "Paused: no one new can start (the study link says it is paused); participants who already "
    "started may finish.",
    Study.Status.CLOSED: "Closed: no one new can start (the study link says it is closed); participants who already "
    "started may finish.",
}
BUTTONS: dict[str, str] = {
    Study.Status.DRAFT: "Back to draft",
    Study.Status.PILOT: "Pilot",
    Study.Status.LIVE: "Go live",
    Study.Status.PAUSED: "Pause",
    Study.Status.CLOSED: "Close study",
}


class StudyNotOpen(Exception):
    """A new participant came to a study whose state does not let them start."""

    def __init__(self, status: str):
        super().__init__(f"the study is {status}: {MEANINGS[status].split(': ', 1)[1]}")
        self.status = status


def admits(status: str, *, pilot: bool) -> bool:
    """Whether a new participant (a pilot when ``pilot``) may start a study in ``status``."""
    return status in PILOT_STATES if pilot else status == Study.Status.LIVE


def lock_study(slug: str) -> None:
    """Lock the study's first version row (``SELECT .. FOR UPDATE``) until the caller's transaction
    ends: the one lock that orders quota admissions, target closings and state changes of a slug."""
    first = Study.objects.filter(slug=slug).order_by("version").values_list("pk", flat=True)[:1]
    list(Study.objects.select_for_update().filter(pk__in=list(first)).values_list("pk", flat=True))


@transaction.atomic
def study_set_status(*, slug: str, status: str, by=None, reason: str = "", at: datetime | None = None) -> bool:
    """Put every version of ``slug`` in ``status`` and log the change (``by``: the account, None for
    the platform); returns False when the study already was in it (nothing logged). Raises
    ``ValueError`` for an unknown state and ``Study.DoesNotExist`` for an unknown slug."""
    if status not in STATUSES:
        raise ValueError(f"unknown study state {status!r}; choose one of {', '.join(STATUSES)}")
    lock_study(slug)
    latest = Study.objects.filter(slug=slug).order_by("-version")[:1].get()
    if latest.status == status:
        return False
    Study.objects.filter(slug=slug).update(status=status)
    StudyStatusChange.objects.create(
        study=latest,
        old_status=latest.status,
        new_status=status,
        changed_by=by,
        changed_at=at or timezone.now(),
        reason=reason[:200],
    )
    return True


def status_history(slug: str, limit: int = 20) -> list[StudyStatusChange]:
    """The latest changes of the study's state, newest first."""
    return list(StudyStatusChange.objects.filter(study__slug=slug).select_related("changed_by", "study")[:limit])
