import json

import pytest

from studies.demo_study import CONDITIONS, build_demo_study, relation_of, total_relation, trend_relation
from tests.conftest import DEMO_FILE


@pytest.fixture(scope="module")
def generated() -> dict:
    """The generator's study for the bundled file's seed, built once for the module (about 1.5 CPU-s a build)."""
    return build_demo_study(2025)


def test_bundled_file_is_the_generators_output(generated):
    """The committed demo study is exactly what `generate_demo_study --seed 2025` writes."""
    assert json.loads(DEMO_FILE.read_text()) == json.loads(json.dumps(generated))


def test_demo_has_two_conditions_three_sets_and_eight_prompts(demo_spec):
    assert [c["key"] for c in demo_spec["conditions"]] == ["arrests", "income"]
    assert [c["desirable"] for c in demo_spec["conditions"]] == [False, True]
    for cond in demo_spec["conditions"]:
        assert len(cond["stimulus_sets"]) == 3
        assert len(cond["disagreement_prompts"]) == 8
        labels = [
            next(s for s in cond["subjects"] if s["id"] == p["subject"])["label"] for p in cond["disagreement_prompts"]
        ]
        assert sorted(labels) == [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("condition_index", [0, 1])
def test_comparison_subjects_really_have_their_designed_relation(demo_spec, condition_index):
    cond = demo_spec["conditions"][condition_index]
    series = {s["id"]: s["series"] for s in cond["subjects"]}
    min_slope = CONDITIONS[cond["key"]]["min_slope"]
    for sset in cond["stimulus_sets"]:
        relations = []
        for comp in sset["comparisons"]:
            actual = relation_of(series[sset["reference"]], series[comp["subject"]], min_slope)
            assert actual == comp["relation"], (sset["key"], comp)
            relations.append(actual)
        assert len(set(relations)) == 4


def test_relation_rules():
    assert trend_relation([1, 2, 3, 4], [2, 3, 4, 5], 0.5) == "similar"
    assert trend_relation([1, 2, 3, 4], [4, 3, 2, 1], 0.5) == "different"
    assert trend_relation([1, 1, 1, 1], [4, 3, 2, 1], 0.5) == "unclear"
    assert total_relation([1, 2, 3, 4], [2, 2, 3, 4]) == "similar"
    assert total_relation([1, 2, 3, 4], [4, 5, 6, 7]) == "different"


@pytest.mark.slow
def test_same_seed_same_study_other_seed_other_subjects(generated):
    assert build_demo_study(2025) == generated
    assert generated["conditions"][0]["subjects"] != build_demo_study(4)["conditions"][0]["subjects"]
