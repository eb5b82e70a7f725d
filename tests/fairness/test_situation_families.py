"""Situation testing's per-complainant tests: the paper's one-sided Wald rule (Alvarez & Ruggieri, Eq. 10) is
kept for its counts (``_sig``); beside it each complainant's one-sided Fisher exact test of its 2x2 table
(``_pvalue``, ``_sig_exact``), checked here against the hypergeometric tail summed by hand with math.comb, and
the complainants of one method and k as one family adjusted by Holm (1979) or Benjamini-Hochberg (1995),
recomputed by hand."""

from math import comb
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from fairness.situation_testing import exact_pvalue, situation_testing

DATA = Path(__file__).resolve().parents[3] / "shared" / "reference-data" / "counterfactual_situation_testing"
COLUMNS = ["AnnualSalary", "AccountBalance", "Gender", "LoanApproval"]
METHODS = ("ST", "CSTwo", "CSTwi")


@pytest.fixture(scope="module")
def loans():
    if not (DATA / "LoanApplication_v2.csv").exists():
        pytest.skip("the reference data are not on this machine")
    data = pd.read_csv(DATA / "LoanApplication_v2.csv", sep="|").head(400)[COLUMNS]
    cf = pd.read_csv(DATA / "cf_LoanApplication_v2.csv", sep="|").head(400)[COLUMNS]
    return data, cf


def run(loans, **options):
    data, cf = loans
    return situation_testing(
        data,
        counterfactuals=cf,
        protected="Gender",
        protected_value=1,
        target="LoanApproval",
        negative_outcome=-1,
        k=[5, 10],
        **options,
    )


def fisher_by_hand(n_c: int, k_c: int, n_t: int, k_t: int, *, greater: bool) -> float:
    """P(X >= n_c) (or <=) for X the control group's negatives when the n_c + n_t negatives fall at random
    among the k_c + k_t neighbours: sum_x C(n, x) C(N - n, k_c - x) / C(N, k_c)."""
    n, total = n_c + n_t, k_c + k_t
    xs = range(n_c, min(n, k_c) + 1) if greater else range(max(0, n - k_t), n_c + 1)
    return sum(comb(n, x) * comb(total - n, k_c - x) for x in xs) / comb(total, k_c)


# (negatives among k_c control neighbours, among k_t test neighbours) -> P(X >= n_c), exact fractions: e.g.
# (2 of 5, 0 of 5): C(2,2) C(8,3) / C(10,5) = 56 / 252 = 2/9, where the Wald rule's dual p is 0.034 (significant)
TABLES = {
    (2, 5, 0, 5): 2 / 9,
    (5, 5, 0, 5): 1 / 252,
    (0, 5, 0, 5): 1.0,
    (5, 5, 5, 5): 1.0,
    (3, 5, 1, 5): (comb(4, 3) * comb(6, 2) + comb(4, 4) * comb(6, 1)) / comb(10, 5),
    (7, 16, 2, 16): sum(comb(9, x) * comb(23, 16 - x) for x in range(7, 10)) / comb(32, 16),
}


@pytest.mark.parametrize(("table", "expected"), TABLES.items())
def test_exact_pvalue_is_the_hypergeometric_tail(table, expected):
    n_c, k_c, n_t, k_t = table
    assert exact_pvalue(np.array([n_c]), np.array([k_c]), np.array([n_t]), np.array([k_t]))[0] == pytest.approx(
        expected, rel=1e-12
    )
    # positive discrimination: the other tail, the same as the mirrored table's upper tail
    lower = exact_pvalue(np.array([n_c]), np.array([k_c]), np.array([n_t]), np.array([k_t]), "positive")[0]
    assert lower == pytest.approx(fisher_by_hand(n_c, k_c, n_t, k_t, greater=False), rel=1e-12)
    assert lower == pytest.approx(fisher_by_hand(k_c - n_c, k_c, k_t - n_t, k_t, greater=True), rel=1e-12)


