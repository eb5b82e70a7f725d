import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness.differential_parity import (
    bridged_differential_parity,
    differential_parity,
    differential_parity_continuous,
    effect_label,
)
from tests.conftest import REFERENCE_DATA

DP_DATA = REFERENCE_DATA / "differential_parity"


def test_dpt_is_welchs_t_on_the_differences():
    rng = np.random.default_rng(0)
    r0, r1 = rng.normal(size=300), rng.normal(size=300)
    a = rng.integers(0, 2, 300)
    res = differential_parity(r0 + 0.3 * a, r1, a)
    delta = r0 + 0.3 * a - r1
    welch = stats.ttest_ind(delta[a == 1], delta[a == 0], equal_var=False, alternative="greater")
    assert res.statistic == pytest.approx(welch.statistic)
    assert res.df == pytest.approx(welch.df)
    assert res.pvalue == pytest.approx(welch.pvalue)
    assert res.verdict == "R0 relatively biased towards A = 1"
    flipped = differential_parity(r0 - 0.8 * a, r1, a)
    assert flipped.verdict == "R0 relatively biased towards A = 0" and flipped.pvalue < 0.05


def test_dpd_is_cohens_d_with_pooled_sd_by_hand():
    r0 = np.array([3.0, 4, 5, 6, 1, 2, 2])
    r1 = np.zeros(7)
    a = np.array([1, 1, 1, 1, 0, 0, 0])
    # group 1: mean 4.5, var 1.6667 (n 4); group 0: mean 1.6667, var .3333 (n 3)
    pooled = np.sqrt((3 * 5 / 3 + 2 * 1 / 3) / 5)
    assert differential_parity(r0, r1, a).effect_size == pytest.approx((4.5 - 5 / 3) / pooled)


@pytest.mark.parametrize(
    ("d", "label"),
    [
        (0.005, "negligible"),
        (0.1, "very small"),
        (-0.3, "small"),
        (0.6, "medium"),
        (0.9, "large"),
        (1.5, "very large"),
        (2.5, "huge"),
    ],
)
def test_table1_labels(d, label):
    assert effect_label(d) == label


def test_no_bias_gives_no_evidence():
    rng = np.random.default_rng(1)
    res = differential_parity(rng.normal(size=400), rng.normal(size=400), rng.integers(0, 2, 400))
    assert res.verdict == "no evidence" and res.effect_label in ("negligible", "very small")


def test_bad_inputs_are_specific():
    with pytest.raises(ValueError, match="binary"):
        differential_parity([1, 2, 3], [1, 2, 3], [0, 1, 2])
    with pytest.raises(ValueError, match="single value"):
        differential_parity([1, 2, 3], [1, 2, 3], [1, 1, 1])
    with pytest.raises(ValueError, match="equal lengths"):
        differential_parity([1, 2, 3], [1, 2], [0, 1, 1])


def test_continuous_attribute_pairwise_version():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, 500)
    res = differential_parity_continuous(rng.normal(size=500) + a, rng.normal(size=500), a)
    assert res.statistic > 0 and res.verdict == "R0 relatively biased towards higher A"


def test_bridges_recover_the_same_item_answer():
    rng = np.random.default_rng(3)
    n = 4000
    x = rng.normal(size=(n, 3))
    a = (rng.random(n) < 0.5).astype(int)
    truth = x @ np.array([1.0, -0.5, 0.2])
    r0 = truth + 0.4 * a + rng.normal(0, 0.3, n)
    r1 = truth + rng.normal(0, 0.3, n)
    same = differential_parity(r0, r1, a)
    half = n // 2
    features = np.column_stack([x, a])
    for bridge in ("biased", "unbiased"):
        res = bridged_differential_parity(
            features[:half], r0[:half], a[:half], features[half:], r1[half:], a[half:], bridge=bridge
        )
        assert bridge in res.method and "RidgeCV" in res.method
        assert res.verdict == same.verdict == "R0 relatively biased towards A = 1"
        assert res.mean_difference[1] - res.mean_difference[0] == pytest.approx(0.4, abs=0.08)


