import numpy as np
import pandas as pd
import pytest
from scipy import special, stats
from statsmodels.genmod import families
from statsmodels.genmod.generalized_linear_model import GLM

from analysis.paired_comparison import bradley_terry

# Stigler (1994) citation counts among four journals, as in Agresti (2002, p. 448) and R's BradleyTerry2
# `citations` data (data/citations.R, BradleyTerry2 1.1.3): CITATIONS[cited][citing]; the cited journal
# "wins" (BradleyTerry2 ?citations, Details).
JOURNALS = ["Biometrika", "Comm Statist", "JASA", "JRSS-B"]
CITATIONS = [[714, 730, 498, 221], [33, 425, 68, 17], [320, 813, 1072, 142], [284, 276, 325, 188]]

# BradleyTerry2 (github.com/hturner/BradleyTerry2), tests/BTabilities.Rout.save (commit dffc0ac, R 3.6.0):
# BTabilities(BTm(cbind(win1, win2), journal1, journal2, data = citations.sf)), ability and s.e.
CITATIONS_BTM = {
    "Biometrika": (0.0, 0.0),
    "Comm Statist": (-2.9490725, 0.10254534),
    "JASA": (-0.4795698, 0.06058873),
    "JRSS-B": (0.2689541, 0.07082997),
}
# Same file, citeModel2 <- update(citeModel, refcat = "JASA"); also printed (4 decimals) in the package's
# vignette "Bradley-Terry Models in R", section 2.1 (0.4796, -2.4695, 0.7485).
CITATIONS_BTM_JASA = {
    "Biometrika": (0.4795698, 0.06058873),
    "Comm Statist": (-2.4695027, 0.09817049),
    "JASA": (0.0, 0.0),
    "JRSS-B": (0.7485238, 0.07294356),
}
# Vignette section 2.1, print(citeModel): "Residual Deviance: 4.293" (on 3 residual df).
CITATIONS_DEVIANCE = 4.293

# Davidson (1970), Example 2: chocolate pudding, six brands; PlackettLuce's `pudding` data (data/pudding.rda,
# PlackettLuce 0.4.3): (i, j, w_ij = i preferred, w_ji = j preferred, t_ij = no preference).
PUDDING = [
    (1, 2, 19, 22, 16), (1, 3, 16, 19, 12), (2, 3, 19, 19, 10), (1, 4, 18, 23, 13), (2, 4, 23, 19, 9),
    (3, 4, 19, 20, 15), (1, 5, 13, 19, 18), (2, 5, 16, 20, 12), (3, 5, 16, 15, 17), (4, 5, 17, 14, 16),
    (1, 6, 18, 21, 12), (2, 6, 22, 20, 12), (3, 6, 13, 18, 10), (4, 6, 14, 19, 18), (5, 6, 11, 21, 12),
]  # fmt: skip
# Davidson's (1970) worths pi_i (sum 1) and nu, as reproduced in PlackettLuce's vignette "Introduction to
# PlackettLuce", section 2.1.1 (coef(mod, log = FALSE), "the same worth parameters as Davidson (1970)"):
# 0.1388005 0.1729985 0.1617420 0.1653930 0.1586805 0.2023855, tie2 0.7468147. That fit stopped after 7
# iterations (maxit = 7), so they agree with the converged MLE to the 4 decimals Davidson printed.
PUDDING_WORTH = [0.1388, 0.1730, 0.1617, 0.1654, 0.1587, 0.2024]
PUDDING_NU = 0.7468
# Same vignette, section 2.2, summary(mod): log-worth relative to brand 1, Std. Error; tie2 is log nu;
# "Residual deviance: 1619.4" (-2 log-likelihood of the 745 comparisons).
PUDDING_LOG_WORTH = {
    2: (0.2202, 0.1872),
    3: (0.1530, 0.1935),
    4: (0.1753, 0.1882),
    5: (0.1339, 0.1927),
    6: (0.3771, 0.1924),
}
PUDDING_LOG_NU = (-0.2919, 0.0825)
PUDDING_DEVIANCE = 1619.4


