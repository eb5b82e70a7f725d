import numpy as np
import pytest
from scipy import stats

from analysis.correlations import (
    bonferroni,
    bootstrap_correlation_difference,
    compare_correlations,
    compare_nonoverlapping_correlations,
    correlation,
    holm,
)

# ../shared/test-vectors.md: values published in the original papers, collected in cocor's tests.


def test_hotelling_1940():
    assert compare_correlations(0.5, 0.2, 0.3, 50, method="hotelling").statistic == pytest.approx(2.01, abs=0.005)


def test_williams_1959():
    res = compare_correlations(0.3, 0.4, 0.5, 100, method="williams")
    assert res.statistic == pytest.approx(-1.0767, abs=5e-5)
    assert res.pvalue == pytest.approx(0.2843, abs=5e-5)
    assert res.df == 97


def test_steiger_1980_z1_star():
    assert compare_correlations(0.4, 0.5, 0.1, 103, method="steiger").statistic == pytest.approx(-0.8887, abs=5e-5)


def test_meng_rosenthal_rubin_1992():
    res = compare_correlations(0.63, -0.03, -0.19, 15, method="meng")
    assert res.statistic == pytest.approx(1.68, abs=0.005)
    assert res.pvalue / 2 == pytest.approx(0.047, abs=5e-4)  # published one-sided


def test_dunn_clark_1969():
    res = compare_correlations(0.3, 0.4, 0.5, 100, method="dunn_clark")
    assert res.statistic == pytest.approx(-1.0730, abs=5e-5)
    assert res.pvalue == pytest.approx(0.2833, abs=5e-5)


def test_zou_2007_interval():
    lo, hi = compare_correlations(0.396, 0.179, 0.088, 66, method="zou").ci
    assert (lo, hi) == pytest.approx((-0.093, 0.517), abs=5e-4)


@pytest.mark.parametrize("method", ["hotelling", "williams", "steiger", "meng", "dunn_clark", "zou"])
def test_equal_correlations_give_zero_and_sign_flips(method):
    assert compare_correlations(0.4, 0.4, 0.3, 80, method=method).statistic == pytest.approx(0, abs=1e-12)
    a = compare_correlations(0.6, 0.3, 0.2, 80, method=method)
    b = compare_correlations(0.3, 0.6, 0.2, 80, method=method)
    assert a.statistic == pytest.approx(-b.statistic) and a.pvalue == pytest.approx(b.pvalue)


def test_spearman_mode_scales_by_fieller_hartley_pearson():
    plain = compare_correlations(0.7, 0.5, 0.2, 150, method="steiger")
    rank = compare_correlations(0.7, 0.5, 0.2, 150, method="steiger", spearman=True)
    assert rank.statistic == pytest.approx(plain.statistic / np.sqrt(1.06))


def test_nonoverlapping_reduces_to_independent_samples_when_uncorrelated():
    """With all cross-correlations 0 the two estimates are independent: Z = dz / sqrt(2/(n-3))."""
    res = compare_nonoverlapping_correlations(0.5, 0.2, 0, 0, 0, 0, 100, method="steiger")
    expected = (np.arctanh(0.5) - np.arctanh(0.2)) / np.sqrt(2 / 97)
    # the pooled-r Pearson-Filon term is not exactly zero with zero cross-correlations
    assert res.statistic == pytest.approx(expected, rel=1e-9)
    zou = compare_nonoverlapping_correlations(0.5, 0.2, 0, 0, 0, 0, 100, method="zou")
    assert zou.ci[0] < 0.3 < zou.ci[1]


def test_nonoverlapping_steiger_matches_simulation():
    """Monte-Carlo check of the null distribution: rejection rate near 5% at alpha = .05."""
    rng = np.random.default_rng(7)
    cov = np.array([[1, 0.4, 0.3, 0.2], [0.4, 1, 0.2, 0.3], [0.3, 0.2, 1, 0.4], [0.2, 0.3, 0.4, 1]])  # r_jk = r_hm = .4
    n, rejections, runs = 80, 0, 1500
    for _ in range(runs):
        data = rng.multivariate_normal(np.zeros(4), cov, size=n)
        r = np.corrcoef(data.T)
        res = compare_nonoverlapping_correlations(
            r[0, 1], r[2, 3], r[0, 2], r[0, 3], r[1, 2], r[1, 3], n, method="steiger"
        )
        rejections += res.pvalue < 0.05
    assert 0.03 < rejections / runs < 0.07


def test_correlation_ci_and_pvalue():
    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    y = x + rng.normal(size=200)
    res = correlation(x, y, method="pearson")
    assert res.statistic == pytest.approx(stats.pearsonr(x, y).statistic)
    assert res.ci[0] < res.statistic < res.ci[1] and res.pvalue < 1e-10
    assert correlation(x, y).method == "spearman"


def test_bonferroni_and_holm():
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(bonferroni(p), [0.04, 0.16, 0.12, 0.02])
    # Holm by hand: sorted .005,.01,.03,.04 -> 4*.005=.02, 3*.01=.03, 2*.03=.06, 1*.04=.04 -> monotone .06
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])


def test_bootstrap_resamples_participants_and_is_seeded():
    rng = np.random.default_rng(2)
    n_people, per = 60, 12
    groups = np.repeat(np.arange(n_people), per)
    traj = rng.integers(1, 7, size=groups.size).astype(float)
    aggr = rng.integers(1, 7, size=groups.size).astype(float)
    overall = np.clip(np.round(0.3 * aggr + 0.6 * traj + rng.normal(0, 0.6, size=groups.size)), 1, 6)
    a = bootstrap_correlation_difference(groups, traj, aggr, overall, n_resamples=400, seed=3)
    b = bootstrap_correlation_difference(groups, traj, aggr, overall, n_resamples=400, seed=3)
    assert a.ci == b.ci and a.seed == 3
    expected = stats.spearmanr(traj, overall).statistic - stats.spearmanr(aggr, overall).statistic
    assert a.estimate == pytest.approx(expected)
    assert a.ci[0] < a.estimate < a.ci[1] and a.ci[0] > 0


def test_weighted_resample_equals_explicit_resample():
    """One resample computed with weights equals the correlation of the explicitly repeated rows."""
    from analysis.correlations import _weighted_corr

    rng = np.random.default_rng(5)
    a, b = rng.integers(1, 7, size=30).astype(float), rng.normal(size=30)
    w = rng.integers(0, 3, size=30).astype(float)
    rows = np.repeat(np.arange(30), w.astype(int))
    got = _weighted_corr(w[None, :], a, b, "spearman")[0]
    assert got == pytest.approx(stats.spearmanr(a[rows], b[rows]).statistic)
