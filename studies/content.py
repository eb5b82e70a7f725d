"""Lookups into a validated format 2 study file: pools, subjects, blocks, items, profiles.

Built once per stored version and process (keyed by the file's SHA-256, so a cached entry can never
be stale) and bounded: at most :data:`CACHE_SIZE` study versions and :data:`CACHE_BYTES` per worker.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

from core.caching import BoundedCache, json_bytes
from studies.format2 import item_strata, subject_value
from tasks import block_task
from tasks.item_shapes import PairItem
from tasks.page_index import Block, ModelOutput, Pool, Subject

T = TypeVar("T")
CACHE_SIZE = 64
CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Profile:
    """How a subject is shown: a text from the pool's template, a small table, and/or a chart."""

    text: str
    table: list[tuple[str, str]]
    chart: dict | None


class _Values(dict):
    """A subject's columns for ``str.format_map`` (numbers shown without trailing .0)."""

    def __init__(self, subject: Subject):
        super().__init__({"id": subject["id"], **subject["features"], **subject["groups"]})

    def __getitem__(self, key):
        value = super().__getitem__(key)
        return f"{value:g}" if isinstance(value, float) else value


@dataclass(frozen=True)
class StudyContent:
    spec: dict
    pools: dict[str, Pool]
    blocks: dict[str, Block]
    _subjects: dict[str, dict[str, Subject]] = field(repr=False)
    _items: dict[str, dict[str, dict | str]] = field(repr=False)
    _strata: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False, compare=False)
    _shows: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, repr=False, compare=False)
    _derived: dict[tuple[str, ...], object] = field(default_factory=dict, repr=False, compare=False)

    def subject(self, pool: str, subject_id: str) -> Subject:
        return self._subjects[pool][subject_id]

    def items(self, block_key: str) -> list[str]:
        """The item ids of a task block, in file order."""
        return list(self._items[block_key])

    def pair(self, block_key: str, item: str) -> PairItem:
        """A pair item: ``{a, b, relation?}``."""
        return cast(PairItem, self.item(block_key, item))

    def item(self, block_key: str, item: str) -> dict:
        """An item as the file gives it (a pair, a set, ...); a block over subjects has none (``item_map``)."""
        given = self._items[block_key][item]
        if isinstance(given, str):
            raise TypeError(f"block {block_key!r}: item {item!r} is a subject, not a pair or a set")
        return given

    def subjects_of(self, block_key: str, item: str) -> list[str]:
        """The subject ids an item shows (one subject, a pair, or a set's reference and comparisons)."""
        return block_task(self.blocks[block_key]).item_subjects(item, self._items[block_key][item])

    def subjects_by_item(self, block_key: str) -> dict[str, tuple[str, ...]]:
        """Item id -> the subject ids it shows (:meth:`subjects_of`), for every item of a task block in file
        order, computed once per block (an adaptive block's every decision reads them)."""
        shows = self._shows.get(block_key)
        if shows is None:
            shows = {item: tuple(self.subjects_of(block_key, item)) for item in self._items[block_key]}
            self._shows[block_key] = shows
        return shows

    def derived(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """A value a task type computes from the file (``key`` names it), computed once per version and process:
        the file cannot change under it."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(T, self._derived[key])

    def model_output(self, pool: str, subject_id: str, model: str) -> ModelOutput:
        """The model's ``{score?, label?}`` for a subject."""
        return self.subject(pool, subject_id)["models"].get(model, {})

    def profile(self, pool: str, subject_id: str) -> Profile:
        """The subject as the pool's ``display`` shows it."""
        display, subject = self.pools[pool]["display"], self.subject(pool, subject_id)
        text = display["profile"].format_map(_Values(subject)) if "profile" in display else ""
        table = [(column, _shown(subject_value(subject, column))) for column in display.get("table", [])]
        return Profile(text=text, table=table, chart=self.chart(pool, subject_id) if "chart" in display else None)

    def chart(self, pool: str, *subject_ids: str) -> dict:
        """Data for the line chart of the subjects' series (:func:`line_chart`)."""
        chart = self.pools[pool]["display"]["chart"]
        series = {s: self.subject(pool, s)["series"] for s in subject_ids}
        return line_chart(chart["time_labels"], series, chart["feature"], chart["unit"])

    def strata(self, block_key: str) -> dict[str, list[str]]:
        """Item ids by the value of the block's ``assignment.stratify_by`` ({"": all items} without it),
        computed once per block (every consent reads them)."""
        strata = self._strata.get(block_key)
        if strata is None:
            block = self.blocks[block_key]
            column = block["assignment"].get("stratify_by")
            pool = self.pools[block["pool"]]
            strata = {"": self.items(block_key)} if column is None else item_strata(block, pool, column)
            if strata is None:  # the study file's validation rejects such a column (format2._assignment_problems)
                raise ValueError(f"block {block_key!r}: stratify_by {column!r} is not a column of every subject")
            self._strata[block_key] = strata
        return strata


def line_chart(time_labels: list[str], series: dict[str, list[float]], feature: str, unit: str) -> dict:
    """Data for a Plotly line chart of subjects' yearly (non-cumulative) series, with a text
    description of every value for screen readers (both formats' pages use it)."""
    return {
        "x": time_labels,
        "traces": [{"name": name, "y": values} for name, values in series.items()],
        "ytitle": f"{feature} ({unit})",
        "description": "; ".join(
            f"{name}: " + ", ".join(f"{label} {value:g}" for label, value in zip(time_labels, values, strict=True))
            for name, values in series.items()
        ),
    }


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _build(spec: dict) -> StudyContent:
    pools = {p["key"]: p for p in spec["pools"]}
    blocks = {b["key"]: b for b in spec["blocks"]}
    items: dict[str, dict] = {}
    for block in spec["blocks"]:
        if block["type"] != "task":
            continue
        items[block["key"]] = block_task(block).item_map(block, pools[block["pool"]])
    subjects = {key: {s["id"]: s for s in pool["subjects"]} for key, pool in pools.items()}
    return StudyContent(spec=spec, pools=pools, blocks=blocks, _subjects=subjects, _items=items)


_CACHE: BoundedCache[StudyContent] = BoundedCache(
    size=CACHE_SIZE, max_bytes=CACHE_BYTES, weigh=lambda content: json_bytes(content.spec)
)


def study_content(spec: dict, spec_hash: str) -> StudyContent:
    """The lookups of a validated format 2 study file, cached by its digest."""
    content = _CACHE.get(spec_hash)
    if content is None:
        content = _CACHE.put(spec_hash, _build(spec))
    return content
