"""Integrity check after a launch: every saved page of every participant has the answers it implies
(none lost, none duplicated; each page's task type gives its bounds, ``TaskType.answer_bounds``)
and no answer belongs to a page they have not saved, every withdrawn participant has no answers and no page visits left,
the conditions are balanced within one, every adaptive decision is reproduced from its stored fit, and every
participant still taking the study can go on: their current page renders (in a transaction rolled back, so an
adaptive decision it makes is not kept)."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count
from django.http import HttpRequest
from django.utils.translation import override

from participation.adaptive import (
    adaptive_options,
    adaptive_replay,
    block_items,
    decided_page,
    forget_decisions,
    resolved_page,
)
from participation.models import AdaptiveDecision, Answer, PageVisit, Participant
from participation.pages import condition_index
from participation.rendering import page_content_key, study_page_response
from participation.time_limits import time_limit
from studies.content import study_content
from studies.models import Study
from studies.translation import localized
from tasks import task_for
from tasks.page_index import Page


@dataclass(frozen=True)
class IntegrityReport:
    participants: int
    completed: int
    wrong: list[str]
    by_condition: dict[str, int]
    withdrawn: int = 0
    withdrawn_with_data: list[str] = field(default_factory=list)  # pseudonyms with answers or visits left
    adaptive_not_reproduced: list[str] = field(default_factory=list)  # adaptive decisions that replay differently
    cannot_go_on: list[str] = field(default_factory=list)  # "pseudonym (page): error" of a page that fails

    @property
    def ok(self) -> bool:
        return (
            not self.wrong
            and not self.withdrawn_with_data
            and self.balanced
            and not self.adaptive_not_reproduced
            and not self.cannot_go_on
        )

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
            + "".join(f"\ncannot go on: {line}" for line in self.cannot_go_on)
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

    def bounds(p: Participant, page: Page) -> tuple[int, int]:
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
        cannot_go_on=_cannot_go_on(people, versions),
    )


def _cannot_go_on(people: list[Participant], versions: dict[int, Study]) -> list[str]:
    """The participants taking the study (active, or timed out in a study that lets them finish) whose current
    page fails to render as the page view renders it (the adaptive item decided if it is not yet), each as
    "pseudonym (page key): error". Each page renders in its own transaction, rolled back at once (so a stripe
    lock an adaptive decision takes is not held on while the others are checked), and this process then
    forgets the decisions and stripe rows it saw in it: nothing changes."""
    stuck = []
    for p in people:
        study = versions[p.study_id]
        going = p.status == Participant.Status.ACTIVE or (
            p.status == Participant.Status.TIMED_OUT and time_limit(study.spec).may_finish_late
        )
        if not going or p.position >= len(p.plan):
            continue
        try:
            with transaction.atomic():
                _render_current_page(p, study)
                transaction.set_rollback(True)
        except Exception as exc:  # any failure is what this check reports
            stuck.append(f"{p.pseudonym} ({p.plan[p.position]['key']}): {type(exc).__name__}: {exc}")
        finally:
            forget_decisions()
    return stuck


def _render_current_page(p: Participant, study: Study) -> None:
    """The participant's current page as the page view renders it, in their language."""
    assert p.condition is not None  # an active or timed-out participant has a condition
    spec, spec_key = localized(study.spec, study.spec_hash, p.language)
    with override(p.language):
        index = condition_index(spec, spec_key, p.condition.key)
        page = resolved_page(p.plan[p.position], index, participant_id=p.pk, study_id=p.study_id)
        study_page_response(HttpRequest(), page, index, spec_key, position=p.position, total=len(p.plan))


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
