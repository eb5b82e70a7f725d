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
    assert res.verdict.startswith("R0 gave A = 1 higher values than R1 did, relative to A = 0.")
    assert (res.direction, res.favoured_group) == ("higher", "A = 1")
    flipped = differential_parity(r0 - 0.8 * a, r1, a)
    assert (flipped.direction, flipped.favoured_group) == ("lower", "A = 0") and flipped.pvalue < 0.05


def test_dpd_is_cohens_d_with_pooled_sd_by_hand():
    r0 = np.array([3.0, 4, 5, 6, 1, 2, 2])
    r1 = np.zeros(7)
    a = np.array([1, 1, 1, 1, 0, 0, 0])
    # group 1: mean 4.5, var 1.6667 (n 4); group 0: mean 1.6667, var .3333 (n 3)
    pooled = np.sqrt((3 * 5 / 3 + 2 * 1 / 3) / 5)
    assert differential_parity(r0, r1, a).effect_size == pytest.approx((4.5 - 5 / 3) / pooled)


def test_dpd_scale_pooled_or_overall_by_hand():
    """Group 0 differences [0, 2] (mean 1, var 2), group 1 [3, 5] (mean 4, var 2): the pooled SD is
    sqrt((2 + 2) / 2) = 1.4142, DPD = 3 / 1.4142 = 2.1213 (the paper's Eq. 3); the SD of all four,
    [0, 2, 3, 5] about 2.5, is sqrt(13 / 3) = 2.0817, DPD = 3 / 2.0817 = 1.4412 (the authors' code,
    ``np.std(y_pred - y, ddof=1)``). DPT does not depend on the scale."""
    r0, r1, a = np.array([0.0, 2, 3, 5]), np.zeros(4), np.array([0, 0, 1, 1])
    pooled = differential_parity(r0, r1, a)
    overall = differential_parity(r0, r1, a, dpd_scale="overall")
    assert pooled.effect_size == pytest.approx(3 / np.sqrt(2)) == pytest.approx(2.1213, abs=1e-4)
    assert overall.effect_size == pytest.approx(3 / np.sqrt(13 / 3)) == pytest.approx(1.4412, abs=1e-4)
    assert overall.statistic == pooled.statistic
    with pytest.raises(ValueError, match="dpd_scale"):
        differential_parity(r0, r1, a, dpd_scale="sd")  # type: ignore[arg-type]


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
    assert res.verdict.startswith("No evidence at alpha = 0.05") and res.direction is res.favoured_group is None
    assert res.effect_label in ("negligible", "very small")


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
    assert res.statistic > 0 and (res.direction, res.favoured_group) == ("higher", "items with higher A")
    assert res.verdict.startswith(
        "R0 gave items with higher A higher values than R1 did, relative to items with lower A."
    )
    risk = differential_parity_continuous(
        rng.normal(size=500) + a, rng.normal(size=500), a, favourable="lower", groups=("younger", "older")
    )
    assert risk.favoured_group == "younger" and "With lower values being favourable" in risk.verdict


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
        assert res.verdict == same.verdict and res.favoured_group == same.favoured_group == "A = 1"
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
        assert sum(not v.startswith("No evidence") for v in values) >= 30, attr
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


def test_face_ratings_dpd_scales_differ_by_at_most_015(ratings):
    """The authors' code divides DPD by the SD of R_delta over all faces, the paper by the pooled SD: on
    the face ratings (raters P1-P3 and the average, each pair, sex and race) the two differ by up to .015 (.0151)."""
    gaps = []
    columns = ["P1", "P2", "P3", "Average"]
    for i, first in enumerate(columns):
        for second in columns[i + 1 :]:
            for attribute in ("male", "asian"):
                args = (ratings[first], ratings[second], ratings[attribute])
                pooled, overall = (differential_parity(*args, dpd_scale=s).effect_size for s in ("pooled", "overall"))
                assert abs(overall) <= abs(pooled)
                gaps.append(abs(pooled - overall))
    assert max(gaps) == pytest.approx(0.015, abs=5e-4)  # .0151: R1 vs R3 on sex


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
    assert res.df == 4 and res.effect_label == "negligible" and res.verdict.startswith("No evidence")
    shifted = differential_parity(r + 2, r, a)  # R0 = R1 + c: still no relative bias
    assert (shifted.statistic, shifted.pvalue, shifted.effect_size) == (0.0, 0.5, 0.0)
    gap = differential_parity(r + a, r, a)  # a constant gap for A = 1 only: deterministic bias
    assert gap.statistic == np.inf and gap.pvalue == 0.0 and gap.effect_label == "huge"
    cont = differential_parity_continuous(r + 0.1, r, np.arange(6.0))
    assert (cont.statistic, cont.pvalue, cont.direction) == (0.0, 0.5, None)


