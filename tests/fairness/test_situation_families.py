"""Situation testing's family-wise control: each complainant's p-value is the dual of the paper's one-sided
Wald interval (Alvarez & Ruggieri, Eq. 10), and the complainants of one method and k are one family adjusted
by Holm (1979) or Benjamini-Hochberg (1995), here recomputed by hand."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from fairness.situation_testing import situation_testing

DATA = Path(__file__).resolve().parents[3] / "shared" / "reference-data" / "counterfactual_situation_testing"
COLUMNS = ["AnnualSalary", "AccountBalance", "Gender", "LoanApproval"]


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


@pytest.mark.parametrize("discrimination", ["negative", "positive"])
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_the_pvalue_is_the_dual_of_the_papers_interval(loans, discrimination, tau):
    result = run(loans, discrimination=discrimination, tau=tau)
    rows = result.individuals
    for method in ("ST", "CSTwo", "CSTwi"):
        assert (rows[f"{method}_sig"] == (rows[method] & (rows[f"{method}_pvalue"] < 0.05))).all()
        se = rows[f"{method}_w"] / 1.6448536269514722  # w = z_0.95 se (Eq. 10)
        sign = 1 if discrimination == "negative" else -1
        inner = se > 0
        z = sign * (rows[f"{method}_delta"] - tau)[inner] / se[inner]
        np.testing.assert_allclose(rows.loc[inner, f"{method}_pvalue"], norm.sf(z))


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_each_method_and_k_is_one_adjusted_family(loans, method):
    result = run(loans, multiple_testing=method)
    rows = result.individuals
    families = result.multiple_testing["families"]
    assert result.multiple_testing["method"] == method
    assert set(families) == {f"{m}/k={k}" for m in ("ST", "CSTwo", "CSTwi") for k in (5, 10)}
    for m in ("ST", "CSTwo", "CSTwi"):
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
    assert (counts["CSTwo_sig_adjusted"] <= counts["CSTwo_sig"]).all()
    assert (counts["CF_sig_adjusted"] <= counts["CF_sig"]).all()


def test_no_adjustment_keeps_the_papers_counts(loans):
    result = run(loans, multiple_testing="none")
    counts = result.counts
    for m in ("ST", "CSTwo", "CSTwi", "CF"):
        assert (counts[f"{m}_sig_adjusted"] == counts[f"{m}_sig"]).all()
