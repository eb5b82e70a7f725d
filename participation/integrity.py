"""Integrity check after a launch: every saved page of every participant has the answers it implies
(none lost, none duplicated; each page's task type gives its bounds, ``TaskType.answer_bounds``)
and no answer belongs to a page they have not saved, every withdrawn participant has no answers and no page visits left,
the conditions are balanced within one, and every adaptive decision is reproduced from its stored fit."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count

from participation.adaptive import adaptive_options, adaptive_replay, block_items, decided_page
from participation.models import AdaptiveDecision, Answer, PageVisit, Participant
from participation.pages import condition_index
from participation.rendering import page_content_key
from studies.content import study_content
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
    adaptive_not_reproduced: list[str] = field(default_factory=list)  # adaptive decisions that replay differently

    @property
    def ok(self) -> bool:
        return not self.wrong and not self.withdrawn_with_data and self.balanced and not self.adaptive_not_reproduced

    @property
    def balanced(self) -> bool:
        return not self.by_condition or max(self.by_condition.values()) - min(self.by_condition.values()) <= 1

    def __str__(self) -> str:
        replay = self.adaptive_not_reproduced
        return (
            f"{self.participants} participants, {self.completed} completed, answers wrong for {len(self.wrong)}; "
            f"{self.withdrawn} withdrawn, {len(self.withdrawn_with_data)} of them with answers or page visits left; "
            f"conditions {self.by_condition}; balanced within one: {self.balanced}"
            + (f"; adaptive decisions not reproduced: {len(replay)}" if replay else "")
        )


def check_integrity(slug: str, *, include_simulated: bool = True) -> IntegrityReport:
    query = Participant.objects.filter(study__slug=slug).select_related("condition")
    if not include_simulated:
        query = query.filter(simulated=False)
    people = list(query)
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
            assert p.condition is not None  # only a consented participant (who has a condition) has saved pages
            index = condition_index(study.spec, study.spec_hash, p.condition.key)
            known[key] = task_for(page).answer_bounds(page, index)
        return known[key]

    decisions: dict[int, dict[tuple[str, int], str]] = {}
    for participant_id, block, slot, item in AdaptiveDecision.objects.filter(participant__in=people).values_list(
        "participant", "block", "slot", "item"
    ):
        decisions.setdefault(participant_id, {})[(block, slot)] = item
    wrong = []
    for p in people:
        if p.status == Participant.Status.WITHDRAWN:  # checked above: nothing of theirs may remain
            continue
        stored = dict(counts.get(p.pk, {}))
        ok = True
        for planned in p.plan[: p.position]:
            page = decided_page(planned, decisions.get(p.pk, {}))
            if page is None:  # a saved adaptive page whose item was never decided
                ok = False
                continue
            low, high = bounds(p, page)
            ok &= low <= stored.pop(page["key"], 0) <= high
        if not ok or stored:  # a saved page's answers out of bounds, or answers of a page not saved
            wrong.append(str(p.pseudonym))
    consented = Counter(  # the condition balance, as assignment counts it: pilots left out
        p.condition.key
        for p in people
        if p.condition is not None and p.status in ("active", "completed") and not p.pilot
    )
    return IntegrityReport(
        len(people),
        sum(p.status == "completed" for p in people),
        wrong,
        dict(consented),
        withdrawn=len(withdrawn),
        withdrawn_with_data=withdrawn_with_data,
        adaptive_not_reproduced=_replay_adaptive(versions.values()),
    )


def _replay_adaptive(versions: Iterable[Study]) -> list[str]:
    """Every adaptive block's decisions recomputed from their stored fits (``adaptive_replay``)."""
    problems = []
    for study in versions:
        content = study_content(study.spec, study.spec_hash)
        for key, block in content.blocks.items():
            if block.get("type") == "task" and adaptive_options(block) is not None:
                items = block_items(study.spec, content, key)
                problems += [f"v{study.version} {p}" for p in adaptive_replay(study_id=study.pk, block=items)]
    return problems
