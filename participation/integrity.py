"""Integrity check after a launch: every saved page of every participant has the answers it implies
(none lost, none duplicated; each page's task type gives its bounds, ``TaskType.answer_bounds``)
and no answer belongs to a page they have not saved, every withdrawn participant has no answers and no page visits left,
and the conditions are balanced within one."""

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count

from participation.models import Answer, PageVisit, Participant
from participation.pages import condition_index
from participation.rendering import page_content_key
from studies.models import Study
from tasks import task_for


@dataclass(frozen=True)
class IntegrityReport:
    participants: int
    completed: int
    wrong: list[str]
    by_condition: dict[str, int]
    withdrawn: int = 0
    withdrawn_with_data: list[str] = field(default_factory=list)  # pseudonyms with answers or visits left

    @property
    def ok(self) -> bool:
        return not self.wrong and not self.withdrawn_with_data and self.balanced

    @property
    def balanced(self) -> bool:
        return not self.by_condition or max(self.by_condition.values()) - min(self.by_condition.values()) <= 1

    def __str__(self) -> str:
        return (
            f"{self.participants} participants, {self.completed} completed, answers wrong for {len(self.wrong)}; "
            f"{self.withdrawn} withdrawn, {len(self.withdrawn_with_data)} of them with answers or page visits left; "
            f"conditions {self.by_condition}; balanced within one: {self.balanced}"
        )


def check_integrity(slug: str, *, include_simulated: bool = True) -> IntegrityReport:
    people = Participant.objects.filter(study__slug=slug).select_related("condition")
    if not include_simulated:
        people = people.filter(simulated=False)
    people = list(people)
    per_page = Answer.objects.filter(participant__in=people).values_list("participant", "page").annotate(n=Count("id"))
    counts: dict[int, dict[str, int]] = {}
    for participant_id, page, n in per_page:
        counts.setdefault(participant_id, {})[page] = n
    withdrawn = [p for p in people if p.status == Participant.Status.WITHDRAWN]
    visited = set(PageVisit.objects.filter(participant__in=withdrawn).values_list("participant", flat=True))
    withdrawn_with_data = [str(p.pseudonym) for p in withdrawn if p.pk in counts or p.pk in visited]
    versions = {study.pk: study for study in Study.objects.filter(slug=slug)}
    known: dict[tuple, tuple[int, int]] = {}  # a page's bounds, once per version, condition and page

    def bounds(p: Participant, page: dict) -> tuple[int, int]:
        key = (p.study_id, p.condition_id, page_content_key(page))
        if key not in known:
            study = versions[p.study_id]
            index = condition_index(study.spec, study.spec_hash, p.condition.key)
            known[key] = task_for(page).answer_bounds(page, index)
        return known[key]

    wrong = []
    for p in people:
        if p.status == Participant.Status.WITHDRAWN:  # checked above: nothing of theirs may remain
            continue
        stored = dict(counts.get(p.pk, {}))
        ok = True
        for page in p.plan[: p.position]:
            low, high = bounds(p, page)
            ok &= low <= stored.pop(page["key"], 0) <= high
        if not ok or stored:  # a saved page's answers out of bounds, or answers of a page not saved
            wrong.append(str(p.pseudonym))
    consented = Counter(  # the condition balance, as assignment counts it: pilots left out
        p.condition.key for p in people if p.condition_id and p.status in ("active", "completed") and not p.pilot
    )
    return IntegrityReport(
        len(people),
        sum(p.status == "completed" for p in people),
        wrong,
        dict(consented),
        withdrawn=len(withdrawn),
        withdrawn_with_data=withdrawn_with_data,
    )
