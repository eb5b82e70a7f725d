"""Sampled pairwise metrics with a bound a paper can state (``fairness.pair_sampling``, ``eaif_sampled``): the
half-widths are the published formulas, both backends draw the same pairs, the draws are uniform over unordered
pairs, and over many seeds the intervals cover the exact EaIF of n = 20,000 subjects at least at their level."""

import math

import numpy as np
import pytest
from scipy import stats

from fairness.individual import eaif_details, eaif_sampled
from fairness.jit import numba
from fairness.pair_sampling import bounded_mean, draw_pairs, eaif_pair_sums, pair_key


def test_hoeffding_half_width_is_the_formula_and_the_issues_figures():
    for m, expected in ((10**8, 1.4e-4), (10**9, 4.3e-5)):
        result = bounded_mean(0.5 * m, 0.25 * m, m, level=0.95, bound="hoeffding")
        half = (result.ci[1] - result.ci[0]) / 2
        assert half == pytest.approx(math.sqrt(math.log(2 / 0.05) / (2 * m)))
        assert f"{half:.1e}" == f"{expected:.1e}"  # the published figures, rounded
    assert "no other assumption" in result.assumptions


def test_bernstein_is_maurer_and_pontils_bound_and_tighter_when_terms_vary_little():
    m, mean, variance = 10_000, 0.9, 0.001
    total, squares = mean * m, (variance * (m - 1) + m * mean * mean)
    bern = bounded_mean(total, squares, m, bound="bernstein")
    log_term = math.log(4 / 0.05)
    expected = math.sqrt(2 * variance * log_term / m) + 7 * log_term / (3 * (m - 1))
    assert (bern.ci[1] - bern.ci[0]) / 2 == pytest.approx(expected, rel=1e-9)
    hoeff = bounded_mean(total, squares, m, bound="hoeffding")
    assert bern.ci[1] - bern.ci[0] < hoeff.ci[1] - hoeff.ci[0]
    normal = bounded_mean(total, squares, m, bound="normal")
    assert (normal.ci[1] - normal.ci[0]) / 2 == pytest.approx(stats.norm.ppf(0.975) * math.sqrt(variance / m))
    with pytest.raises(ValueError, match="bound must be one of"):
        bounded_mean(total, squares, m, bound="chebyshev")


def test_draws_are_uniform_over_unordered_pairs():
    n, m = 6, 300_000
    i, j = draw_pairs(n, 0, m, pair_key(11))
    assert (i != j).all() and i.min() >= 0 and max(i.max(), j.max()) < n
    low, high = np.minimum(i, j), np.maximum(i, j)
    counts = np.bincount(low * n + high, minlength=n * n).reshape(n, n)[np.triu_indices(n, 1)]
    assert stats.chisquare(counts).pvalue > 0.001  # 15 pairs, each 1/15
    # chunks continue one stream: pairs 1000..1999 drawn alone equal those drawn with the first 1000
    assert np.array_equal(draw_pairs(n, 1000, 1000, pair_key(11))[0], draw_pairs(n, 0, 2000, pair_key(11))[0][1000:])


@pytest.mark.skipif(numba is None, reason="numba is not installed")
def test_both_backends_draw_and_sum_the_same_pairs():
    rng = np.random.default_rng(3)
    e, s, r = rng.normal(size=500), rng.normal(size=500), rng.uniform(size=500)
    fast = eaif_pair_sums(e, s, r, 0.4, 2_500_003, 9, 1e-12, "numba")  # more than two chunks, a ragged end
    slow = eaif_pair_sums(e, s, r, 0.4, 2_500_003, 9, 1e-12, "numpy")
    assert fast == pytest.approx(slow, rel=1e-12)


@pytest.fixture(scope="module")
def subjects_20000():
    """Efforts, aggregates and risks of 20,000 subjects, and their exact EaIF at alpha = 0.6."""
    rng = np.random.default_rng(20_000)
    n = 20_000
    e, s = rng.gamma(2.0, 0.1, size=n), rng.gamma(2.0, 0.1, size=n)
    r = np.clip(0.6 * e + 0.4 * s + rng.normal(0, 0.1, size=n), 0, 1)
    return e, s, r, eaif_details(e, s, r, alpha=0.6)