def citations() -> pd.DataFrame:
    rows = [
        (JOURNALS[cited], JOURNALS[citing], CITATIONS[cited][citing])
        for cited in range(4)
        for citing in range(4)
        if cited != citing
    ]
    return pd.DataFrame(rows, columns=["cited", "citing", "n"])


def pudding() -> pd.DataFrame:
    rows = []
    for i, j, wins_i, wins_j, ties in PUDDING:
        rows += [(i, j, wins_i, 0), (j, i, wins_j, 0), (i, j, ties, 1)]
    return pd.DataFrame(rows, columns=["winner", "loser", "count", "tie"])


def expand(frame: pd.DataFrame, count: str) -> pd.DataFrame:
    """One row per comparison."""
    return frame.loc[frame.index.repeat(frame[count])].drop(columns=count).reset_index(drop=True)


def simulate(strength: np.ndarray, n: int, rng: np.random.Generator, model: str = "logit", nu: float = 0.0):
    k = strength.size
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k
    d = strength[first] - strength[second]
    u = rng.uniform(size=n)
    if nu > 0:
        denominator = np.exp(d / 2) + np.exp(-d / 2) + nu
        first_wins = u < np.exp(d / 2) / denominator
        tie = ~first_wins & (u < (np.exp(d / 2) + nu) / denominator)
    else:
        first_wins = u < (special.expit(d) if model == "logit" else stats.norm.cdf(d))
        tie = np.zeros(n, dtype=bool)
    frame = pd.DataFrame({"winner": np.where(first_wins, first, second), "loser": np.where(first_wins, second, first)})
    if nu > 0:
        frame["tie"] = tie.astype(int)
    return frame


# --- published values -------------------------------------------------------------------------------


@pytest.mark.parametrize("reference, expected", [(None, CITATIONS_BTM), ("JASA", CITATIONS_BTM_JASA)])
def test_citations_match_bradleyterry2(reference, expected):
    result = bradley_terry(citations(), winner="cited", loser="citing", count="n", reference=reference)
    assert result.reference == (reference or "Biometrika")
    assert list(result.strength.index) == JOURNALS
    for journal, (ability, se) in expected.items():
        assert result.strength[journal] == pytest.approx(ability, abs=5e-8)
        assert result.standard_error[journal] == pytest.approx(se, abs=5e-9)
    assert result.n_comparisons == sum(map(sum, CITATIONS)) - sum(CITATIONS[k][k] for k in range(4))
    assert result.model == "logit" and result.tie_parameter is None


def test_citations_residual_deviance():
    frame = citations()
    result = bradley_terry(frame, winner="cited", loser="citing", count="n")
    # deviance = 2 (saturated - fitted) log-likelihood; saturated: each pair's observed proportions.
    wins = {(a, b): n for a, b, n in frame.itertuples(index=False)}
    saturated = sum(n * np.log(n / (n + wins[(b, a)])) for (a, b), n in wins.items())
    assert 2 * (saturated - result.log_likelihood) == pytest.approx(CITATIONS_DEVIANCE, abs=5e-4)


def design(frame: pd.DataFrame, items: list) -> tuple[np.ndarray, np.ndarray]:
    """Binomial GLM of BTm: one row per ordered pair a < b, columns x_a = 1, x_b = -1 (reference dropped)."""
    wins = {(a, b): n for a, b, n in frame.itertuples(index=False)}
    rows, response = [], []
    for p, a in enumerate(items):
        for b in items[p + 1 :]:
            x = np.zeros(len(items))
            x[items.index(a)], x[items.index(b)] = 1, -1
            rows.append(x[1:])
            response.append((wins.get((a, b), 0), wins.get((b, a), 0)))
    return np.array(rows), np.array(response)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_citations_match_statsmodels_binomial_glm(link):
    """No published Thurstone-Mosteller fit of these data was found; BTm(..., family = binomial(link =
    "probit")) is the binomial GLM below, fitted here by statsmodels (IRLS, an independent implementation)."""
    frame = citations()
    x, y = design(frame, JOURNALS)
    family = families.Binomial(link=families.links.Logit() if link == "logit" else families.links.Probit())
    glm = GLM(y, x, family=family).fit(tol=1e-12)
    result = bradley_terry(frame, winner="cited", loser="citing", count="n", model=link)
    assert result.strength.iloc[1:].to_numpy() == pytest.approx(glm.params, abs=1e-8)
    assert result.standard_error.iloc[1:].to_numpy() == pytest.approx(glm.bse, rel=1e-6)
    assert result.covariance.iloc[1:, 1:].to_numpy() == pytest.approx(glm.cov_params(), rel=1e-6)


