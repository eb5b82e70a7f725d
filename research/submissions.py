"""The list of Prolific submissions to approve, return or reject, with the reason for each.

Beside the bonus CSV (``export_bonuses``, Prolific's bulk-bonus format, unchanged), this is the
other export that carries raw Prolific ids. A Prolific submission is a participant whose link
carried Prolific's ``SESSION_ID`` or ``STUDY_ID``. Participants still taking part are not listed;
withdrawn participants cannot be (their Prolific ids were deleted at withdrawal) and are counted
in ``frame.attrs["withdrawn"]``. ``other_SESSION_IDs`` names the other SESSION_IDs the Prolific id
arrived with after its first arrival (``participation.models.ConflictingArrival``): the first comer
may have used someone else's id, so check both attempts on Prolific before approving.
"""

import pandas as pd
from django.db.models import Count, Q
from django.utils import timezone

from participation.models import Answer, ConflictingArrival, Participant
from participation.outcomes import review
from participation.time_limits import time_limit

COLUMNS = ("PROLIFIC_PID", "SESSION_ID", "action", "reason", "other_SESSION_IDs")
ACTION_ORDER = {"approve": 0, "return": 1, "reject": 2}


def submissions_table(slug: str, *, include_pilot: bool = False) -> pd.DataFrame:
    """One row per decided Prolific submission of every version of ``slug``: PROLIFIC_PID,
    SESSION_ID, action (approve / return / reject), reason (completed; failed attention checks
    n of m; timed out; screened out; declined consent) and other_SESSION_IDs (the id arrived with
    more than one SESSION_ID: these others, space-separated), approvals first. ``attrs``: ``in_progress``
    (submissions not decided yet) and ``withdrawn``. An active participant past the study's time
    limit counts as timed out even before ``expire_participants`` has marked them."""
    people = Participant.objects.filter(study__slug=slug)
    if not include_pilot:
        people = people.filter(pilot=False)
    withdrawn = people.filter(status=Participant.Status.WITHDRAWN).count()
    prolific = (
        people.filter(~Q(prolific_session_id="", prolific_study_id="") | Q(conflicting_arrivals__isnull=False))
        .distinct()
        .select_related("study")
    )
    rows, in_progress = [], 0
    attention = {
        pk: (answered, failed)
        for pk, answered, failed in Answer.objects.filter(participant__in=prolific, measure="attention")
        .values("participant")
        .annotate(answered=Count("id"), failed=Count("id", filter=Q(number=0)))
        .values_list("participant", "answered", "failed")
    }
    others: dict[int, list[str]] = {}
    for pk, session_id in ConflictingArrival.objects.filter(participant__in=prolific).values_list(
        "participant", "session_id"
    ):
        others.setdefault(pk, []).append(session_id)
    now = timezone.now()
    for p in prolific.order_by("arrived_at", "pk"):
        answered, failed = attention.get(p.pk, (0, 0))
        status = p.status
        if status == Participant.Status.ACTIVE and time_limit(p.study.spec).expired(p.arrived_at, now):
            status = Participant.Status.TIMED_OUT
        decision = review(p.study.spec, status, failed, answered)
        if decision is None:
            in_progress += 1
            continue
        conflicts = " ".join(others.get(p.pk, []))
        rows.append((p.external_id, p.prolific_session_id, decision.action, decision.reason, conflicts))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame = frame.sort_values("action", key=lambda a: a.map(ACTION_ORDER), kind="stable").reset_index(drop=True)
    frame.attrs = {"in_progress": in_progress, "withdrawn": withdrawn}
    return frame
