"""The study file's recruitment target (``recruitment.target``): the study closes
(``studies.lifecycle``) when that many participants have completed it, pilots not counted, over
every version.

``target_check`` runs in the transaction of the page that completes a participant
(``participation.services.page_submit``): it takes the study's lock (``studies.lifecycle.lock_study``,
the quotas' lock), so simultaneous completions count one at a time and each sees every earlier one
committed; the completion that reaches the target closes the study, once. No one new can start a
closed study; participants already in it may still finish (they are counted on the dashboard).
"""

from django.db.models import Q

from participation.models import Participant
from studies.lifecycle import lock_study, study_set_status
from studies.models import Study


def completed_count(slug: str) -> int:
    """Participants who completed the study (any version), pilots left out."""
    return Participant.objects.filter(study__slug=slug, status=Participant.Status.COMPLETED, pilot=False).count()


def in_progress_count(slug: str) -> int:
    """Participants who started and may still finish (arrived, active or timed out), pilots left out."""
    going_on = Q(status__in=(Participant.Status.ARRIVED, Participant.Status.ACTIVE, Participant.Status.TIMED_OUT))
    return Participant.objects.filter(going_on, study__slug=slug, pilot=False).count()


def recruitment_target(spec: dict) -> int | None:
    return (spec.get("recruitment") or {}).get("target")


def target_check(*, slug: str, spec: dict) -> bool:
    """Close the study when its completed participants reach the file's target; returns whether this
    call closed it. Call inside the transaction that completed a participant."""
    target = recruitment_target(spec)
    if target is None:
        return False
    lock_study(slug)
    if completed_count(slug) < target:
        return False
    if Study.objects.filter(slug=slug).order_by("-version").values_list("status", flat=True)[0] == Study.Status.CLOSED:
        return False
    return study_set_status(
        slug=slug, status=Study.Status.CLOSED, reason=f"recruitment target of {target} completed participants reached"
    )