def test_probit_strengths_are_on_the_normal_scale():
    result = bradley_terry(citations(), winner="cited", loser="citing", count="n", model="probit")
    logit = bradley_terry(citations(), winner="cited", loser="citing", count="n")
    # the usual logit / probit scale factor of about 1.6-1.8
    assert (logit.strength.iloc[1:] / result.strength.iloc[1:]).between(1.5, 1.9).all()


def test_pudding_matches_davidson_1970():
    result = bradley_terry(pudding(), count="count")
    worth = np.exp(result.strength) / np.exp(result.strength).sum()
    assert worth.round(4).tolist() == PUDDING_WORTH
    assert round(result.tie_parameter, 4) == PUDDING_NU
    assert result.n_comparisons == sum(wins + losses + ties for _, _, wins, losses, ties in PUDDING) == 745


def test_pudding_matches_plackettluce_standard_errors():
    result = bradley_terry(pudding(), count="count")
    for brand, (estimate, se) in PUDDING_LOG_WORTH.items():
        # PlackettLuce stopped at 7 iterations: estimates within 2e-4, standard errors to 4 decimals
        assert result.strength[brand] == pytest.approx(estimate, abs=2e-4)
        assert result.standard_error[brand] == pytest.approx(se, abs=5e-5)
    assert np.log(result.tie_parameter) == pytest.approx(PUDDING_LOG_NU[0], abs=5e-5)
    assert result.tie_standard_error == pytest.approx(PUDDING_LOG_NU[1], abs=5e-5)
    assert -2 * result.log_likelihood == pytest.approx(PUDDING_DEVIANCE, abs=0.05)
    low, high = result.tie_confidence_interval()
    assert low < result.tie_parameter < high
    assert np.log(high) - np.log(low) == pytest.approx(2 * 1.959964 * result.tie_standard_error)


def test_ties_one_row_per_comparison_equals_counts():
    counted = bradley_terry(pudding(), count="count")
    rows = bradley_terry(expand(pudding(), "count"))
    assert rows.strength.to_numpy() == pytest.approx(counted.strength.to_numpy(), abs=1e-10)
    assert rows.tie_parameter == pytest.approx(counted.tie_parameter, rel=1e-10)
    assert rows.log_likelihood == pytest.approx(counted.log_likelihood, rel=1e-12)


def test_tie_column_without_ties_is_the_plain_model():
    frame = citations().assign(tie=0)
    with_column = bradley_terry(frame, winner="cited", loser="citing", count="n")
    assert with_column.tie_parameter is None and with_column.tie_confidence_interval() is None
    assert with_column.strength["JASA"] == pytest.approx(CITATIONS_BTM["JASA"][0], abs=5e-8)


def test_ties_need_the_logit_model():
    with pytest.raises(ValueError, match="Davidson"):
        bradley_terry(pudding(), count="count", model="probit")


def test_only_ties_is_refused():
    frame = pd.DataFrame({"winner": ["a", "b", "a"], "loser": ["b", "c", "c"], "tie": [1, 1, 1]})
    with pytest.raises(ValueError, match="every comparison is a tie"):
        bradley_terry(frame)


def test_ties_make_strengths_finite():
    # a never loses, but ties with b: with ties as both directions the MLE exists
    frame = pd.DataFrame(
        {"winner": ["a", "a", "b", "c", "a"], "loser": ["b", "c", "c", "b", "b"], "tie": [0, 0, 0, 0, 1]}
    )
    result = bradley_terry(frame)
    assert np.isfinite(result.strength).all() and np.isfinite(result.standard_error).all()


