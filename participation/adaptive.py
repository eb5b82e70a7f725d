"""Adaptive assignment (``assignment: {adaptive: {...}}`` on a ``choose``, ``pair_comparable`` or ``triplet``
block): each participant's next item is chosen, when they reach its page, from the current fit of the
block's answers (the task type's ``adaptive``: its design, ``analysis.adaptive_design``, and its refit).

A participant's plan holds, for an adaptive block, ``per_participant`` *slots* (pages ``<block>/#<slot>``
without an item). When the participant reaches a slot (its page is shown, or the previous page is saved
and the slot comes next), :func:`slot_item` decides its item once, stores the decision and reuses it
ever after (a reload, a second tab, the export and the integrity check all see the same item).

Decision. A block's participants are decided in ``STRIPES`` independent stripes (participant id modulo
``STRIPES``), so that simultaneous participants of different stripes do not wait for each other. The
candidates are the block's items the participant has not been given, in an order drawn from
``random.Random("<study seed>:<block>:<stripe>:<sequence>")`` (``sequence`` numbers the stripe's
decisions 0, 1, ...); at most ``candidates`` of them are scored (with a fit the first ones, without
one the least-assigned ones) and the first with the highest score wins:

* no fit yet (the balanced fallback): score = -(times the item was assigned so far), so the
  least-assigned items go first;
* with a fit (the design's parameters and their covariance: the subjects' strengths for ``choose``, the
  learned metric's per-column weights for ``pair_comparable`` and ``triplet``): the first-order drop in
  the sum of the parameters' standard deviations by one more answer on the item
  (``analysis.adaptive_design``, which gives the formulas and their sources).

Scores use only the stored fit and the stripe's decisions made since it (plain Python arithmetic, no numpy),
so a decision is reproducible from what is stored: :func:`adaptive_replay` recomputes every decision
of a block from its stored fits and reports those that differ.

Concurrency: a decision runs in one transaction that first locks its stripe's ``AdaptiveStripe`` row
(``SELECT .. FOR UPDATE``): simultaneous participants of a stripe are decided one after the other, each
seeing the counts and information of the ones before (the balanced fallback balances each stripe, so
the block's items stay within ``STRIPES`` assignments of each other); two requests of one participant
for one slot are settled by the unique (participant, block, slot) constraint (the second reads the
first's decision). On PostgreSQL the decision commits with ``synchronous_commit`` off (it does not wait for the disk):
a decision lost in a crash is simply made again, and one that an answer was given to is durable with
that answer (the WAL is flushed in order). Refits: each saved answer on a slot page adds one to the
state's ``answers``; when ``refit_every`` answers have arrived since the last refit started, one refit is
queued (:data:`refit_wanted`, which the ``runs`` app answers with an ``adaptive_refit`` job, in the job
worker: ``runs.adaptive``).
"""

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, connection, transaction
from django.dispatch import Signal
from django.utils import timezone

from analysis.adaptive_design import DESIGNS, Design, Fit, next_item, record
from core.caching import BoundedCache
from participation.models import AdaptiveDecision, AdaptiveFit, AdaptiveState, AdaptiveStripe
from participation.sql import execute_together, insert_statement, update_statement
from tasks import block_task
from tasks.page_index import Page

if TYPE_CHECKING:  # participation.pages imports the services, which import this module
    from participation.pages import ContentIndex

DEFAULT_REFIT_EVERY = 20  # answers between refits
DEFAULT_CANDIDATES = 50  # items scored per decision, at most
STRIPES = 8  # a block's participants are decided in this many independent stripes (participant id modulo)

# Sent (after the answer's transaction commits) with study_id and block when a refit is due.
refit_wanted = Signal()


@dataclass(frozen=True)
class AdaptiveOptions:
    refit_every: int
    candidates: int


def adaptive_options(block: Mapping[str, Any]) -> AdaptiveOptions | None:
    """The block's ``assignment.adaptive`` options with their defaults; None when the block is not adaptive."""
    options = block.get("assignment", {}).get("adaptive")
    if options is None:
        return None
    return AdaptiveOptions(
        options.get("refit_every", DEFAULT_REFIT_EVERY), options.get("candidates", DEFAULT_CANDIDATES)
    )


_FITS: BoundedCache[Fit] = BoundedCache(size=256)  # a stored fit never changes
_GIVEN: BoundedCache[dict[int, str]] = BoundedCache(size=100_000)  # (participant, block) -> {slot: item}
_STATES: BoundedCache[bool] = BoundedCache(size=4096)  # (study, block, stripe): its rows exist


def forget_decisions() -> None:
    """Forget the decided slots and stripe rows this process remembers: after a transaction that may have made
    some was rolled back (``participation.integrity``'s check of the pages participants are on)."""
    _GIVEN.clear()
    _STATES.clear()