def test_both_shares_at_0_or_1_still_give_a_valid_pvalue():
    """The Wald interval has width 0 when both shares are 0 or 1 (se = 0); the exact test's smallest p at k = 5
    is 1 / C(10, 5), and with no difference it is 1."""
    p = exact_pvalue(np.array([5, 0, 5]), np.full(3, 5), np.array([0, 0, 5]), np.full(3, 5))
    np.testing.assert_allclose(p, [1 / 252, 1.0, 1.0])


@pytest.mark.parametrize("discrimination", ["negative", "positive"])
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_each_complainant_gets_the_exact_test_beside_the_papers_rule(loans, discrimination, tau):
    rows = run(loans, discrimination=discrimination, tau=tau).individuals
    z = norm.ppf(0.95)
    for method in METHODS:
        size = rows["k"] + (method == "CSTwi")  # CSTwi counts the complainant and x_c^CF: k + 1 each
        n_c = np.rint(rows[f"{method}_p_c"] * size).astype(int)
        n_t = np.rint(rows[f"{method}_p_t"] * size).astype(int)
        greater = discrimination == "negative"
        expected = [fisher_by_hand(a, k, b, k, greater=greater) for a, b, k in zip(n_c, n_t, size, strict=True)]
        np.testing.assert_allclose(rows[f"{method}_pvalue"], expected, rtol=1e-10, atol=1e-15)
        assert (rows[f"{method}_sig_exact"] == (rows[method] & (rows[f"{method}_pvalue"] < 0.05))).all()
        # the paper's Wald rule, unchanged (Eq. 10)
        p_c, p_t = rows[f"{method}_p_c"], rows[f"{method}_p_t"]
        w = z * np.sqrt((p_c * (1 - p_c) + p_t * (1 - p_t)) / size)
        delta = p_c - p_t
        wald = (delta - w > tau) & (delta > tau) if discrimination == "negative" else (delta + w < tau) & (delta < tau)
        assert (rows[f"{method}_sig"] == wald).all()
    if discrimination == "negative":  # the Wald rule calls significant tables the exact test does not
        assert (rows["ST_sig"] & ~rows["ST_sig_exact"]).any()


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_each_method_and_k_is_one_adjusted_family(loans, method):
    result = run(loans, multiple_testing=method)
    rows = result.individuals
    families = result.multiple_testing["families"]
    assert result.multiple_testing["method"] == method
    assert set(families) == {f"{m}/k={k}" for m in METHODS for k in (5, 10)}
    for m in METHODS:
        for k in (5, 10):
            part = rows[rows["k"] == k]
            assert len(families[f"{m}/k={k}"]) == len(part)
            p = part[f"{m}_pvalue"].to_numpy()
            order = np.argsort(p)
            n = len(p)
            if method == "holm":
                expected = np.minimum(1, np.maximum.accumulate(p[order] * np.arange(n, 0, -1)))
            else:
                expected = np.minimum(1, np.minimum.accumulate((p[order] * n / np.arange(1, n + 1))[::-1])[::-1])
            np.testing.assert_allclose(part[f"{m}_pvalue_adjusted"].to_numpy()[order], expected)
            sig = part[m] & (part[f"{m}_pvalue_adjusted"] < 0.05)
            assert (part[f"{m}_sig_adjusted"] == sig).all()
    counts = result.counts.set_index("k")
    assert (counts["CSTwo_sig_adjusted"] <= counts["CSTwo_sig_exact"]).all()
    assert (counts["CF_sig_adjusted"] <= counts["CF_sig_exact"]).all()
    assert (counts["CF_sig_exact"] <= counts["CF"]).all()


def test_no_adjustment_keeps_the_exact_tests_counts(loans):
    counts = run(loans, multiple_testing="none").counts
    for m in (*METHODS, "CF"):
        assert (counts[f"{m}_sig_adjusted"] == counts[f"{m}_sig_exact"]).all()