# --- properties -------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["logit", "probit"])
def test_recovers_known_strengths(model):
    rng = np.random.default_rng(21)
    truth = np.linspace(-1.5, 1.5, 12)
    result = bradley_terry(simulate(truth, 60_000, rng, model), model=model)
    z = (result.strength.to_numpy()[1:] - (truth[1:] - truth[0])) / result.standard_error.to_numpy()[1:]
    assert np.abs(z).max() < 4
    assert np.abs(result.strength.to_numpy() - (truth - truth[0])).max() < 0.1


def test_recovers_tie_parameter():
    rng = np.random.default_rng(5)
    truth = np.linspace(-1, 1, 8)
    result = bradley_terry(simulate(truth, 40_000, rng, nu=0.6))
    assert abs(np.log(result.tie_parameter) - np.log(0.6)) < 4 * result.tie_standard_error
    assert np.abs(result.strength.to_numpy() - (truth - truth[0])).max() < 0.1


@pytest.mark.parametrize("model, nu", [("logit", 0.0), ("probit", 0.0), ("logit", 0.5)])
def test_wald_intervals_cover(model, nu):
    """20 items, 2,000 comparisons, 200 replications: the 95% Wald CIs of s_i - s_ref cover >= 93%."""
    rng = np.random.default_rng(2024)
    truth = rng.normal(0, 0.7, 20)
    target = truth - truth[0]
    covered, total = 0, 0
    nu_covered = 0
    for _ in range(200):
        result = bradley_terry(simulate(truth, 2_000, rng, model, nu), model=model)
        low, high = result.confidence_interval(0.95)
        inside = (low.to_numpy()[1:] <= target[1:]) & (target[1:] <= high.to_numpy()[1:])
        covered += int(inside.sum())
        total += inside.size
        if nu:
            nu_low, nu_high = result.tie_confidence_interval()
            nu_covered += nu_low <= nu <= nu_high
    assert covered / total >= 0.93
    if nu:
        assert nu_covered / 200 >= 0.9


def test_row_order_does_not_matter():
    rng = np.random.default_rng(1)
    frame = simulate(np.linspace(-1, 1, 10), 3_000, rng)
    shuffled = frame.sample(frac=1, random_state=3)
    a, b = bradley_terry(frame), bradley_terry(shuffled)
    pd.testing.assert_series_equal(a.strength, b.strength, atol=1e-10, rtol=0)
    pd.testing.assert_series_equal(a.standard_error, b.standard_error, atol=1e-10, rtol=0)
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)


def test_reference_changes_only_the_origin():
    rng = np.random.default_rng(2)
    frame = simulate(np.linspace(-1, 1, 10), 3_000, rng)
    a, b = bradley_terry(frame), bradley_terry(frame, reference=7)
    assert a.reference == 0 and b.reference == 7
    assert b.strength[7] == 0 and b.standard_error[7] == 0
    assert (b.strength - b.strength[3]).to_numpy() == pytest.approx((a.strength - a.strength[3]).to_numpy(), abs=1e-9)
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)
    # the standard error of a difference is the same from either covariance matrix
    va, vb = a.covariance, b.covariance
    assert va.loc[3, 3] + va.loc[5, 5] - 2 * va.loc[3, 5] == pytest.approx(
        vb.loc[3, 3] + vb.loc[5, 5] - 2 * vb.loc[3, 5]
    )


def test_counts_equal_repeated_rows():
    frame = citations()
    counted = bradley_terry(frame, winner="cited", loser="citing", count="n")
    rows = bradley_terry(expand(frame, "n"), winner="cited", loser="citing")
    assert rows.strength.to_numpy() == pytest.approx(counted.strength.to_numpy(), abs=1e-10)
    assert rows.n_comparisons == counted.n_comparisons


# --- small and degenerate inputs --------------------------------------------------------------------