RISK = {"names": ("participants", "the AI"), "outcome": "risk scores"}
GROUPS = ("subjects whose race is not American Indian", "subjects whose race is American Indian")


@pytest.mark.parametrize("sign", [1, -1])
def test_verdict_names_who_which_group_and_direction(sign):
    """R0 - R1 larger (sign 1) or smaller (-1) for A = 1; the same data worded for both favourable settings."""
    rng = np.random.default_rng(5)
    a = np.repeat([0, 1], 150)
    r1 = rng.normal(size=300)
    r0 = r1 + rng.normal(0, 0.5, 300) + sign * 0.6 * a
    higher = differential_parity(r0, r1, a, favourable="higher", groups=GROUPS, **RISK)
    lower = differential_parity(r0, r1, a, favourable="lower", groups=GROUPS, **RISK)
    word = "higher" if sign > 0 else "lower"
    said = (
        f"Participants gave subjects whose race is American Indian {word} risk scores than the AI did, "
        "relative to subjects whose race is not American Indian."
    )
    for res in (higher, lower):
        assert res.verdict.startswith(said) and res.direction == word and res.pvalue < 0.001
    # the statistics do not depend on the wording; which group is favoured flips with `favourable`
    assert (higher.statistic, higher.pvalue, higher.effect_size) == (lower.statistic, lower.pvalue, lower.effect_size)
    assert {higher.favoured_group, lower.favoured_group} == set(GROUPS)
    assert higher.favoured_group == (GROUPS[1] if sign > 0 else GROUPS[0])
    assert lower.verdict.endswith(
        f"With lower risk scores being favourable: compared with the AI, participants favoured "
        f"{lower.favoured_group} over {higher.favoured_group}."
    )
    assert higher.verdict.endswith(
        f"With higher risk scores being favourable: compared with the AI, participants favoured "
        f"{higher.favoured_group} over {lower.favoured_group}."
    )
    assert (higher.favourable, lower.favourable) == ("higher", "lower")


def test_no_evidence_verdict_names_both_sides_and_favourable_is_checked():
    rng = np.random.default_rng(6)
    res = differential_parity(
        rng.normal(size=200), rng.normal(size=200), np.repeat([0, 1], 100), favourable="lower", groups=GROUPS, **RISK
    )
    assert res.verdict == (
        "No evidence at alpha = 0.05 that participants gave subjects whose race is American Indian different "
        "risk scores than the AI did, relative to subjects whose race is not American Indian."
    )
    with pytest.raises(ValueError, match="favourable"):
        differential_parity([1, 2, 3, 4], [1, 2, 3, 4], [0, 0, 1, 1], favourable="worse")


def test_bridged_verdict_uses_the_same_wording():
    rng = np.random.default_rng(7)
    n = 2000
    x = rng.normal(size=(n, 2))
    a = (rng.random(n) < 0.5).astype(int)
    r0 = x @ np.array([1.0, 0.5]) + 0.5 * a + rng.normal(0, 0.3, n)
    r1 = x @ np.array([1.0, 0.5]) + rng.normal(0, 0.3, n)
    features = np.column_stack([x, a])
    h = n // 2
    res = bridged_differential_parity(
        features[:h], r0[:h], a[:h], features[h:], r1[h:], a[h:], favourable="lower", groups=GROUPS, **RISK
    )
    assert res.direction == "higher" and res.favoured_group == GROUPS[0] and res.verdict.startswith("Participants")


@pytest.mark.parametrize("alpha", [0, 1, 2, -0.1])
def test_alpha_outside_the_unit_interval_is_refused(alpha):
    """alpha = 2 would call every p-value evidence; the level must lie in (0, 1)."""
    from fairness.differential_parity import differential_parity

    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\)"):
        differential_parity([1, 2, 3, 4], [1, 1, 2, 2], [0, 0, 1, 1], alpha=alpha)
