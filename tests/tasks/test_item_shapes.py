"""Every registered item shape (``tasks.item_shapes``) owns its block field's schema, an item's id, the
subjects it shows, the count and the summary label; an unknown shape is refused with the known ones named."""

import jsonschema
import pytest

from tasks import BLOCK_TASKS
from tasks.base import BlockTask
from tasks.item_shapes import ITEM_SHAPES, UnknownItemShape, item_shape

POOL = {"key": "p", "subjects": [{"id": "S1"}, {"id": "S2"}, {"id": "S3"}]}
# shape -> (an item as a study file lists it, its id, the subjects it shows, one item's label, 16 items' label)
EXAMPLES = {
    "subjects": ({"id": "S2"}, "S2", ["S2"], "1 subject", "16 subjects"),
    "pairs": ({"a": "S1", "b": "S2", "relation": "near"}, "S1~S2", ["S1", "S2"], "1 pair", "16 pairs"),
    "triplets": ({"anchor": "S3", "b": "S1", "c": "S2"}, "S3~S1~S2", ["S3", "S1", "S2"], "1 triplet", "16 triplets"),
    "sets": (
        {"key": "k1", "reference": "S1", "comparisons": ["S2", "S3"]},
        "k1",
        ["S1", "S2", "S3"],
        "1 stimulus set",
        "16 stimulus sets",
    ),
    "features": ({"column": "priors", "label": "Prior offences"}, "priors", [], "1 feature", "16 features"),
    "rankings": ({"subjects": ["S2", "S3", "S1"]}, "S2~S3~S1", ["S2", "S3", "S1"], "1 ranking", "16 rankings"),
    "comparisons": (
        {"key": "c1", "a": "fair", "b": "accurate", "subjects": ["S1", "S2"]},
        "c1",
        [],
        "1 model comparison",
        "16 model comparisons",
    ),
}


def test_the_examples_cover_every_shape_and_every_block_task_has_one():
    assert set(EXAMPLES) == set(ITEM_SHAPES)
    assert {task.item_shape.name for task in BLOCK_TASKS.values()} <= set(ITEM_SHAPES)


@pytest.mark.parametrize("name", sorted(ITEM_SHAPES))
def test_a_shape_owns_its_schema_id_subjects_count_and_label(name):
    shape = item_shape(name)
    item, item_id, shows, one, many = EXAMPLES[name]
    assert shape.item_id(item) == item_id and shape.shows(item) == shows
    assert shape.label(1) == one and shape.label(16) == many
    if shape.schema is None:  # the pool's subjects: the block lists none
        assert shape.option == {} and shape.count({}, POOL) == 3
        assert shape.item_map({}, POOL) == {"S1": "", "S2": "", "S3": ""}
        assert shape.item_subjects("S2", "") == ["S2"]
        return
    jsonschema.validate([item], shape.schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([], shape.schema)  # at least one item
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{**item, "unknown": "x"}], shape.schema)
    required = shape.schema["items"]["required"][0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{k: v for k, v in item.items() if k != required}], shape.schema)
    block = {name: [item, item]}
    assert shape.option == {name: shape.schema} and shape.count(block, POOL) == 2 and shape.count({}, POOL) == 0
    assert shape.item_map(block, POOL) == {item_id: item}
    assert shape.item_subjects(item_id, item) == shows


def test_an_unknown_shape_is_refused_with_the_known_ones_named():
    with pytest.raises(
        UnknownItemShape, match=r"unknown item shape 'tournaments'; known shapes: subjects, pairs, triplets"
    ):
        item_shape("tournaments")
    with pytest.raises(UnknownItemShape, match=r"Tournament.item_shape 'tournaments' is not a registered item shape"):
        type("Tournament", (BlockTask,), {"item_shape": "tournaments"})