def load_fit(fit_id: int | None) -> Fit | None:
    if fit_id is None:
        return None
    fit = _FITS.get(fit_id)
    if fit is None:
        stored = AdaptiveFit.objects.values_list("parameters", "estimate", "covariance", "vectors").get(pk=fit_id)
        fit = _FITS.put(fit_id, Fit(fit_id, *stored))
    return fit


@dataclass(frozen=True)
class BlockItems:
    """What a decision needs of the block: its items (id -> the subjects shown) in file order, the task
    type's design and the study's seed."""

    key: str
    items: dict[str, tuple[str, ...]]
    design: Design
    options: AdaptiveOptions
    seed: int


def block_items(spec: dict, content, block_key: str) -> BlockItems:
    block = content.blocks[block_key]
    items = content.subjects_by_item(block_key)
    options, task = adaptive_options(block), block_task(block)
    assert options is not None and task.adaptive is not None, f"block {block_key!r} is not adaptive"
    return BlockItems(block_key, items, DESIGNS[task.adaptive.design], options, spec.get("seed", 0))


@cache
def _stripe_sql(lock: bool) -> str:
    """The stripe's row (``lock``: ``FOR UPDATE``, PostgreSQL) with the block's current fit, one statement;
    its ``counts`` only while the block has no fit (they are read and kept up only then: ``record``)."""
    qn = connection.ops.quote_name
    stripe, state = qn(AdaptiveStripe._meta.db_table), qn(AdaptiveState._meta.db_table)
    return (
        "SELECT s.id, s.fit_id, s.decisions, s.pending, t.fit_id, CASE WHEN t.fit_id IS NULL THEN s.counts END "
        f"FROM {stripe} s JOIN {state} t ON t.study_id = s.study_id AND t.block = s.block "
        "WHERE s.study_id = %s AND s.block = %s AND s.stripe = %s"
    ) + (" FOR UPDATE OF s" if lock else "")


_DECISION_COLUMNS = (
    "study",
    "participant",
    "block",
    "slot",
    "stripe",
    "sequence",
    "fit",
    "item",
    "candidates",
    "seconds",
    "created_at",
)


def _decide(*, participant_id: int, study_id: int, slot: int, block: BlockItems, given: dict[int, str]) -> str:
    """Decide the slot's item under its stripe's lock; ``given``: the participant's decided slots -> items.
    Plain statements (``participation.sql``: the ORM's Python would cost several times the decision): lock
    the stripe reading the block's current fit, score, then update the stripe and store the decision (on
    PostgreSQL with ``synchronous_commit`` off) in one round trip (``execute_together``), and commit: while
    the stripe is locked the web worker thread waits for the database twice (each time it may then wait
    for the interpreter lock its process's other threads hold), not three times."""
    started = time.perf_counter()
    stripe = participant_id % STRIPES
    if _STATES.get((study_id, block.key, stripe)) is None:
        AdaptiveState.objects.get_or_create(study_id=study_id, block=block.key)
        AdaptiveStripe.objects.get_or_create(study_id=study_id, block=block.key, stripe=stripe)
        _STATES.put((study_id, block.key, stripe), True)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_stripe_sql(connection.features.has_select_for_update_of), [study_id, block.key, stripe])
            pk, fit_id, decisions, pending, current_fit, counts = cursor.fetchone()
            pending, counts = json.loads(pending), json.loads(counts or "{}")  # JSON text on both databases
            if fit_id != current_fit:  # a new fit: the information assigned since the old one goes
                fit_id, pending = current_fit, {}
            fit = load_fit(fit_id)
            item, scored = next_item(
                block.design,
                block.items,
                set(given.values()),
                fit,
                counts,
                pending,
                limit=block.options.candidates,
                seed=f"{block.seed}:{block.key}:{stripe}:{decisions}",
            )
            record(block.design, item, block.items[item], fit, counts, pending)
            changes = {"fit": fit_id, "decisions": decisions + 1, "pending": pending}
            if fit is None:
                changes["counts"] = counts
            row = [study_id, participant_id, block.key, slot, stripe, decisions, fit_id, item, scored]
            row += [time.perf_counter() - started, timezone.now()]
            statements = [
                update_statement(AdaptiveStripe, changes, {"id": pk}),
                insert_statement(AdaptiveDecision, _DECISION_COLUMNS, [row]),
            ]
            if connection.vendor == "postgresql":  # see the module docstring: durable with the next answer
                statements.append(("SET LOCAL synchronous_commit TO OFF", []))
            execute_together(statements)
    except IntegrityError:  # another request of this participant decided the slot at the same moment
        return AdaptiveDecision.objects.get(participant_id=participant_id, block=block.key, slot=slot).item
    return item


@cache
def _given_sql() -> str:
    table = connection.ops.quote_name(AdaptiveDecision._meta.db_table)
    return f"SELECT slot, item FROM {table} WHERE participant_id = %s AND block = %s"


