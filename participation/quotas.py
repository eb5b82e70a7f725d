"""Quotas by stakeholder group at the participant's page (``studies.quotas`` has the rules).

When a page answers a quota's question, ``quota_check`` runs inside the page's transaction
(``participation.services.page_submit``): it locks the study's first version row
(``SELECT .. FOR UPDATE``), so such submissions of one study run one at a time, counts each group's
members and applies ``studies.quotas.admission`` (caps, then minimums); a participant it refuses is
screened out (status ``screened_out``, the quota's message, the screened-out Prolific code) and the
reason is stored in ``Participant.quota_screened_out``. The counts are read after the lock, so they
include every earlier member's committed answer: simultaneous arrivals never push a group over its
cap nor past the places other groups' minimums need. Members are the participants who gave the
group's answer (multiple choice: each option chosen; number: the bin holding it) and are active,
timed out or completed, pilots left out (pilots neither count nor are screened out by a quota); a
withdrawal (answers deleted) frees the place.
"""

from participation.models import Answer, Participant
from studies.lifecycle import lock_study
from studies.quotas import Quota, admission, quotas
from tasks.base import AnswerInput

COUNTED = (Participant.Status.ACTIVE, Participant.Status.TIMED_OUT, Participant.Status.COMPLETED)


def tally(slug: str, asked: list[Quota]) -> dict[str, tuple[dict[str, int], int]]:
    """Quota label -> (group -> members, members who answered the question), over every version."""
    rows = (
        Answer.objects.filter(
            participant__study__slug=slug,
            participant__status__in=COUNTED,
            participant__pilot=False,
            question__in={q.question for q in asked},
        )
        .values_list("question", "text", "number")
        .order_by()
    )
    by_question = {q.question: q for q in asked}
    counts = {q.label: dict.fromkeys((g.text for g in q.groups), 0) for q in asked}
    answered = dict.fromkeys(counts, 0)
    for question, text, number in rows:
        quota = by_question[question]
        answered[quota.label] += 1
        for group in quota.groups_of(text, number):
            counts[quota.label][group] += 1
    return {label: (counts[label], answered[label]) for label in counts}


def quota_check(*, slug: str, spec: dict, participant_id: int, answers: list[AnswerInput]) -> str:
    """Why ``answers`` screen the participant out by a quota ('' if they do not). Call inside the
    transaction that saves them: it takes the study's quota lock (held until that transaction ends)."""
    if not spec.get("quotas"):
        return ""
    given = {a.question: a for a in answers}
    asked = [q for q in quotas(spec) if q.question in given]
    if not asked or Participant.objects.filter(pk=participant_id, pilot=True).exists():
        return ""
    lock_study(slug)
    counts = tally(slug, asked)
    for quota in asked:
        answer = given[quota.question]
        reason = admission(quota, *counts[quota.label], quota.groups_of(answer.text, answer.number))
        if reason:
            return reason
    return ""
