"""The item shapes a task block's items come in: each owns the JSON schema of the block field that lists
its items, an item's id, the subjects an item shows, how many items a block has and how the study
summary names them ("16 triplets").

A task type names its shape (``BlockTask.item_shape``); validation, assignment, the answers table and the
upload preview ask the shape, never a shape by name. Adding a shape: one :class:`ItemShape` below and
its line in ``ITEM_SHAPES``.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, Required, TypedDict

from tasks.schema import KEY, SHOWN, TEXT


class PairItem(TypedDict):
    """An item of :data:`PAIRS`: subjects ``a`` and ``b`` of the pool, and how they were drawn."""

    a: str
    b: str
    relation: NotRequired[str]


class TripletItem(TypedDict):
    """An item of :data:`TRIPLETS`: which of ``b`` and ``c`` is closer to ``anchor``."""

    anchor: str
    b: str
    c: str
    relation: NotRequired[str]


class StimulusSet(TypedDict):
    """An item of :data:`SETS`: a reference subject and the subjects compared with it."""

    key: str
    reference: str
    comparisons: list[str]


class RankingItem(TypedDict):
    """An item of :data:`RANKINGS`: the 3-5 subjects a participant orders, in the order shown."""

    subjects: list[str]


class ModelComparisonItem(TypedDict, total=False):
    """An item of :data:`MODEL_COMPARISONS`: models ``a`` and ``b`` compared on the block's pool, or on
    ``subjects`` of it."""

    key: Required[str]
    a: Required[str]
    b: Required[str]
    subjects: list[str]


class FeatureItem(TypedDict):
    """An item of :data:`FEATURES`: a feature column of the pool, as the page names and describes it."""

    column: str
    label: NotRequired[str]
    description: NotRequired[str]


class UnknownItemShape(LookupError):
    """A name that is no registered item shape."""


def _listed(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    """The schema of a block field listing items: a non-empty array of objects with these fields."""
    item = {"type": "object", "additionalProperties": False, "required": required, "properties": properties}
    return {"type": "array", "minItems": 1, "items": item}


@dataclass(frozen=True)
class ItemShape:
    """A shape: ``name`` is the block field listing the items (``schema`` its JSON schema), or for
    ``"subjects"`` (``schema`` None) the items are every subject of the block's pool; ``item_id`` and
    ``shows`` give an item's id and the subject ids it shows (strata go by the first);
    ``singular`` / ``plural`` name the items in summaries."""

    name: str
    schema: dict[str, Any] | None
    item_id: Callable[[dict], str]
    shows: Callable[[dict], list[str]]
    singular: str
    plural: str
    shows_subjects: bool = True

    @property
    def option(self) -> dict[str, dict[str, Any]]:
        """The block option listing the items (``BlockTask.options``); none for the pool's subjects."""
        return {} if self.schema is None else {self.name: self.schema}

    def item_map(self, block: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, dict | str]:
        """Item id -> the item as the file gives it (``""`` for a subject: its id is the item), in file order."""
        if self.schema is None:
            return dict.fromkeys((s["id"] for s in pool["subjects"]), "")
        return {self.item_id(item): item for item in block[self.name]}

    def item_subjects(self, item_id: str, item: dict | str) -> list[str]:
        """The subject ids an item of :meth:`item_map` shows."""
        return [item_id] if isinstance(item, str) else self.shows(item)

    def count(self, block: Mapping[str, Any], pool: Mapping[str, Any]) -> int:
        """How many items the block has (:meth:`item_map`, counted without listing them)."""
        return len(pool.get("subjects", []) if self.schema is None else block.get(self.name, []))

    def label(self, n: int) -> str:
        """``n`` items as the study summary names them: "1 triplet", "16 triplets"."""
        return f"{n} {self.singular if n == 1 else self.plural}"


SUBJECTS = ItemShape("subjects", None, lambda s: s["id"], lambda s: [s["id"]], "subject", "subjects")
PAIRS = ItemShape(
    "pairs",
    _listed(["a", "b"], {"a": KEY, "b": KEY, "relation": TEXT}),
    lambda p: f"{p['a']}~{p['b']}",
    lambda p: [p["a"], p["b"]],
    "pair",
    "pairs",
)
TRIPLETS = ItemShape(
    "triplets",
    _listed(["anchor", "b", "c"], {"anchor": KEY, "b": KEY, "c": KEY, "relation": TEXT}),
    lambda t: f"{t['anchor']}~{t['b']}~{t['c']}",
    lambda t: [t["anchor"], t["b"], t["c"]],
    "triplet",
    "triplets",
)
SETS = ItemShape(
    "sets",
    _listed(
        ["key", "reference", "comparisons"],
        {"key": KEY, "reference": KEY, "comparisons": {"type": "array", "minItems": 1, "items": KEY}},
    ),
    lambda s: s["key"],
    lambda s: [s["reference"], *s["comparisons"]],
    "stimulus set",
    "stimulus sets",
)
FEATURES = ItemShape(  # columns of the pool, not subjects: an item shows none
    "features",
    _listed(["column"], {"column": KEY, "label": SHOWN, "description": SHOWN}),
    lambda f: f["column"],
    lambda f: [],
    "feature",
    "features",
    shows_subjects=False,
)
RANKINGS = ItemShape(  # 3-5 subjects a participant orders, shown in the listed order
    "rankings",
    _listed(
        ["subjects"], {"subjects": {"type": "array", "minItems": 3, "maxItems": 5, "items": KEY}, "relation": TEXT}
    ),
    lambda r: "~".join(r["subjects"]),
    lambda r: list(r["subjects"]),
    "ranking",
    "rankings",
)
MODEL_COMPARISONS = ItemShape(  # two models' outcomes on (a sub-pool of) the pool: an item shows no one subject
    "comparisons",
    _listed(
        ["key", "a", "b"],
        {
            "key": KEY,
            "a": KEY,
            "b": KEY,
            "subjects": {"type": "array", "minItems": 2, "uniqueItems": True, "items": KEY},
        },
    ),
    lambda c: c["key"],
    lambda c: [],
    "model comparison",
    "model comparisons",
    shows_subjects=False,
)
ITEM_SHAPES: dict[str, ItemShape] = {
    shape.name: shape for shape in (SUBJECTS, PAIRS, TRIPLETS, SETS, FEATURES, RANKINGS, MODEL_COMPARISONS)
}


def item_shape(name: str) -> ItemShape:
    """The registered shape called ``name``; :class:`UnknownItemShape` naming the known ones otherwise."""
    try:
        return ITEM_SHAPES[name]
    except KeyError:
        known = ", ".join(ITEM_SHAPES)
        raise UnknownItemShape(f"unknown item shape {name!r}; known shapes: {known}") from None
