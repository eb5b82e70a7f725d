"""The one CR1 convention (analysis.clustered): V = G/(G-1) A^-1 (sum_g u_g u_g') A^-1 with t on G - 1 df,
checked against an independent numpy sandwich (the estimating equations written out, not statsmodels) for
the latent-property model and the utility model's pooled weights; Bradley-Terry's own sandwich follows it."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats
from statsmodels.tools.tools import add_constant

from analysis.clustered import clustered_logit
from analysis.paired_comparison import ALL_RATERS, utility_model
from fairness.feature_fairness import latent_property_model
from simulation.estimand_studies import FEATURES, PROPERTIES, choice_subjects, choices, property_judgements


def independent_cr1(y: np.ndarray, x: np.ndarray, clusters: np.ndarray, level: float = 0.95):
    """Logit MLE by scipy's BFGS on the log-likelihood, then the G/(G-1) sandwich and t_{G-1} intervals."""

    def loss(b):
        eta = x @ b
        return -(y * eta - np.logaddexp(0, eta)).sum()

    b = optimize.minimize(loss, np.zeros(x.shape[1]), jac=lambda b: -x.T @ (y - special.expit(x @ b)), tol=1e-12).x
    p = special.expit(x @ b)
    bread = np.linalg.inv((x * (p * (1 - p))[:, None]).T @ x)
    codes = pd.factorize(clusters)[0]
    g = codes.max() + 1
    scores = np.zeros((g, x.shape[1]))
    np.add.at(scores, codes, x * (y - p)[:, None])
    se = np.sqrt(np.diag(g / (g - 1) * bread @ scores.T @ scores @ bread))
    half = stats.t.ppf(0.5 + level / 2, g - 1) * se
    return b, se, b - half, b + half


def test_clustered_logit_is_the_g_over_g_minus_1_sandwich_with_t():
    rng = np.random.default_rng(1)
    n, g = 600, 30
    clusters = rng.integers(0, g, n)
    x = add_constant(rng.normal(size=(n, 2)))
    y = (rng.random(n) < special.expit(x @ [0.2, 0.5, -0.3] + rng.normal(0, 1, g)[clusters])).astype(float)
    fit = clustered_logit(y, x, clusters)
    b, se, low, high = independent_cr1(y, x, clusters)
    np.testing.assert_allclose(fit.params, b, rtol=1e-5)
    np.testing.assert_allclose(fit.standard_error, se, rtol=1e-5)
    np.testing.assert_allclose(fit.ci_low, low, rtol=1e-4)
    np.testing.assert_allclose(fit.pvalue, 2 * stats.t.sf(np.abs(b / se), g - 1), rtol=1e-4)
    with pytest.raises(ValueError, match="need 2"):
        clustered_logit(y, x, np.zeros(n, int))


def test_latent_property_model_uses_the_convention():
    frame = property_judgements(np.random.default_rng(2), raters=40)
    model = latent_property_model(frame, PROPERTIES)
    y = (frame["value"] >= 5).to_numpy(float)
    x = add_constant(frame[PROPERTIES].to_numpy(float) - 4)
    b, se, low, high = independent_cr1(y, x, frame["participant_id"].to_numpy())
    table = model.coefficients
    np.testing.assert_allclose(table["statistic"], b, rtol=1e-5)
    np.testing.assert_allclose(table["standard_error"], se, rtol=1e-5)
    np.testing.assert_allclose(table["ci_low"], low, rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(table["ci_high"], high, rtol=1e-4, atol=1e-8)


def test_utility_models_pooled_weights_use_the_convention():
    subjects = choice_subjects(12)
    frame = choices(np.random.default_rng(3), subjects, raters=30, per_rater=15)
    result = utility_model(frame, subjects, FEATURES, n_resamples=0)
    pooled = result.weights[result.weights["rater_group"] == ALL_RATERS].set_index("feature").loc[FEATURES]
    x = subjects.to_numpy()
    position = subjects.index
    winner, loser = position.get_indexer(frame["winner"]), position.get_indexer(frame["loser"])
    first = np.array([str(w) <= str(v) for w, v in zip(frame["winner"], frame["loser"], strict=True)])
    d = np.where(first[:, None], x[winner] - x[loser], x[loser] - x[winner])
    b, se, low, high = independent_cr1(first.astype(float), d, frame["rater"].to_numpy())
    np.testing.assert_allclose(pooled["weight"], b, rtol=1e-5)
    np.testing.assert_allclose(pooled["standard_error"], se, rtol=1e-5)
    np.testing.assert_allclose(pooled["ci_low"], low, rtol=1e-4)
