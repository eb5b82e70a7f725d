"""Units of blocks shown in an order drawn per participant (format 2 ``shuffle``)."""

from collections import Counter

import pytest

from participation.assignment import shuffled_blocks
from participation.plan import plan_for
from studies.study_file import InvalidStudyFile, validate_study
from tests.participation.format2_helpers import example_spec


def _blocks(*keys: str) -> list[dict]:
    return [{"key": key} for key in keys]


def test_units_swap_places_and_the_other_blocks_keep_theirs():
    spec = {
        "blocks": _blocks("i", "a1", "a2", "att", "b1", "b2", "end"),
        "shuffle": [{"units": [["a1", "a2"], ["b1", "b2"]]}],
    }
    orders = Counter(tuple(b["key"] for b in shuffled_blocks(spec, seed)) for seed in range(400))
    assert set(orders) == {("i", "a1", "a2", "att", "b1", "b2", "end"), ("i", "b1", "b2", "att", "a1", "a2", "end")}
    # each order with probability 1/2: 400 draws lie within 200 +- 4 sd (sd = 10) but for a 1 in 15,000 chance
    assert all(160 <= n <= 240 for n in orders.values()), orders
    assert shuffled_blocks({"blocks": spec["blocks"]}, 3) == spec["blocks"]  # no shuffle: file order


def test_units_of_different_lengths_fill_each_others_places():
    spec = {"blocks": _blocks("a", "b1", "b2", "b3", "c"), "shuffle": [{"units": [["a"], ["b1", "b2", "b3"]]}]}
    orders = {tuple(b["key"] for b in shuffled_blocks(spec, seed)) for seed in range(50)}
    assert orders == {("a", "b1", "b2", "b3", "c"), ("b1", "b2", "b3", "a", "c")}


def test_a_file_without_a_shuffle_plans_as_before_and_one_with_it_keeps_each_blocks_items():
    spec = example_spec()
    tasks = [b["key"] for b in spec["blocks"] if b["type"] == "task" and "per_participant" not in b["assignment"]][:2]
    shuffled = validate_study({**spec, "shuffle": [{"units": [[tasks[0]], [tasks[1]]]}]})
    condition = spec["conditions"][0]["key"]
    swapped = 0
    for seed in range(20):
        plain = [p["key"] for p in plan_for(spec, condition, seed)]
        mixed = [p["key"] for p in plan_for(shuffled, condition, seed)]
        assert sorted(plain) == sorted(mixed) and plain == [p["key"] for p in plan_for(spec, condition, seed)]
        swapped += plain != mixed
    assert 0 < swapped < 20


@pytest.mark.parametrize(
    ("units", "problem"),
    [
        ([["nope"], ["BLOCK0"]], "shuffle[0].units[0][0]: 'nope' is not a block"),
        ([["BLOCK0"], ["BLOCK0"]], "shuffle[0].units[1][0]: block 'intro' is in another unit"),
        (
            [["BLOCK2", "BLOCK0"], ["BLOCK1"]],
            "shuffle[0].units[0]: a unit's blocks must be consecutive blocks, in file order",
        ),
    ],
)
def test_a_bad_shuffle_is_refused_with_its_path(units, problem):
    spec = example_spec()
    keys = [b["key"] for b in spec["blocks"]]
    units = [[keys[int(k[5:])] if k.startswith("BLOCK") else k for k in unit] for unit in units]
    with pytest.raises(InvalidStudyFile) as refused:
        validate_study({**spec, "shuffle": [{"units": units}]})
    assert problem in [str(p) for p in refused.value.problems]
