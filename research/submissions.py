"""The list of Prolific submissions to approve, return or reject, with the reason for each.

Beside the bonus CSV (``export_bonuses``, Prolific's bulk-bonus format, unchanged), this is the
other export that carries raw Prolific ids. A Prolific submission is a participant whose link
carried Prolific's ``SESSION_ID`` or ``STUDY_ID``. Participants still taking part are not listed;
withdrawn participants cannot be (their Prolific ids were deleted at withdrawal) and are counted
in ``frame.attrs["withdrawn"]``.
"""

import pandas as pd
from django.db.models import Count, Q
from django.utils import timezone

from participation.models import Answer, Participant
from participation.outcomes import review
from participation.time_limits import time_limit

COLUMNS = ("PROLIFIC_PID", "SESSION_ID", "action", "reason")
ACTION_ORDER = {"approve": 0, "return": 1, "reject": 2}


def submissions_table(slug: str, *, include_pilot: bool = False) -> pd.DataFrame:
    """One row per decided Prolific submission of every version of ``slug``: PROLIFIC_PID,
    SESSION_ID, action (approve / return / reject) and reason (completed; failed attention checks
    n of m; timed out; screened out; declined consent), approvals first. ``attrs``: ``in_progress``
    (submissions not decided yet) and ``withdrawn``. An active participant past the study's time
    limit counts as timed out even before ``expire_participants`` has marked them."""
    people = Participant.objects.filter(study__slug=slug)
    if not include_pilot:
        people = people.filter(pilot=False)
    withdrawn = people.filter(status=Participant.Status.WITHDRAWN).count()
    prolific = people.exclude(prolific_session_id="", prolific_study_id="").select_related("study")
    rows, in_progress = [], 0
    attention = {
        pk: (answered, failed)
        for pk, answered, failed in Answer.objects.filter(participant__in=prolific, measure="attention")
        .values("participant")
        .annotate(answered=Count("id"), failed=Count("id", filter=Q(number=0)))
        .values_list("participant", "answered", "failed")
    }
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
        rows.append((p.external_id, p.prolific_session_id, decision.action, decision.reason))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame = frame.sort_values("action", key=lambda a: a.map(ACTION_ORDER), kind="stable").reset_index(drop=True)
    frame.attrs = {"in_progress": in_progress, "withdrawn": withdrawn}
    return frame