@pytest.mark.parametrize("model", ["logit", "probit"])
def test_two_items_closed_form(model):
    frame = pd.DataFrame({"winner": ["b", "b", "b", "a"], "loser": ["a", "a", "a", "b"]})
    result = bradley_terry(frame, model=model)
    p = 0.75
    if model == "logit":
        strength, se = special.logit(p), np.sqrt(1 / (4 * p * (1 - p)))
    else:  # expected information n phi^2 / (p (1 - p)), the delta-method variance of Phi^-1(p_hat)
        strength = stats.norm.ppf(p)
        se = np.sqrt(p * (1 - p) / 4) / stats.norm.pdf(strength)
    assert result.strength["b"] == pytest.approx(strength, rel=1e-10)
    assert result.standard_error["b"] == pytest.approx(se, rel=1e-8)
    assert result.log_likelihood == pytest.approx(3 * np.log(p) + np.log(1 - p), rel=1e-10)
    low, high = result.confidence_interval()
    assert (low["b"], high["b"]) == pytest.approx((strength - 1.959964 * se, strength + 1.959964 * se), rel=1e-6)
    assert (low["a"], high["a"]) == (0, 0)
    table = result.summary(0.9)
    assert list(table.columns) == ["strength", "standard_error", "low", "high"]


def test_disconnected_graph_names_the_components():
    frame = pd.DataFrame({"winner": ["a", "b", "c", "d"], "loser": ["b", "a", "d", "c"]})
    with pytest.raises(ValueError, match=r"do not connect all items: \{a, b\} and \{c, d\} are never compared"):
        bradley_terry(frame)


@pytest.mark.parametrize(
    "winners, losers, message",
    [
        (["a", "a", "b", "c"], ["b", "c", "c", "b"], r"\{a\} never lost"),
        (["a", "b", "a", "b"], ["b", "a", "c", "c"], r"\{c\} never won"),
        # a and b beat each other but never lose to c or d, which beat each other
        (
            ["a", "b", "c", "d", "a", "b"],
            ["b", "a", "d", "c", "c", "d"],
            r"group \{a, b\} never lost.*group \{c, d\} never won",
        ),
    ],
)
def test_infinite_strengths_are_refused(winners, losers, message):
    with pytest.raises(ValueError, match=f"strengths are infinite: .*{message}"):
        bradley_terry(pd.DataFrame({"winner": winners, "loser": losers}))


@pytest.mark.parametrize(
    "frame, kwargs, message",
    [
        (pd.DataFrame({"w": ["a"], "loser": ["b"]}), {}, r"winner='winner' is not a column"),
        (pd.DataFrame({"winner": ["a"], "loser": ["b"]}), {"count": "n"}, r"count='n' is not a column"),
        (pd.DataFrame({"winner": ["a", "a"], "loser": ["b", "a"]}), {}, r"compared with itself .* item 'a'"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"], "n": [2, 0]}), {"count": "n"}, "positive whole"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"], "n": [2, -1]}), {"count": "n"}, "positive whole"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"], "n": [2, 1.5]}), {"count": "n"}, "positive whole"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"], "n": [2, None]}), {"count": "n"}, "positive whole"),
        (pd.DataFrame({"winner": [], "loser": []}), {}, "empty"),
        (pd.DataFrame({"winner": ["a", None], "loser": ["b", "a"]}), {}, "missing item ids"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"], "tie": [0, 2]}), {}, "'tie' column must be 0/1"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"]}), {"reference": "z"}, "reference 'z' is not"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"]}), {"model": "cauchit"}, "model must be one of"),
        (pd.DataFrame({"winner": ["a", "b"], "loser": ["b", "a"]}), {"loser": "winner"}, "two different columns"),
    ],
)
def test_bad_input(frame, kwargs, message):
    with pytest.raises(ValueError, match=message):
        bradley_terry(frame, **kwargs)


def test_fewer_than_two_items():
    with pytest.raises(ValueError, match=r"at least 2 items, got 1: \{a\}"):
        bradley_terry(pd.DataFrame({"winner": ["a", "a"], "loser": ["a", "a"]}))


