"""Trade-off weights (``analysis.tradeoff``): the conditional logit recovers the weights simulated raters
choose by, equals a direct maximisation of its likelihood with a hand-computed CR1 sandwich, and scores
models with intervals from the weights' covariance."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

from analysis.tradeoff import FEATURES, model_scores, tradeoff_weights

TRUTH = np.array([6.0, -8.0, -3.0, -5.0])


def simulated_choices(rng: np.random.Generator, *, raters: int = 80, per_rater: int = 20, truth=TRUTH) -> pd.DataFrame:
    """Raters choosing A with P = expit(truth . (x_A - x_B)), the differences drawn like those of models on
    sub-pools (accuracy differences about 0.05, gap differences about 0.1)."""
    n = raters * per_rater
    d = rng.normal(0, [0.05, 0.1, 0.1, 0.1], size=(n, len(FEATURES)))
    chose = (rng.random(n) < special.expit(d @ truth)).astype(int)
    frame = pd.DataFrame(d, columns=list(FEATURES))
    frame["chose_a"] = chose
    frame["rater"] = np.repeat(np.arange(raters), per_rater)
    frame["rater_group"] = np.where(frame["rater"] % 2 == 0, "even", "odd")
    return frame


def test_the_weights_recover_the_simulated_truth():
    frame = simulated_choices(np.random.default_rng(1), raters=300, per_rater=20)
    table = tradeoff_weights(frame, by="rater_group").table
    overall = table[table["rater_group"] == "all participants"].set_index("feature")
    assert list(overall.index) == list(FEATURES) and set(table["rater_group"]) == {"all participants", "even", "odd"}
    se = overall["standard_error"].to_numpy()
    assert np.all(np.abs(overall["weight"].to_numpy() - TRUTH) < 3 * se), (overall["weight"], se)
    assert np.all(se < 1.5)  # 6,000 choices pin each weight to within about 1
    assert (overall["ci_low"] < TRUTH).all() and (TRUTH < overall["ci_high"]).all()
    assert (overall["n_raters"] == 300).all() and (overall["n_choices"] == 6000).all()


def test_the_weights_and_intervals_equal_a_direct_likelihood_fit_with_a_hand_computed_cr1_sandwich():
    frame = simulated_choices(np.random.default_rng(2), raters=40, per_rater=15)
    fit = tradeoff_weights(frame, confidence_level=0.9)
    table = fit.table.set_index("feature")
    d, y, g = frame[list(FEATURES)].to_numpy(), frame["chose_a"].to_numpy(), frame["rater"].to_numpy()

    def negative_log_likelihood(w):
        eta = d @ w
        return -np.sum(y * eta - np.logaddexp(0, eta))

    direct = optimize.minimize(negative_log_likelihood, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    assert table["weight"].to_numpy() == pytest.approx(direct.x, abs=1e-4)
    w = table["weight"].to_numpy()
    p = special.expit(d @ w)
    bread = np.linalg.inv((d * (p * (1 - p))[:, None]).T @ d)
    scores = np.array([((y - p)[g == r, None] * d[g == r]).sum(axis=0) for r in np.unique(g)])
    meat = scores.T @ scores
    clusters = len(np.unique(g))
    covariance = clusters / (clusters - 1) * bread @ meat @ bread
    se = np.sqrt(np.diag(covariance))
    assert table["standard_error"].to_numpy() == pytest.approx(se, rel=1e-6)
    assert fit.covariance["all participants"].to_numpy() == pytest.approx(covariance, rel=1e-6)
    half = stats.t.ppf(0.95, clusters - 1) * se
    assert table["ci_low"].to_numpy() == pytest.approx(w - half, rel=1e-6)
    assert table["pvalue"].to_numpy() == pytest.approx(2 * stats.t.sf(np.abs(w / se), clusters - 1), rel=1e-6)


def test_a_group_the_weights_cannot_be_fitted_for_gets_a_note():
    frame = simulated_choices(np.random.default_rng(3), raters=10, per_rater=10)
    frame.loc[frame["rater_group"] == "odd", "fnr_gap"] = 0.0  # the odd raters never saw an FNR difference
    frame.loc[frame["rater"] == 0, "rater_group"] = "alone"
    fit = tradeoff_weights(frame, by="rater_group")
    assert set(fit.table["rater_group"]) == {"all participants", "even"}
    assert "odd: no trade-off weights (its choices' differences do not identify all 4)" in fit.notes
    assert "alone: no trade-off weights (1 rater; rater-clustered SEs need 2)" in fit.notes
    with pytest.raises(ValueError, match="'chose_a' must be 0 or 1"):
        tradeoff_weights(frame.assign(chose_a=2))
    with pytest.raises(ValueError, match=r"choices lack the columns \['fpr_gap'\]"):
        tradeoff_weights(frame.drop(columns="fpr_gap"))


def test_models_are_scored_by_the_weights_with_intervals_of_their_differences():
    frame = simulated_choices(np.random.default_rng(4), raters=60, per_rater=15)
    fit = tradeoff_weights(frame)
    features = pd.DataFrame(
        [[0.70, 0.20, 0.10, 0.15], [0.66, 0.05, 0.08, 0.02], [0.70, 0.20, 0.10, 0.15]],
        index=["accurate", "fair", "twin"],
        columns=list(FEATURES),
    )
    scores = model_scores(fit, features, reference="accurate").table.set_index("model")
    w = fit.table.set_index("feature")["weight"].to_numpy()
    assert scores["score"].to_numpy() == pytest.approx(features.to_numpy() @ w)
    assert scores.loc["twin", "difference"] == 0 and scores.loc["twin", "standard_error"] == 0
    d = features.loc["fair"].to_numpy() - features.loc["accurate"].to_numpy()
    se = np.sqrt(d @ fit.covariance["all participants"].to_numpy() @ d)
    assert scores.loc["fair", "standard_error"] == pytest.approx(se)
    assert scores.loc["fair", "ci_high"] - scores.loc["fair", "difference"] == pytest.approx(
        stats.t.ppf(0.975, 59) * se
    )
    with pytest.raises(ValueError, match="rater group 'nobody' has no trade-off weights"):
        model_scores(fit, features, rater_group="nobody")
    with pytest.raises(ValueError, match="reference model 'x' is not one of accurate, fair, twin"):
        model_scores(fit, features, reference="x")


def test_model_strengths_are_bradley_terry_over_the_models_by_rater_group():
    from analysis.paired_comparison import bradley_terry, bradley_terry_by_group

    rng = np.random.default_rng(5)
    models = np.array(["a", "b", "c"])
    rows = [(*rng.permutation(models)[:2], r % 4) for r in range(300)]
    frame = pd.DataFrame(rows, columns=["winner", "loser", "rater"]).assign(rater_group=lambda f: f["rater"] % 2)
    table = bradley_terry_by_group(frame, item="model").table
    overall = table[table["rater_group"] == "all participants"].set_index("model")
    expected = bradley_terry(frame, cluster="rater")
    assert overall["strength"].to_numpy() == pytest.approx(expected.strength.to_numpy())
    assert overall["ci_low"].to_numpy() == pytest.approx(expected.confidence_interval().low.to_numpy())
    assert list(overall["note"]) == ["reference (0)", "", ""] and set(table["rater_group"]) == {
        "all participants",
        "0",
        "1",
    }