def slot_item(*, participant_id: int, study_id: int, slot: int, block: BlockItems, just_reached: bool = False) -> str:
    """The item of a participant's slot: the stored decision, or a new one (see the module docstring).

    This process remembers each participant's decided slots of the block (always slots 0..m: a slot is
    reached only after the one before was answered). A slot it does not know is read from the database
    (one query, which also gives the earlier slots), except when ``just_reached`` (the page before was
    saved by this request) and it knows every earlier slot: then the slot cannot have been decided yet
    (but by a simultaneous request of the same participant, which the unique constraint settles), and
    it is decided at once. So a slot page costs at most one read and one decision."""
    key = (participant_id, block.key)
    given = _GIVEN.get(key) or {}
    if slot in given:
        return given[slot]
    if not (just_reached and len(given) == slot):
        with connection.cursor() as cursor:
            cursor.execute(_given_sql(), [participant_id, block.key])
            given = dict(cursor.fetchall())
    item = given.get(slot) or _decide(
        participant_id=participant_id, study_id=study_id, slot=slot, block=block, given=given
    )
    _GIVEN.put(key, {**given, slot: item})
    return item


def resolved_page(
    page: Page, index: "ContentIndex", *, participant_id: int, study_id: int, just_reached: bool = False
) -> Page:
    """The page with its item: a slot page of an adaptive block gets the decided item (deciding it now
    if needed); any other page is returned as it is. ``index``: the page index of the participant's
    condition (``participation.pages.ContentIndex``); ``just_reached``: the page comes next after one this
    request saved (:func:`slot_item`)."""
    if "slot" not in page:
        return page
    block = block_items(index.spec, index.content, page["block"])
    item = slot_item(
        participant_id=participant_id, study_id=study_id, slot=page["slot"], block=block, just_reached=just_reached
    )
    return {**page, "item": item}


def decided_page(page: Page, decisions: dict[tuple[str, int], str]) -> Page | None:
    """A slot page with the item of ``decisions`` ((block, slot) -> item, as stored), None when its
    item was never decided; any other page as it is."""
    if "slot" not in page:
        return page
    item = decisions.get((page["block"], page["slot"]))
    return None if item is None else {**page, "item": item}


@cache
def _count_sql() -> str:
    table = connection.ops.quote_name(AdaptiveState._meta.db_table)
    return (
        f"UPDATE {table} SET answers = answers + 1 WHERE study_id = %s AND block = %s "
        "RETURNING answers, fitted_answers, refit_queued"
    )


def adaptive_answered(*, study_id: int, block: Mapping[str, Any]) -> None:
    """Count one saved answer of an adaptive block (one statement); when ``refit_every`` have arrived since
    the last refit started and none is queued, mark one queued and send :data:`refit_wanted` once the
    answer commits. The refit itself runs in the job worker: no participant's page waits for it."""
    options = adaptive_options(block)
    assert options is not None
    with connection.cursor() as cursor:
        cursor.execute(_count_sql(), [study_id, block["key"]])
        counted = cursor.fetchone()
    if counted is None or counted[2] or counted[0] < counted[1] + options.refit_every:
        return
    due = AdaptiveState.objects.filter(study_id=study_id, block=block["key"], refit_queued=False)
    if due.update(refit_queued=True):  # of simultaneous answers that found the refit due, one queues it
        transaction.on_commit(lambda: refit_wanted.send(AdaptiveState, study_id=study_id, block=block["key"]))


def adaptive_replay(*, study_id: int, block: BlockItems) -> list[str]:
    """Recompute every stored decision of the block from its stored fit and the decisions before it
    (candidates drawn again, scored again); returns a message per decision that differs (none: all
    reproduced). The decisions of deleted participants (pilots) count for the later ones but cannot be
    checked themselves (which items their participant had is gone)."""
    given: dict[int | None, set[str]] = {}
    counts: dict[str, int] = {}
    pending: dict[str, float] = {}
    fit_id: int | None = None
    stripe, problems = None, []
    decisions = AdaptiveDecision.objects.filter(study_id=study_id, block=block.key).order_by("stripe", "sequence")
    for decision in decisions:
        if decision.stripe != stripe:
            stripe, fit_id, counts, pending = decision.stripe, None, {}, {}
        if decision.fit_id != fit_id:
            fit_id, pending = decision.fit_id, {}
        fit = load_fit(fit_id)
        mine = given.setdefault(decision.participant_id, set())
        item, scored = next_item(
            block.design,
            block.items,
            mine,
            fit,
            counts,
            pending,
            limit=block.options.candidates,
            seed=f"{block.seed}:{block.key}:{decision.stripe}:{decision.sequence}",
        )
        known = decision.participant_id is not None  # a deleted (pilot) participant's items are unknown
        if known and (scored != decision.candidates or item != decision.item):
            problems.append(
                f"decision {decision.stripe}/{decision.sequence} ({decision.block}#{decision.slot}) is not reproduced"
            )
        record(block.design, decision.item, block.items[decision.item], fit, counts, pending)
        mine.add(decision.item)
    return problems