def test_item_ids_of_mixed_types_are_sorted_by_pandas():
    result = bradley_terry(pd.DataFrame({"winner": ["a", 1, 1], "loser": [1, "a", "a"]}))
    assert list(result.strength.index) == [1, "a"] and result.strength["a"] == pytest.approx(-np.log(2))


def test_large_strength_differences_stay_finite():
    # b beats a 999 times in 1,000, with ties: no overflow in Davidson's terms
    frame = pd.DataFrame({"winner": ["b", "a", "a"], "loser": ["a", "b", "b"], "count": [999, 1, 1], "tie": [0, 0, 1]})
    result = bradley_terry(frame, count="count")
    assert np.isfinite(result.strength["b"]) and result.strength["b"] > 5


def test_not_a_dataframe():
    with pytest.raises(TypeError, match="DataFrame"):
        bradley_terry([("a", "b")])


def _rater_choices(truth: np.ndarray, raters: int, choices: int, spread: float, rng) -> pd.DataFrame:
    """Each rater judges ``choices`` random pairs by their own strengths, truth + N(0, spread^2) per item."""
    k = truth.size
    own = truth + rng.normal(0, spread, (raters, k))
    rater = np.repeat(np.arange(raters), choices)
    a = rng.integers(0, k, rater.size)
    b = (a + rng.integers(1, k, rater.size)) % k
    first = rng.random(rater.size) < 1 / (1 + np.exp(-(own[rater, a] - own[rater, b])))
    return pd.DataFrame({"winner": np.where(first, a, b), "loser": np.where(first, b, a), "rater": rater})


def test_clustered_covariance_is_the_wald_one_when_every_comparison_is_its_own_cluster():
    rng = np.random.default_rng(3)
    frame = simulate(np.linspace(-1, 1, 6), 4_000, rng)
    frame["row"] = np.arange(len(frame))
    wald, robust = bradley_terry(frame.drop(columns="row")), bradley_terry(frame, cluster="row")
    pd.testing.assert_series_equal(wald.strength, robust.strength)
    np.testing.assert_allclose(robust.standard_error[1:], wald.standard_error[1:], rtol=0.05)
    assert robust.n_clusters == len(frame) and wald.n_clusters is None


def test_clustered_intervals_need_two_raters_with_a_name_each():
    frame = pd.DataFrame({"winner": ["a", "b", "c", "a"], "loser": ["b", "c", "a", "c"], "rater": ["r"] * 4})
    with pytest.raises(ValueError, match="at least 2 clusters"):
        bradley_terry(frame, cluster="rater")
    with pytest.raises(ValueError, match="in every row"):
        bradley_terry(frame.assign(rater=["r", None, "s", "s"]), cluster="rater")
    with pytest.raises(ValueError, match="not a column"):
        bradley_terry(frame, cluster="who")


@pytest.mark.slow  # a coverage simulation of hundreds of studies
def test_rater_clustered_intervals_cover_when_raters_differ_and_wald_ones_do_not():
    """300 studies of 60 raters x 20 choices over 10 subjects (the choice template's scale), raters' own
    strengths truth + N(0, 0.8^2): the 95% rater-clustered t intervals cover the pooled model's strengths
    (its estimand, the fit to 40,000 such raters) at least 93% of the time per subject; the Wald intervals,
    which treat the choices as independent, cover less."""
    rng = np.random.default_rng(11)
    truth = np.linspace(-1.2, 1.2, 10)
    target = bradley_terry(_rater_choices(truth, 40_000, 20, 0.8, rng), cluster="rater").strength.to_numpy()[1:]
    robust, wald = [], []
    for _ in range(300):
        frame = _rater_choices(truth, 60, 20, 0.8, rng)
        for fit, kept in (
            (bradley_terry(frame, cluster="rater"), robust),
            (bradley_terry(frame.drop(columns="rater")), wald),
        ):
            low, high = fit.confidence_interval()
            kept.append((low.to_numpy()[1:] <= target) & (target <= high.to_numpy()[1:]))
    covered, naive = np.mean(robust, axis=0), np.mean(wald, axis=0)
    assert covered.min() >= 0.93, covered
    assert naive.mean() < covered.mean() - 0.02, (naive, covered)
