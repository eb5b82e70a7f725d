"""Plackett-Luce strengths from rankings (``analysis.paired_comparison.plackett_luce``) against an independent
implementation: the log-likelihood written out ranking by ranking and maximised by scipy.optimize, its
numerical Hessian for the model-based standard errors and per-rater numerical scores for the CR1 sandwich;
and against ``bradley_terry`` on rankings of two (a ranking of two is a paired comparison)."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

from analysis.paired_comparison import bradley_terry, plackett_luce

ITEMS = ["a", "b", "c", "d", "e", "f"]
TRUE = np.array([0.0, 0.6, -0.4, 1.0, 0.2, -0.8])


def simulated(n: int, seed: int, sizes=(3, 4, 5), raters: int = 20) -> pd.DataFrame:
    """``n`` rankings of 3-5 random items, each by a Plackett-Luce rater (Gumbel-max: ordering s + Gumbel
    noise draws a Plackett-Luce ranking), made by ``raters`` raters in turn."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n):
        shown = rng.choice(len(ITEMS), rng.choice(sizes), replace=False)
        order = shown[np.argsort(-(TRUE[shown] + rng.gumbel(size=shown.size)))]
        rows += [
            {"ranking": r, "item": ITEMS[i], "rank": p + 1, "rater": f"r{r % raters}"} for p, i in enumerate(order)
        ]
    return pd.DataFrame(rows).sample(frac=1, random_state=seed)  # row order must not matter


def orders(frame: pd.DataFrame) -> dict[int, np.ndarray]:
    """Ranking size m -> (rankings x m) item positions in ITEMS, first-ranked first."""
    ordered = frame.sort_values(["ranking", "rank"])
    lists = ordered.groupby("ranking")["item"].agg(lambda x: [ITEMS.index(i) for i in x])
    out: dict[int, list] = {}
    for order in lists:
        out.setdefault(len(order), []).append(order)
    return {m: np.array(rows) for m, rows in out.items()}


def loglik_of(s: np.ndarray, by_size: dict[int, np.ndarray]) -> float:
    """log P = sum over rankings and positions p < m of [s_(p) - log sum_{q >= p} exp(s_(q))], written out."""
    return sum(
        float((s[order[:, p]] - special.logsumexp(s[order[:, p:]], axis=1)).sum())
        for order in by_size.values()
        for p in range(order.shape[1] - 1)
    )


def independent_fit(frame: pd.DataFrame, reference: str = "a"):
    """Strengths maximising the written-out log-likelihood (reference at 0), the log-likelihood as a function
    of the free strengths (of some rankings only, given), and the free items."""
    free = [x for x in ITEMS if x != reference]
    keep = [ITEMS.index(x) for x in free]

    every = orders(frame)

    def loglik(x: np.ndarray, by_size: dict[int, np.ndarray] = every) -> float:
        s = np.zeros(len(ITEMS))
        s[keep] = x
        return loglik_of(s, by_size)

    best = optimize.minimize(lambda x: -loglik(x), np.zeros(len(free)), method="BFGS", options={"gtol": 1e-10})
    return best.x, loglik, free


def numerical_hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    n = x.size
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j) + f(x - e_i - e_j)) / (4 * h * h)
    return out


def numerical_gradient(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    return np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(x.size) * h])


def test_strengths_and_standard_errors_match_an_independent_maximisation():
    frame = simulated(300, seed=1)
    fit = plackett_luce(frame)
    x, loglik, free = independent_fit(frame)
    assert fit.reference == "a" and fit.strength["a"] == 0 and fit.standard_error["a"] == 0
    np.testing.assert_allclose(fit.strength[free], x, atol=1e-6)
    assert fit.log_likelihood == pytest.approx(loglik(x), abs=1e-8)
    covariance = np.linalg.inv(-numerical_hessian(loglik, fit.strength[free].to_numpy()))
    np.testing.assert_allclose(fit.standard_error[free], np.sqrt(np.diag(covariance)), rtol=1e-4)
    np.testing.assert_allclose(fit.covariance.loc[free, free], covariance, rtol=1e-3, atol=1e-6)
    assert fit.n_comparisons == 300 and fit.model == "plackett-luce" and fit.n_clusters is None
    z = stats.norm.ppf(0.975)
    assert fit.confidence_interval().high["d"] == pytest.approx(fit.strength["d"] + z * fit.standard_error["d"])
    assert np.corrcoef(fit.strength[ITEMS], TRUE)[0, 1] > 0.95  # and they estimate what generated them


