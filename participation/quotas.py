"""Quotas by stakeholder group at the participant's page (``studies.quotas`` has the rules).

When a page's answers place a participant in a capped group, ``quota_full`` runs inside the
page's transaction (``participation.services.page_submit``): it locks the study's first version row
(``SELECT .. FOR UPDATE``), so such submissions of one study run one at a time, counts the group's
members and, if the group already holds its cap, the page screens the participant out (status
``screened_out``: the screened-out outcome, its Prolific code and message). The count is read after
the lock, so it includes every earlier member's committed answer: simultaneous arrivals never
push a group over its cap. Members are the participants who gave the group's answer and are
active, timed out or completed, pilots left out (pilots neither count nor are screened out by a
quota); a withdrawal (answers deleted) frees the place.
"""

from collections.abc import Iterable

from participation.models import Answer, Participant
from studies.models import Study
from studies.quotas import QuotaGroup, quota_groups
from tasks.base import AnswerInput

COUNTED = (Participant.Status.ACTIVE, Participant.Status.TIMED_OUT, Participant.Status.COMPLETED)


def members(slug: str, groups: Iterable[QuotaGroup]) -> dict[tuple[str, str], int]:
    """(stored question, answer) -> the group's members, over every version of the study."""
    groups = list(groups)
    rows = (
        Answer.objects.filter(
            participant__study__slug=slug,
            participant__status__in=COUNTED,
            participant__pilot=False,
            question__in={g.question for g in groups},
            text__in={g.text for g in groups},
        )
        .values_list("question", "text")
        .order_by()
    )
    counts = dict.fromkeys(((g.question, g.text) for g in groups), 0)
    for key in rows:
        if key in counts:
            counts[key] += 1
    return counts


def quota_full(*, slug: str, spec: dict, participant_id: int, answers: list[AnswerInput]) -> bool:
    """Whether ``answers`` place the participant in a group that is already full. Call inside the
    transaction that saves them: it takes the study's quota lock (held until that transaction ends)."""
    if not spec.get("quotas"):
        return False
    given = {(a.question, a.text) for a in answers}
    groups = [g for g in quota_groups(spec) if (g.question, g.text) in given]
    if not groups or Participant.objects.filter(pk=participant_id, pilot=True).exists():
        return False
    first = Study.objects.filter(slug=slug).order_by("version").values_list("pk", flat=True)[:1]
    list(Study.objects.select_for_update().filter(pk__in=list(first)).values_list("pk", flat=True))
    counts = members(slug, groups)
    return any(counts[(g.question, g.text)] >= g.cap for g in groups)
