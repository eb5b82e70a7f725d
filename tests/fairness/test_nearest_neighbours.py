"""The k-NN search of situation testing: the grid, k-d tree and all-pairs searches against a
direct per-pair loop over Eq. 4 (mean per-feature distance) with the tie rule (larger id first)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fairness.situation_testing as situation


def reference_knn(centers, center_cats, space, space_cats, ids, k):
    """For each centre, every member's Eq. 4 distance by a plain loop; sorted by (distance, -id)."""
    width = max(space.shape[1] + space_cats.shape[1], 1)
    out = []
    for c in range(len(centers)):
        scored = []
        for s in range(len(space)):
            total = 0.0
            for j in range(space.shape[1]):
                total += abs(float(centers[c, j]) - float(space[s, j]))
            for j in range(space_cats.shape[1]):
                total += center_cats[c, j] != space_cats[s, j]
            scored.append((total / width, -int(ids[s])))
        out.append([-neg for _, neg in sorted(scored)[:k]])
    return np.array(out, dtype=ids.dtype).reshape(len(centers), min(k, len(ids)))


@st.composite
def searches(draw):
    """Small integer grids (divided by 1, 3 or 7, so that sums tie exactly or only nearly), repeated
    centres, up to two categorical features (a centre may have a level no member has), sparse ids."""
    n = draw(st.integers(1, 60))
    n_centres = draw(st.integers(1, 15))
    dims = draw(st.integers(1, 3))
    n_cats = draw(st.integers(0, 2))
    scale = draw(st.sampled_from([1.0, 3.0, 7.0]))
    space = draw(hnp.arrays(np.int64, (n, dims), elements=st.integers(0, 3))) / scale
    centers = draw(hnp.arrays(np.int64, (n_centres, dims), elements=st.integers(0, 3))) / scale
    space_cats = draw(hnp.arrays(object, (n, n_cats), elements=st.sampled_from("abc")))
    center_cats = draw(hnp.arrays(object, (n_centres, n_cats), elements=st.sampled_from("abcd")))
    ids = np.sort(np.array(draw(st.lists(st.integers(0, 10 * n), min_size=n, max_size=n, unique=True)), dtype=np.int64))
    k = draw(st.integers(1, n))
    return centers, center_cats, space, space_cats, ids, k


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(searches())
@example(  # every member at distance 0: the order is the ids, largest first
    (np.zeros((2, 1)), np.empty((2, 0), object), np.zeros((5, 1)), np.empty((5, 0), object), np.arange(5), 3)
)
def test_grid_tree_and_all_pairs_searches_equal_a_direct_loop(case):
    centers, center_cats, space, space_cats, ids, k = case
    expected = reference_knn(*case)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(situation, "TREE_MIN_PAIRS", -1)  # the grids whatever the size
        assert np.array_equal(situation._knn(*case), expected)
        patch.setattr(situation, "GRID_MAX_DIMS", 0)  # the k-d trees
        assert np.array_equal(situation._knn(*case), expected)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(situation, "TREE_MIN_PAIRS", np.inf)  # all pairs
        assert np.array_equal(situation._knn(*case), expected)


@pytest.mark.slow
def test_situation_testing_is_the_same_with_grids_trees_and_all_pairs(monkeypatch):
    """Whole runs (paper and reference mode, with a categorical feature, counterfactuals, ties)."""
    rng = np.random.default_rng(7)
    n = 600
    data = pd.DataFrame(
        {
            "score": rng.integers(20, 30, n).astype(float),
            "grade": np.round(rng.uniform(2, 4, n), 1),
            "region": rng.choice(["north", "south", "east"], n),
            "g": rng.integers(0, 2, n),
        }
    )
    data["y"] = (data["score"] + 5 * data["grade"] + rng.normal(0, 2, n) > 40).astype(int)
    cf = data.assign(score=data["score"] + 2 * data["g"], g=0, y=1 - data["y"] * (rng.random(n) < 0.9))
    runs = {}
    for name, threshold, grid_dims in (("grids", -1, 3), ("trees", -1, 0), ("all pairs", np.inf, 3)):
        monkeypatch.setattr(situation, "TREE_MIN_PAIRS", threshold)
        monkeypatch.setattr(situation, "GRID_MAX_DIMS", grid_dims)
        runs[name] = [
            situation.situation_testing(
                data, protected="g", target="y", negative_outcome=0, k=[5, 40], counterfactuals=cf, mode=mode
            )
            for mode in ("paper", "reference")
        ]
    for name in ("grids", "trees"):
        for searched, all_pairs in zip(runs[name], runs["all pairs"], strict=True):
            pd.testing.assert_frame_equal(searched.individuals, all_pairs.individuals)
            for key, groups in all_pairs.neighbours.items():
                for group in ("control", "test"):
                    assert np.array_equal(searched.neighbours[key][group], groups[group]), (name, key, group)
