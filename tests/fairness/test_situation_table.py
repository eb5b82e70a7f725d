"""Situation testing's table at a million rows: the individuals table, built column by column from the neighbour
counts per k (``fairness.neighbour_counts``), one exact tail per distinct 2x2 table and the tie-aware Holm / BH,
equals the table of the per-k path it replaced (per-complainant shares from the lists, scipy's tail for every
complainant, statsmodels' adjustment, one frame per k concatenated), to the last bit and dtype."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.families import adjust
from fairness.neighbour_counts import prefix_counts
from fairness.situation_testing import _distinct, exact_pvalue, situation_testing
from tests.fairness.test_situation_scale import synthetic

K = [5, 15, 40]
FEATURES = ["score", "grade", "region"]


def per_k_table(result, data, cf, *, alpha, tau, discrimination, multiple_testing):
    """The replaced path, from the result's neighbour lists: per k and method the negative decisions among the
    lists (CSTwi: c and x_c^CF counted first, x_c^CF with its counterfactual decision), the Wald rule, scipy's
    hypergeometric tail per complainant, statsmodels' adjustment; one frame per k, concatenated."""
    negative, negative_cf = (data["Y"] == 0).to_numpy(), (cf["Y"] == 0).to_numpy()
    own = result.complainants
    z = stats.norm.ppf(1 - alpha)
    frames = []
    for k in K:
        record = {"complainant": own, "k": k}
        for method in ("ST", "CSTwo", "CSTwi"):
            lists = result.neighbours[(method, k)]
            n_c = negative[lists["control"]].sum(axis=1)
            n_t = negative[lists["test"]].sum(axis=1)
            size = k
            if method == "CSTwi":
                n_t, size = n_t + negative_cf[own], k + 1
            p_c, p_t = n_c / size, n_t / size
            delta = p_c - p_t
            w = z * np.sqrt(p_c * (1 - p_c) / size + p_t * (1 - p_t) / size)
            if discrimination == "negative":
                flagged, significant = delta > tau, (delta > tau) & (delta - w > tau)
                pvalue = stats.hypergeom.sf(n_c - 1, 2 * size, n_c + n_t, size)
            else:
                flagged, significant = delta < tau, (delta < tau) & (delta + w < tau)
                pvalue = stats.hypergeom.cdf(n_c, 2 * size, n_c + n_t, size)
            pvalue = np.clip(pvalue, 0.0, 1.0)
            adjusted = adjust(pvalue, multiple_testing)
            record |= {
                f"{method}_p_c": p_c,
                f"{method}_p_t": p_t,
                f"{method}_delta": delta,
                f"{method}_w": w,
                method: flagged,
                f"{method}_sig": significant,
                f"{method}_pvalue": pvalue,
                f"{method}_pvalue_adjusted": adjusted,
                f"{method}_sig_exact": flagged & (pvalue < alpha),
                f"{method}_sig_adjusted": flagged & (adjusted < alpha),
            }
        factual, counterfactual = negative[own], negative_cf[own]
        cf_flag = factual & ~counterfactual if discrimination == "negative" else ~factual & counterfactual
        record["CF"] = cf_flag
        for suffix in ("_sig", "_sig_exact", "_sig_adjusted"):
            record[f"CF{suffix}"] = cf_flag & record[f"CSTwi{suffix}"]
        frames.append(pd.DataFrame(record))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize(
    ("discrete", "options"),
    [
        (True, {}),
        (False, {"discrimination": "positive", "multiple_testing": "bh", "tau": 0.05}),
        (True, {"alpha": 0.1, "multiple_testing": "none"}),
    ],
    ids=["ties-holm", "continuous-positive-bh", "ties-none"],
)
def test_the_table_is_the_per_k_paths_to_the_last_bit(discrete, options):
    data, cf = synthetic(3_000, discrete=discrete, seed=7)
    settings = {"alpha": 0.05, "tau": 0.0, "discrimination": "negative", "multiple_testing": "holm", **options}
    result = situation_testing(
        data, protected="group", target="Y", negative_outcome=0, k=K, counterfactuals=cf, features=FEATURES, **settings
    )
    expected = per_k_table(result, data, cf, **settings)
    pd.testing.assert_frame_equal(result.individuals, expected, check_exact=True)
    assert result.individuals["complainant"].dtype == np.int64 and result.complainants.dtype == np.int64
    assert {ids.dtype for lists in result.neighbours.values() for ids in lists.values()} == {np.dtype(np.int32)}
    families = result.multiple_testing["families"]
    assert families["CSTwi/k=15"][:2] == [f"CSTwi/k=15/{c}" for c in result.complainants[:2]]


def test_prefix_counts_are_the_decisions_summed_over_each_lists_start():
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 500, size=(300, 60)).astype(np.int32)
    decisions = rng.random(500) < 0.4
    sizes = [1, 7, 30, 60]
    expected = np.column_stack([decisions[ids[:, :s]].sum(axis=1) for s in sizes])
    assert np.array_equal(prefix_counts(ids, decisions, sizes), expected)
    # a view of wider lists (paper mode's control lists without the complainant)
    shifted = np.column_stack([decisions[ids[:, 1 : s + 1]].sum(axis=1) for s in sizes[:-1]])
    assert np.array_equal(prefix_counts(ids[:, 1:], decisions, sizes[:-1]), shifted)


def test_one_tail_per_distinct_table_is_scipys_tail_of_each():
    rng = np.random.default_rng(4)
    k = rng.choice([5, 16, 251], size=5_000)
    n_c, n_t = rng.integers(0, k + 1), rng.integers(0, k + 1)
    for discrimination, tail in (("negative", stats.hypergeom.sf), ("positive", stats.hypergeom.cdf)):
        x = n_c - 1 if discrimination == "negative" else n_c
        expected = np.clip(tail(x, 2 * k, n_c + n_t, k), 0.0, 1.0)
        assert np.array_equal(exact_pvalue(n_c, k, n_t, k, discrimination), expected)
    # rows with large counts: the code is renumbered before it would overflow, distinct rows stay distinct
    big = np.array([2**40, 2**40, 3, 2**40])
    where, inverse = _distinct(big, big[::-1], np.array([1, 1, 1, 2]))
    assert inverse.tolist() == [0, 1, 2, 3] and sorted(where.tolist()) == [0, 1, 2, 3]
    where, inverse = _distinct(np.array([4, 4, 5]), np.array([2**61, 2**61, 0]))
    assert inverse.tolist() == [0, 0, 1] and where[1] == 2
