"""fairness.human_audit: each model's rank correlation with the stakeholders' utility (hand-worked, properties,
coverage of its rater-bootstrap interval by simulation), its permutation importance of features people judged
unfair (properties against the expected value of a permutation, weighting), and the Lipschitz table."""

import numpy as np
import pandas as pd
import pytest

from fairness.human_audit import lipschitz_table, surrogate_importance, unfair_feature_reliance, utility_agreement
from tests.fairness.test_lipschitz import Metric

IDS = ["s1", "s2", "s3", "s4"]


def test_rank_correlation_by_hand():
    # utilities 1, 3, 2, 4 (one rater, weight 1 on x) against scores ranked 1, 2, 3, 4: d^2 = 0 + 1 + 1 + 0,
    # rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8; the reversed model -0.8
    features = pd.DataFrame({"x": [1.0, 3.0, 2.0, 4.0]}, index=IDS)
    scores = pd.DataFrame({"m": [0.1, 0.2, 0.3, 0.4], "reversed": [0.4, 0.3, 0.2, 0.1]}, index=IDS)
    weights = pd.DataFrame({"x": [1.0]}, index=["r1"])
    table = utility_agreement(scores, weights, features, n_resamples=0).table.set_index("model")
    assert table.loc["m", "statistic"] == pytest.approx(0.8) and table.loc["reversed", "statistic"] == pytest.approx(
        -0.8
    )
    assert table["ci_low"].isna().all() and table["n_raters"].eq(1).all() and table["n_subjects"].eq(4).all()


def test_a_model_scoring_the_stakeholders_utility_has_correlation_one_per_rater_group():
    rng = np.random.default_rng(3)
    features = pd.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"], index=[f"s{i}" for i in range(30)])
    weights = pd.DataFrame(rng.normal([1.0, 0.5], 0.3, size=(20, 2)), columns=["a", "b"])
    groups = pd.Series(["g1"] * 10 + ["g2"] * 10, index=weights.index)
    utility = {g: features.to_numpy() @ weights[groups == g].mean().to_numpy() for g in ("g1", "g2")}
    scores = pd.DataFrame({"g1": utility["g1"], "g2": 3 * utility["g2"] + 1}, index=features.index)
    result = utility_agreement(scores, weights, features, groups=groups, n_resamples=200, seed=1)
    assert result.statistic[("g1", "g1")] == pytest.approx(1) and result.statistic[("g2", "g2")] == pytest.approx(1)
    low, high = result.confidence_interval()
    assert (low <= result.statistic + 1e-12).all() and (result.statistic <= high + 1e-12).all()
    assert set(result.table["rater_group"]) == {"all raters", "g1", "g2"}


def test_the_rater_bootstrap_interval_covers_at_the_nominal_rate():
    """200 simulated studies of 40 raters whose weights scatter around w0: the 95% interval covers the rho of
    the population's utility (w0 . x) at least 93% of the time (measured: 94.4% at 500 studies)."""
    rng = np.random.default_rng(0)
    features = pd.DataFrame(rng.normal(size=(40, 3)), columns=list("abc"), index=[f"s{i}" for i in range(40)])
    w0 = np.array([1.0, 0.5, -0.3])
    scores = pd.DataFrame({"m": features.to_numpy() @ np.array([1, 0.2, 0.4])}, index=features.index)
    truth = utility_agreement(scores, pd.DataFrame([w0], columns=list("abc")), features, n_resamples=0)
    target = truth.statistic.iloc[0]
    covered = 0
    for study in range(200):
        weights = pd.DataFrame(w0 + rng.normal(size=(40, 3)), columns=list("abc"))
        row = utility_agreement(scores, weights, features, n_resamples=1000, seed=study).table.iloc[0]
        covered += row["ci_low"] <= target <= row["ci_high"]
    assert covered / 200 >= 0.93


def test_utility_agreement_refuses_bad_input():
    features = pd.DataFrame({"x": [1.0, 2.0]}, index=["s1", "s2"])
    scores = pd.DataFrame({"m": [0.1, 0.2]}, index=["s1", "s2"])
    with pytest.raises(ValueError, match="utility features missing from the subjects: y"):
        utility_agreement(scores, pd.DataFrame({"y": [1.0]}), features)
    with pytest.raises(ValueError, match="no utility features for 1 subject"):
        utility_agreement(scores.rename(index={"s2": "s9"}), pd.DataFrame({"x": [1.0]}), features)


@pytest.fixture
def people():
    rng = np.random.default_rng(1)
    n = 200
    return pd.DataFrame(
        {"age": rng.integers(18, 70, n), "race": rng.choice(["A", "B", "C"], n), "priors": rng.poisson(2, n)},
        index=[f"s{i}" for i in range(n)],
    )


