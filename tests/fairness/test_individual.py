import itertools

import numpy as np
import pytest

from fairness.individual import (
    eaif,
    eaif_details,
    eaif_sampled,
    subject_violation_curves,
    subject_violations,
    worst_pairs,
)


def brute_force(e, s, r, alpha):
    values = []
    for i, j in itertools.combinations(range(len(e)), 2):
        d = np.sqrt(alpha * (e[i] - e[j]) ** 2 + (1 - alpha) * (s[i] - s[j]) ** 2)
        values.append(1 - max(0.0, abs(r[i] - r[j]) - d))
    return np.mean(values)


@pytest.fixture
def population():
    rng = np.random.default_rng(0)
    return rng.uniform(0, 1, 301), rng.uniform(0, 1, 301), rng.uniform(0, 1, 301)


def test_hand_computed_pair():
    # E = (0, .3), S = (0, .4), r = (.1, .9): d = sqrt(.5*.09 + .5*.16) = .35355, D = .8, F = 1 - .44645
    assert eaif([0, 0.3], [0, 0.4], [0.1, 0.9], alpha=0.5) == pytest.approx(1 - (0.8 - np.sqrt(0.125)))
    assert eaif([0, 0.3], [0, 0.4], [0.1, 0.2], alpha=0.5) == 1.0  # constraint satisfied


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.6577, 1.0])
def test_backends_agree_with_brute_force(population, alpha):
    e, s, r = population
    expected = brute_force(e, s, r, alpha)
    assert eaif_details(e, s, r, alpha=alpha, backend="numpy").eaif == pytest.approx(expected, abs=1e-12)
    assert eaif_details(e, s, r, alpha=alpha, backend="auto").eaif == pytest.approx(expected, abs=1e-9)


def test_numpy_blocks_of_any_size_give_the_same_sum(population):
    from fairness.individual import _numpy_sums

    e, s, r = population
    assert _numpy_sums(e, s, r, 0.5, block=7) == pytest.approx(_numpy_sums(e, s, r, 0.5, block=1000))


def test_violation_share_and_worst_pairs(population):
    e, s, r = population
    res = eaif_details(e, s, r, alpha=0.5)
    worst = worst_pairs(e, s, r, alpha=0.5, k=5)
    assert 0 < res.violation_share < 1 and len(worst) == 5
    assert (np.diff(worst["violation"]) <= 0).all()
    np.testing.assert_allclose(worst["violation"], worst["D"] - worst["d"])
    # the single worst pair, by brute force
    best = max(
        (abs(r[i] - r[j]) - np.sqrt(0.5 * (e[i] - e[j]) ** 2 + 0.5 * (s[i] - s[j]) ** 2), i, j)
        for i, j in itertools.combinations(range(len(e)), 2)
    )
    assert worst["violation"].iloc[0] == pytest.approx(best[0])
    assert {worst["id_i"].iloc[0], worst["id_j"].iloc[0]} == {best[1], best[2]}


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.64, 1.0])
def test_worst_pairs_are_the_same_pairs_and_numbers_on_both_backends(population, alpha):
    """Ties included (values on a grid: many pairs share a violation; the first pairs in row order are kept)."""
    from fairness.individual import numba

    if numba is None:
        pytest.skip("numba is not installed")
    e, s, r = population
    tied = [np.round(v[:120], 1) for v in population]
    flat = (np.zeros(30), np.zeros(30), np.tile([0.0, 0.5, 1.0], 10))  # 100 pairs 1 apart: which 5 are kept
    for inputs, k in (((e, s, r), 20), (tied, 25), (flat, 5), ((e[:4], s[:4], r[:4]), 10)):
        fast = worst_pairs(*inputs, alpha=alpha, k=k, backend="numba")
        assert fast.equals(worst_pairs(*inputs, alpha=alpha, k=k, backend="numpy")), (alpha, k)
    assert worst_pairs(e, s, r, alpha=alpha, k=0, backend="numba").empty


def test_subject_violations_average_to_one_minus_eaif(population):
    """Each pair is counted twice over subjects: mean of per-subject violations = 1 - EaIF."""
    e, s, r = population
    assert subject_violations(e, s, r, alpha=0.3).mean() == pytest.approx(1 - eaif(e, s, r, alpha=0.3))


def test_violation_curves_are_each_alphas_violations(population):
    """Rows of two blocks (256 + 44 subjects) at three alphas: each subject's mean over the other 300 of
    max(0, |r_i - r_j| - sqrt(alpha (e_i - e_j)^2 + (1 - alpha)(s_i - s_j)^2)), and subject_violations exactly."""
    e, s, r = population
    rows, alphas = np.arange(300)[::-1], [0.0, 0.64, 1.0]
    curves = subject_violation_curves(e, s, r, alphas=alphas, subjects=rows)
    for a, alpha in enumerate(alphas):
        direct = []
        for i in rows[:5]:
            others = np.arange(301) != i
            d = np.sqrt(alpha * (e[i] - e[others]) ** 2 + (1 - alpha) * (s[i] - s[others]) ** 2)
            direct.append(np.mean(np.maximum(0.0, np.abs(r[i] - r[others]) - d)))
        assert curves[a, :5] == pytest.approx(direct, rel=1e-12, abs=1e-15)
        assert np.array_equal(curves[a], subject_violations(e, s, r, alpha=alpha, subjects=rows))
    with pytest.raises(ValueError, match=r"alpha must lie in \[0, 1\]"):
        subject_violation_curves(e, s, r, alphas=[0.5, 1.2])


def test_sampled_estimate_covers_exact(population):
    e, s, r = population
    exact = eaif(e, s, r, alpha=0.5)
    est = eaif_sampled(e, s, r, alpha=0.5, n_pairs=200_000, seed=1)
    assert est.ci[0] <= exact <= est.ci[1] and est.ci[1] - est.ci[0] < 0.01


def test_bad_inputs():
    with pytest.raises(ValueError, match="equal lengths"):
        eaif([0, 1], [0, 1, 2], [0, 1], alpha=0.5)
    with pytest.raises(ValueError, match="alpha"):
        eaif([0, 1], [0, 1], [0, 1], alpha=1.5)


@pytest.mark.parametrize("alpha,slope", [(0.64, 0.8), (1.0, 0.3), (0.25, 0.5)])
def test_exact_ties_are_not_violations_in_either_backend(alpha, slope):
    """r = sqrt(alpha) E + c with S constant: D = d for every pair in exact arithmetic. Before the
    shared TIE_TOLERANCE, rounding made 47% (NumPy) vs 56% (numba) of the alpha = 0.64 pairs
    violations."""
    from fairness.individual import numba

    rng = np.random.default_rng(0)
    e = rng.integers(0, 30, size=300) * 0.1
    s = np.zeros(300)
    r = e * slope + 0.2
    if alpha == 1.0:
        e = e * slope
    backends = ["numpy"] + (["numba"] if numba is not None else [])
    results = [eaif_details(e, s, r, alpha=alpha, backend=b) for b in backends]
    assert all(res.violation_share == 0.0 and res.eaif == 1.0 for res in results)
    # a real violation just above the tolerance counts in both
    r2 = r.copy()
    r2[0] += 1e-6
    shares = {eaif_details(e, s, r2, alpha=alpha, backend=b).violation_share for b in backends}
    assert len(shares) == 1 and shares.pop() > 0
    assert eaif_sampled(e, s, r, alpha=alpha, n_pairs=10_000).violation_share == 0.0
    assert worst_pairs(e, s, r, alpha=alpha).empty