@pytest.mark.slow  # the exact EaIF of 20,000 subjects shared by the module
def test_the_intervals_cover_the_exact_eaif_of_20000_subjects(subjects_20000):
    """Over 200 seeds with 50,000 pairs each: Hoeffding and Bernstein cover at least 95% (bounds: they hold
    for every sample size), the normal interval close to 95% (its Monte Carlo SE here is 1.5%)."""
    e, s, r, exact = subjects_20000
    covered = {"hoeffding": 0, "bernstein": 0, "normal": 0}
    share_covered = 0
    for seed in range(200):
        for bound in covered:
            est = eaif_sampled(e, s, r, alpha=0.6, n_pairs=50_000, seed=seed, bound=bound)
            covered[bound] += est.ci[0] <= exact.eaif <= est.ci[1]
            if bound == "bernstein":
                share_covered += est.violation_share_ci[0] <= exact.violation_share <= est.violation_share_ci[1]
    assert covered["hoeffding"] >= 190 and covered["bernstein"] >= 190 and share_covered >= 190
    assert covered["normal"] >= 180


def test_a_stream_continued_from_start_sums_the_same_pairs():
    """The sequential rule draws on from where it stopped: pairs 0..a-1 then a..a+b-1 are pairs 0..a+b-1."""
    rng = np.random.default_rng(4)
    e, s, r = rng.normal(size=300), rng.normal(size=300), rng.uniform(size=300)
    for backend in ("numpy", "numba") if numba is not None else ("numpy",):
        whole = eaif_pair_sums(e, s, r, 0.4, 1_500_001, 5, 1e-12, backend)
        head = eaif_pair_sums(e, s, r, 0.4, 700_000, 5, 1e-12, backend)
        tail = eaif_pair_sums(e, s, r, 0.4, 800_001, 5, 1e-12, backend, 700_000)
        assert np.add(head, tail) == pytest.approx(whole, rel=1e-12)


@pytest.mark.slow  # the exact EaIF of 20,000 subjects shared by the module
def test_stopping_at_a_half_width_checks_a_doubling_grid_with_a_union_bound(subjects_20000):
    """It stops at the first m_j = n_pairs 2^j whose interval at level 1 - 0.05 / 2^(j + 1) is at most the
    target wide: that interval is the fixed-m Bernstein interval at m_j and that level, the one before was wider."""
    e, s, r, _ = subjects_20000
    est = eaif_sampled(e, s, r, alpha=0.6, n_pairs=20_000, seed=3, half_width=2e-3)
    j = int(math.log2(est.n_pairs // 20_000))
    assert est.n_pairs == 20_000 * 2**j and j >= 1
    total, squares, _ = eaif_pair_sums(e, s, r, 0.6, est.n_pairs, 3, 1e-12)
    fixed = bounded_mean(total, squares, est.n_pairs, level=1 - 0.05 / 2 ** (j + 1))
    assert est.ci == pytest.approx(fixed.ci, rel=1e-9) and (est.ci[1] - est.ci[0]) / 2 <= 2e-3
    total, squares, _ = eaif_pair_sums(e, s, r, 0.6, est.n_pairs // 2, 3, 1e-12)
    before = bounded_mean(total, squares, est.n_pairs // 2, level=1 - 0.05 / 2**j)
    assert (before.ci[1] - before.ci[0]) / 2 > 2e-3
    # far fewer pairs than Hoeffding's fixed m for the same half-width: ln(2 / 0.05) / (2 h^2)
    assert est.n_pairs < math.log(2 / 0.05) / (2 * 2e-3**2) / 4
    capped = eaif_sampled(e, s, r, alpha=0.6, n_pairs=20_000, seed=3, half_width=1e-6, max_pairs=100_000)
    assert capped.n_pairs == 80_000 and capped.ci[1] - capped.ci[0] > 2e-6


@pytest.mark.slow  # the exact EaIF of 20,000 subjects shared by the module
def test_the_stopped_intervals_cover_the_exact_eaif_at_their_level(subjects_20000):
    """Over 200 seeds the interval where the rule stops covers the exact EaIF at least at 95% (Bernstein and
    Hoeffding: bounds under optional stopping by the union over the grid)."""
    e, s, r, exact = subjects_20000
    for bound in ("bernstein", "hoeffding"):
        covered = sum(
            est.ci[0] <= exact.eaif <= est.ci[1]
            for est in (
                eaif_sampled(e, s, r, alpha=0.6, n_pairs=5_000, seed=seed, bound=bound, half_width=3e-3)
                for seed in range(200)
            )
        )
        assert covered >= 190


@pytest.mark.parametrize("half_width", [0.0, -1e-4, 0.5, float("nan")])
def test_a_half_width_outside_0_to_half_is_refused(half_width):
    with pytest.raises(ValueError, match="half_width must lie in"):
        eaif_sampled([0, 1, 2], [0, 1, 0], [0, 1, 1], alpha=0.5, half_width=half_width)