def test_rater_clustered_intervals_are_cr1_over_raters_with_t_on_raters_minus_one_df():
    """V = G/(G-1) A^-1 (sum_g u_g u_g') A^-1, u_g the numerical gradient of rater g's log-likelihood."""
    frame = simulated(200, seed=2, raters=12)
    fit = plackett_luce(frame, cluster="rater", reference="c")
    x, loglik, free = independent_fit(frame, reference="c")
    bread = np.linalg.inv(-numerical_hessian(loglik, x))
    parts = [orders(part) for _, part in frame.groupby("rater")]
    scores = np.array([numerical_gradient(lambda v, p=part: loglik(v, p), x) for part in parts])
    expected = 12 / 11 * bread @ scores.T @ scores @ bread
    np.testing.assert_allclose(fit.covariance.loc[free, free], expected, rtol=1e-4, atol=1e-8)
    assert fit.n_clusters == 12 and fit.reference == "c"
    half = stats.t.ppf(0.975, 11) * fit.standard_error["f"]
    assert fit.confidence_interval().low["f"] == pytest.approx(fit.strength["f"] - half)


def test_rankings_of_two_are_bradley_terry_comparisons():
    frame = simulated(400, seed=3, sizes=(2,))
    first = frame[frame["rank"] == 1].set_index("ranking")
    second = frame[frame["rank"] == 2].set_index("ranking").loc[first.index]
    comparisons = pd.DataFrame({"winner": first["item"], "loser": second["item"], "rater": first["rater"]})
    for cluster in (None, "rater"):
        ranked, paired = plackett_luce(frame, cluster=cluster), bradley_terry(comparisons, cluster=cluster)
        np.testing.assert_allclose(ranked.strength, paired.strength, atol=1e-7)
        np.testing.assert_allclose(ranked.standard_error, paired.standard_error, atol=1e-7)
        np.testing.assert_allclose(ranked.confidence_interval().low, paired.confidence_interval().low, atol=1e-7)
        assert ranked.log_likelihood == pytest.approx(paired.log_likelihood, abs=1e-7)


def test_another_reference_shifts_the_strengths_only():
    frame = simulated(150, seed=4)
    base, other = plackett_luce(frame), plackett_luce(frame, reference="d")
    np.testing.assert_allclose(other.strength, base.strength - base.strength["d"], atol=1e-8)


def bad(frame: pd.DataFrame, row: int, column: str, value) -> pd.DataFrame:
    out = frame.copy().astype({column: object})
    out.loc[row, column] = value
    return out


ONE = pd.DataFrame(
    {"ranking": ["x"] * 3 + ["y"] * 3, "item": ["a", "b", "c", "c", "b", "a"], "rank": [1, 2, 3] * 2, "rater": "r"}
)


@pytest.mark.parametrize(
    ("frame", "options", "message"),
    [
        (bad(ONE, 1, "rank", 1), {}, "ranking 'x' gives the ranks [1, 1, 3]"),
        (bad(ONE, 2, "rank", 4), {}, "ranking 'x' gives the ranks [1, 2, 4]"),
        (bad(ONE, 4, "item", "a"), {}, "ranking 'y' ranks item 'a' twice"),
        (bad(ONE, 0, "rank", 1.5), {}, "must be a whole number >= 1"),
        (ONE.drop(columns="rank"), {}, "rank='rank' is not a column"),
        (ONE.iloc[:0], {}, "empty"),
        (ONE.iloc[[0, 3]].assign(rank=1), {}, "ranking 'x' gives the ranks [1]"),
        (ONE.assign(rank=[1, 2, 3, 2, 3, 1]), {}, "{a} never lost"),  # a is first in both: infinite
        (ONE, {"reference": "z"}, "reference 'z' is not one of the ranked items"),
        (ONE, {"cluster": "rater"}, "at least 2 clusters"),
        (ONE.assign(rater=["r", "s", "r", "s", "s", "s"]), {"cluster": "rater"}, "one rater per ranking"),
    ],
)
def test_bad_rankings_are_refused_with_a_specific_error(frame, options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        plackett_luce(frame, **options)
