"""Who gets which condition and which items: assignment by ticket into a pre-drawn balanced sequence.

Every consenting (non-pilot) participant of a study version takes a *ticket*, the next free place
0, 1, 2, ... of the version's assignment sequence, and the ticket alone fixes their condition and,
for each task block with ``assignment.per_participant: M``, the M items they judge:

* Conditions. The sequence runs in rounds; round r holds every condition whose ``cap`` exceeds r
  (no cap: every round), in an order drawn from the study's ``seed`` and r. So after any number
  of tickets the conditions' counts differ by at most one, a condition stops at its cap, and when
  every condition is capped the sequence ends: the study is full.
* Items. The participants whose conditions show a block are numbered by their tickets (their
  *rank* in the block). Rank k judges positions k*m .. (k+1)*m - 1 of the block's item sequence:
  rounds of permutations of the pool drawn from the seed and the block key, so that after n
  participants every item has floor(n*m/N) or one more judgements (least-judged first). A window
  that spans two rounds swaps any item it would see twice for the next one of the new round that it
  does not hold (each round stays a permutation, so the balance holds). With
  ``stratify_by`` every value of the column has its own sequence and m = M / (number of values),
  so every participant gets exactly m items of each value.

Drop-outs: a ticket counts while its holder counts (completed, or active within the study's time
limit, or consenting at this moment); the ticket of a participant who stopped counting (timed out,
past the time limit, withdrawn, screened out, declined) goes to the next consenting participant,
who thereby gets the same condition and items and restores the balance (``participation.services``).

Concurrency: the ticket is the version's counter (``Study.tickets_issued``), incremented in one
short transaction that also gives the participant the place: simultaneous consents queue only on
that one row update, none fails or retries, and a rolled-back consent returns its place (no gaps).
The plan is built outside any transaction. Same study file + same ticket + same participant seed
-> same plan.
"""

import zlib
from collections.abc import Iterable

import numpy as np

from studies.content import StudyContent
from tasks import block_task
from tasks.page_index import Page
from tasks.questions import page_key


class StudyFull(Exception):
    """Every condition of the study version has reached its cap."""


def _caps(spec: dict) -> list[int | None]:
    return [condition.get("cap") for condition in spec["conditions"]]


def _segments(caps: list[int | None]) -> Iterable[tuple[int, int | None, list[int]]]:
    """The rounds in stretches with the same members: (first round, end round or None, member indexes)."""
    start = 0
    for end in [*sorted({c for c in caps if c is not None}), None]:
        members = [i for i, cap in enumerate(caps) if cap is None or cap > start]
        if not members:
            return
        yield start, end, members
        if end is None:
            return
        start = end


def _round_order(spec: dict, round_index: int, members: list[int]) -> list[int]:
    rng = np.random.default_rng([spec.get("seed", 0), 0, round_index])
    return [members[i] for i in rng.permutation(len(members))]


def capacity(spec: dict) -> int | None:
    """How many tickets the version has: the sum of the caps (None when a condition has no cap)."""
    total = 0
    for start, end, members in _segments(_caps(spec)):
        if end is None:
            return None
        total += (end - start) * len(members)
    return total


def _locate(spec: dict, ticket: int) -> tuple[int, int, list[int]]:
    """The round holding ``ticket``, its first ticket, and its order of condition indexes."""
    first = 0
    for start, end, members in _segments(_caps(spec)):
        span = None if end is None else (end - start) * len(members)
        if span is None or ticket < first + span:
            offset = (ticket - first) // len(members)
            return start + offset, first + offset * len(members), _round_order(spec, start + offset, members)
        first += span
    raise StudyFull(f"study {spec['slug']!r} is full: every condition has reached its cap")


def condition_for(spec: dict, ticket: int) -> str:
    """The condition key of a ticket (raises StudyFull past the last place)."""
    _, first, order = _locate(spec, ticket)
    return spec["conditions"][order[ticket - first]]["key"]