def test_permutation_importance_is_the_expected_change_of_a_permutation(people):
    """For a linear model s = beta x the expected |change| when x is permuted is |beta| times the mean absolute
    difference over all ordered pairs of subjects (E|x_pi(i) - x_i| = mean_j |x_j - x_i|); a feature the model
    ignores has importance 0; the surrogate of a linear model fits exactly (R^2 = 1)."""
    scores = 0.01 * people["age"] + 0.3 * (people["race"] == "B")
    table, r2 = surrogate_importance(scores, people, ["age", "race", "priors"], n_repeats=400, seed=2)
    importance = table.set_index("feature")["importance"]
    age = people["age"].to_numpy(float)
    b = (people["race"] == "B").to_numpy(float)
    assert importance["age"] == pytest.approx(0.01 * np.abs(age[:, None] - age).mean(), rel=0.02)
    assert importance["race"] == pytest.approx(0.3 * np.abs(b[:, None] - b).mean(), rel=0.03)
    assert importance["priors"] == pytest.approx(0, abs=1e-12) and r2 == pytest.approx(1)


def test_a_forest_surrogate_follows_an_interaction_the_linear_one_misses(people):
    """Scores s = a XOR p, a = 1{age > 44}, p = 1{priors >= 2}: no linear function of the features describes them
    (linear R^2 near 0), a forest does (out-of-bag R^2 near 1). Permuting age changes s exactly when a_i != a_pi(i),
    so the expected importance is mean_ij |a_i - a_j| (as for the linear model above, with beta = 1); the same for
    priors; race, which the scores ignore, gets next to nothing. An unknown surrogate is refused."""
    a, p = people["age"] > 44, people["priors"] >= 2
    scores = (a ^ p).astype(float)
    features = ["age", "race", "priors"]
    _, linear_r2 = surrogate_importance(scores, people, features, n_repeats=20, seed=2)
    table, forest_r2 = surrogate_importance(scores, people, features, n_repeats=50, seed=2, surrogate="forest")
    importance = table.set_index("feature")["importance"]
    assert linear_r2 < 0.1 and forest_r2 > 0.9
    for feature, indicator in (("age", a), ("priors", p)):
        x = indicator.to_numpy(float)
        assert importance[feature] == pytest.approx(np.abs(x[:, None] - x).mean(), rel=0.1), feature
    assert importance["race"] < 0.05 * importance["age"]
    with pytest.raises(ValueError, match="surrogate must be one of linear, forest, not 'tree'"):
        surrogate_importance(scores, people, features, surrogate="tree")


def test_reliance_weights_importance_by_the_share_judging_unfair(people):
    scores = pd.DataFrame(
        {"fair": 0.01 * people["age"] + 0.05 * people["priors"], "uses_race": 0.3 * (people["race"] == "B")},
        index=people.index,
    )
    shares = pd.DataFrame(
        {
            "feature": ["age", "race", "priors"],
            "rater_group": "all",
            "share": [0.6, 0.1, 0.8],
            "ci_low": [0.5, 0.05, 0.7],
            "ci_high": [0.7, 0.2, 0.9],
        }
    )
    result = unfair_feature_reliance(scores, people, shares, n_repeats=10, seed=0)
    assert result.surrogate == "linear" and result.models["surrogate"].eq("linear").all()
    rows = result.features.set_index(["model", "feature"])
    # hand-worked weighting: unfair share 1 - 0.1 = 0.9 with CI (1 - 0.2, 1 - 0.05), times the importance
    race = rows.loc[("uses_race", "race")]
    assert race["unfair_share"] == pytest.approx(0.9) and race["weighted"] == pytest.approx(0.9 * race["importance"])
    assert (race["ci_unfair_low"], race["ci_unfair_high"]) == pytest.approx((0.8, 0.95))
    assert race["ci_weighted_low"] == pytest.approx(0.8 * race["importance"])
    models = result.models.set_index("model")
    assert models.loc["uses_race", "unfair_fraction"] == pytest.approx(0.9)  # all its reliance is on race
    assert rows.loc[("fair", "race"), "importance"] == pytest.approx(0, abs=1e-12)
    assert models.loc["fair", "reliance"] < models.loc["uses_race", "reliance"]
    with pytest.raises(ValueError, match="judged features missing from the subjects' columns: race"):
        unfair_feature_reliance(scores, people.drop(columns="race"), shares)


def test_lipschitz_table_per_model_and_no_violation_for_a_large_L():
    rng = np.random.default_rng(4)
    subjects = pd.DataFrame(rng.normal(size=(30, 2)), columns=["x", "y"])
    scores = pd.DataFrame({"a": rng.random(30), "b": rng.random(30)})
    metric = Metric(np.diag([1.0, 0.5]), [np.diag([1.0, 0.5]) * c for c in (0.5, 1, 2)])
    table, worst = lipschitz_table(scores, subjects, metric, L=1e9)
    assert table["statistic"].eq(0).all() and all(pairs.empty for pairs in worst.values())
    table, worst = lipschitz_table(scores, subjects, metric, L=0.1)
    assert list(table["model"]) == ["a", "b"] and table["n_pairs"].eq(435).all() and table["n_draws"].eq(3).all()
    assert (table["ci_low"] <= table["statistic"]).all() and (table["statistic"] <= table["ci_high"]).all()