@pytest.fixture(scope="module")
def ratings():
    path = DP_DATA / "Ratings.csv"
    if not path.exists():
        pytest.skip("reference data not present")
    frame = pd.read_csv(path)
    frame["male"] = (frame["Filename"].str[1] == "M").astype(int)
    frame["asian"] = (frame["Filename"].str[0] == "A").astype(int)
    return frame


def test_face_ratings_raters_against_the_average(ratings):
    """Ratings.csv (SCUT-FBP5500): 5,500 faces, 60 raters; each rater against the average."""
    assert len(ratings) == 5500 and ratings["male"].mean() == pytest.approx(0.5)
    verdicts = {
        attr: [differential_parity(ratings[f"P{k}"], ratings["Average"], ratings[attr]).verdict for k in range(1, 61)]
        for attr in ("male", "asian")
    }
    # with 5,500 items most raters deviate from the crowd average in one direction or the other
    for attr, values in verdicts.items():
        assert sum(v != "no evidence" for v in values) >= 30, attr
    # the average against itself plus noise shows no relative bias
    rng = np.random.default_rng(0)
    assert (
        differential_parity(ratings["Average"] + rng.normal(0, 0.1, 5500), ratings["Average"], ratings["male"]).pvalue
        > 0.01
    )


def test_paper_table3_r2_vs_r1_on_sex(ratings):
    """Differential Parity paper, RQ1 text: R2 vs R1 on Sex has DPD = 0.43 on the 60% training split
    and 0.47 on the 40% test split (p = 0.00); on all 5,500 faces the DPD must lie between them."""
    res = differential_parity(ratings["P2"], ratings["P1"], ratings["male"])
    assert 0.43 <= res.effect_size <= 0.47 and res.pvalue < 0.005


@pytest.mark.parametrize("model", ["llama-3.3-70b-versatile", "moonshotai-kimi-k2-instruct-0905"])
def test_story_points_models_against_actual(model):
    """Story-point estimates vs actual points by is_internal: DPT equals scipy's one-sided Welch test
    on the per-item differences of the real data (284 issues)."""
    path = DP_DATA / f"{model}-predictions_balanced.csv"
    if not path.exists():
        pytest.skip("reference data not present")
    frame = pd.read_csv(path)
    res = differential_parity(frame["predicted_storypoint"], frame["actual_storypoint"], frame["is_internal"])
    delta = frame["predicted_storypoint"] - frame["actual_storypoint"]
    welch = stats.ttest_ind(delta[frame["is_internal"] == 1], delta[frame["is_internal"] == 0], equal_var=False)
    assert len(frame) == 284
    assert res.statistic == pytest.approx(welch.statistic) and res.pvalue == pytest.approx(welch.pvalue / 2)


def test_identical_decision_sets_are_in_parity():
    """R0 = R1: every difference is 0, so DPT = 0, p = 0.5, DPD = 0 (not NaN from the zero variance)."""
    r = np.array([0.1, 0.4, 0.4, 0.9, 0.3, 0.7])
    a = np.array([0, 0, 0, 1, 1, 1])
    res = differential_parity(r, r.copy(), a)
    assert (res.statistic, res.pvalue, res.effect_size) == (0.0, 0.5, 0.0)
    assert res.df == 4 and res.effect_label == "negligible" and res.verdict == "no evidence"
    shifted = differential_parity(r + 2, r, a)  # R0 = R1 + c: still no relative bias
    assert (shifted.statistic, shifted.pvalue, shifted.effect_size) == (0.0, 0.5, 0.0)
    gap = differential_parity(r + a, r, a)  # a constant gap for A = 1 only: deterministic bias
    assert gap.statistic == np.inf and gap.pvalue == 0.0 and gap.effect_label == "huge"
    cont = differential_parity_continuous(r + 0.1, r, np.arange(6.0))
    assert (cont.statistic, cont.pvalue, cont.verdict) == (0.0, 0.5, "no evidence")