def rank_in(spec: dict, ticket: int, condition_keys: Iterable[str]) -> int:
    """How many earlier tickets went to one of ``condition_keys`` (a block's conditions)."""
    keys = set(condition_keys)
    wanted = {i for i, c in enumerate(spec["conditions"]) if c["key"] in keys}
    rank, first = 0, 0
    for start, end, members in _segments(_caps(spec)):
        per_round = len(wanted.intersection(members))
        rounds = None if end is None else end - start
        if rounds is None or ticket < first + rounds * len(members):
            full_rounds = (ticket - first) // len(members)
            order = _round_order(spec, start + full_rounds, members)
            before = order[: ticket - first - full_rounds * len(members)]
            return rank + full_rounds * per_round + sum(i in wanted for i in before)
        rank += rounds * per_round
        first += rounds * len(members)
    raise StudyFull(f"study {spec['slug']!r} is full: every condition has reached its cap")


def _window(spec: dict, stream: int, stratum: int, items: list[str], per: int, rank: int) -> list[str]:
    """Positions rank*per .. (rank+1)*per - 1 of a stratum's item sequence (see the module docstring).

    The rounds are drawn as index lists and only the window's items are looked up: a round's swaps
    need only the previous round's tail (per <= len(items), checked by the validator)."""
    n = len(items)
    rng = np.random.default_rng([spec.get("seed", 0), 1, stream, stratum])
    first, end = rank * per, (rank + 1) * per
    previous: list[int] = []
    chosen: list[str] = []
    for round_start in range(0, end, n):
        order = rng.permutation(n).tolist()
        window_start = (round_start // per) * per
        if 0 < round_start and window_start < round_start:  # a window spans the boundary
            held = set(previous[window_start - round_start :])
            head = min(window_start + per, round_start + n) - round_start
            spare = (j for j in range(head, n) if order[j] not in held)
            for i in range(head):
                if order[i] in held:
                    j = next(spare)
                    order[i], order[j] = order[j], order[i]
        if round_start + n > first:
            chosen += [items[i] for i in order[max(first - round_start, 0) : end - round_start]]
        previous = order
    return chosen


def _block_number(key: str) -> int:
    return zlib.crc32(key.encode())


def items_for(spec: dict, content: StudyContent, block_key: str, rank: int) -> list[str]:
    """The items of a sampled block for the participant of this rank, stratum by stratum."""
    block = content.blocks[block_key]
    strata = content.strata(block_key)
    per = block["assignment"]["per_participant"] // len(strata)
    chosen: list[str] = []
    for index, value in enumerate(sorted(strata)):
        chosen += _window(spec, _block_number(block_key), index, strata[value], per, rank)
    return chosen


def item_choice(spec: dict, content: StudyContent, ticket: int) -> dict[str, list[str]]:
    """The chosen items of every sampled task block the ticket's condition shows."""
    condition = condition_for(spec, ticket)
    choice = {}
    for block in spec["blocks"]:
        if block["type"] != "task" or condition not in block["conditions"]:
            continue
        if "per_participant" in block["assignment"] and "adaptive" not in block["assignment"]:
            choice[block["key"]] = items_for(spec, content, block["key"], rank_in(spec, ticket, block["conditions"]))
    return choice


def _ordered(block: dict, items: list[str], rng: np.random.Generator) -> list[str]:
    """The block's items in this participant's order: ``order.fixed`` items at their positions
    (clamped to the block's length; fixed items not chosen for the participant are left out), the
    others shuffled (or in file order with ``randomise: false``) into the remaining places."""
    fixed = {item: min(pos, len(items) - 1) for item, pos in block["order"]["fixed"].items() if item in items}
    rest = [item for item in items if item not in fixed]
    if block["order"]["randomise"]:
        rest = [rest[i] for i in rng.permutation(len(rest))]
    slots: list[str | None] = [None] * len(items)
    for item, pos in sorted(fixed.items(), key=lambda kv: kv[1]):
        while slots[pos] is not None:  # two items fixed at one place: the next free one
            pos = (pos + 1) % len(items)
        slots[pos] = item
    fill = iter(rest)
    return [slot if slot is not None else next(fill) for slot in slots]


SHUFFLE_STREAM = 2  # the participant's block order comes from default_rng([seed, SHUFFLE_STREAM])


def shuffled_blocks(
    spec: dict, seed: int, plan_rng: np.random.Generator | None = None, condition_key: str | None = None
) -> list[dict]:
    """The file's blocks in this participant's order: the units of each ``shuffle`` swap places in an
    order drawn per participant (one permutation per shuffle, from its own stream ``default_rng([seed, 2])``,
    so a file without a shuffle plans as before); blocks in no unit keep their places. A shuffle of
    converted blocks (``page_key``: a format 1 condition's stimulus sets) draws as format 1's plan did
    (``tests/format1_plan.py``): from the plan's stream ``plan_rng`` (when given), first, and
    only in the condition ``condition_key`` that shows it."""
    blocks = spec["blocks"]
    if not spec.get("shuffle"):
        return blocks
    rng = np.random.default_rng([seed, SHUFFLE_STREAM])
    by_key = {b["key"]: b for b in blocks}
    unit_at: dict[str, list[str]] = {}  # a unit's first block -> the unit shown in its place
    inside: set[str] = set()
    for shuffle in spec["shuffle"]:
        units = shuffle["units"]
        draw = rng
        if plan_rng is not None and "page_key" in by_key[units[0][0]]:
            if condition_key not in by_key[units[0][0]]["conditions"]:
                continue  # not shown to this participant: format 1 draws nothing for it
            draw = plan_rng
        for unit, shown in zip(units, [units[i] for i in draw.permutation(len(units))], strict=True):
            unit_at[unit[0]] = shown
            inside.update(unit)
    ordered: list[dict] = []
    for block in blocks:
        if block["key"] in unit_at:
            ordered += [by_key[key] for key in unit_at[block["key"]]]
        elif block["key"] not in inside:
            ordered.append(block)
    return ordered


def build_plan_v2(
    spec: dict, content: StudyContent, condition_key: str, seed: int, item_choice: dict[str, list[str]]
) -> list[Page]:
    """A format 2 participant's pages (the contract's page dicts), blocks in file order (the units of a
    ``shuffle`` in the participant's order, :func:`shuffled_blocks`).

    Blocks not shown in ``condition_key`` are left out; a task block's items are those of
    ``item_choice`` (the sampled blocks) or all of them, in the order drawn from ``seed``; every
    task page carries its ``position`` within the block (a ``one_page`` block is one page listing its
    ``items``, ``BlockTask.block_page``). An attention block ``among`` task blocks comes
    right after the participant's ``after_items``-th item of those blocks (in the order shown; 0:
    before the first), not at its place in the file; several at one place in file order. An adaptive
    block (``assignment.adaptive``) gets ``per_participant`` slot pages (``slot``, no ``item``), whose
    items are chosen when the participant reaches them (``participation.adaptive``)."""
    rng = np.random.default_rng(seed)
    pages: list[Page] = [{"key": "screening", "kind": "screening"}] if spec.get("screening") else []
    shown = [b for b in shuffled_blocks(spec, seed, rng, condition_key) if condition_key in b["conditions"]]
    among = [b for b in shown if "among" in b]
    hosts = {key for b in among for key in b["among"]["blocks"]}
    counted = 0
    pair_orders: dict[str, list[str]] = {}  # a converted set's comparison subjects in the order shown

    def checks_after(n: int) -> list[Page]:
        due = [b for b in among if b["among"]["after_items"] == n]
        for b in due:
            among.remove(b)
        return [{"key": page_key(b), "kind": "attention", "block": b["key"]} for b in due]

    for block in shown:
        key = block["key"]
        if "among" in block:
            continue
        if block["type"] != "task":
            pages.append({"key": page_key(block), "kind": block["type"], "block": key})
            continue
        if "adaptive" in block["assignment"]:  # its items are chosen when reached (participation.adaptive)
            pages += [
                {"key": f"{key}/#{slot}", "kind": block["task"], "block": key, "slot": slot, "position": slot}
                for slot in range(block["assignment"]["per_participant"])
            ]
            continue
        items = _ordered(block, item_choice.get(key) or content.items(key), rng)
        part = block.get("page_key", {}).get("block")
        if part == "pairs":
            pair_orders[block["page_key"]["key"]] = [content.pair(key, item)["b"] for item in items]
        if block_task(block).one_page(block):  # never among an attention block's hosts (validated)
            pages.append(block_task(block).block_page(block, items))
            continue
        for position, item in enumerate(items):
            page: Page = {
                "key": page_key(block, item),
                "kind": block["task"],
                "block": key,
                "item": item,
                "position": position,
            }
            if part == "output" and block["page_key"]["key"] in pair_orders:
                page["subjects"] = pair_orders[block["page_key"]["key"]]  # format 1's output page: the pairs' order
            if key in hosts:
                pages += checks_after(counted)
            pages += block_task(block).item_pages(block, page)
            if key in hosts:
                counted += 1
                pages += checks_after(counted)
    return pages
