"""The headline tests generalising over stimuli (issue 23, item 8): the two-way bootstrap of the
correlation difference against literal pigeonhole resamples, the joint centred bootstrap p, Spearman from
counts, the planning Wald tests against statsmodels, and the pipeline's family with ``generalise="stimuli"``."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.correlations import (
    bootstrap_correlation_difference,
    resample_counts,
    spearman_from_counts,
)
from analysis.repeated_measures import BOOTSTRAP, CLUSTER_WALD, TWO_WAY, bootstrap_pvalue, bootstrap_wald_pvalue


def test_two_way_correlation_difference_matches_literal_pigeonhole_resamples():
    """Each drawn participant's ratings of each drawn stimulus written out (duplicates repeated), then
    scipy's Spearman r on them: the vectorised weighted mid-ranks give the same difference."""
    rng = np.random.default_rng(0)
    n_p, n_s = 9, 6
    pid, sid = np.repeat(np.arange(n_p), n_s), np.tile(np.arange(n_s), n_p)
    x1 = rng.integers(1, 7, pid.size).astype(float)
    x2 = rng.integers(1, 7, pid.size).astype(float)
    y = x1 + rng.normal(0, 1, pid.size).round(1)  # continuous y: ties and no ties mixed
    result = bootstrap_correlation_difference(pid, x1, x2, y, stimuli=sid, n_resamples=5, seed=3)
    draws = np.random.default_rng(3)
    people, stimuli = resample_counts(draws, n_p, 5), resample_counts(draws, n_s, 5)
    for b in range(5):
        rows = np.repeat(np.arange(pid.size), (people[b][pid] * stimuli[b][sid]).astype(int))
        literal = stats.spearmanr(x1[rows], y[rows]).statistic - stats.spearmanr(x2[rows], y[rows]).statistic
        assert result.distribution[b] == pytest.approx(literal, abs=1e-12)
    assert result.estimate == pytest.approx(stats.spearmanr(x1, y).statistic - stats.spearmanr(x2, y).statistic)


def test_spearman_from_counts_equals_scipy_on_the_rows():
    rng = np.random.default_rng(1)
    a, b = rng.integers(1, 6, 200), rng.integers(1, 6, 200)
    b = np.where(rng.random(200) < 0.5, a, b)
    grid = np.arange(1, 6)
    counts = np.array([[np.sum((a == i) & (b == j)) for j in grid] for i in grid]).ravel()
    r = spearman_from_counts(counts, np.repeat(grid, 5), np.tile(grid, 5))
    assert r == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)


def test_joint_bootstrap_pvalue_reduces_to_the_centred_pvalue_in_one_dimension():
    """With one parameter the Mahalanobis distance orders the draws as |theta* - theta_hat| does."""
    dist = np.random.default_rng(2).normal(0.3, 1.0, 999)
    for null in (0.0, 1.5, -2.0):
        statistic, p = bootstrap_wald_pvalue(dist[:, None], np.array([0.3]), np.array([null]))
        assert p == pytest.approx(bootstrap_pvalue(dist, 0.3, null))
        assert statistic == pytest.approx((0.3 - null) ** 2 / dist.var(ddof=1))


def test_joint_bootstrap_pvalue_of_a_normal_cloud_is_the_chi_square_tail():
    """Bootstrap draws from N(theta_hat, S): the centred p of a null at Mahalanobis distance^2 = 5.99
    is the chi-square(2) tail there, 0.05."""
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    draws = np.random.default_rng(3).multivariate_normal([0.0, 0.0], cov, 40_000)
    gap = np.array([1.0, 0.5])
    scale = np.sqrt(stats.chi2.ppf(0.95, 2) / (gap @ np.linalg.solve(cov, gap)))
    _, p = bootstrap_wald_pvalue(draws, np.zeros(2), -scale * gap)
    assert p == pytest.approx(0.05, abs=0.005)


def test_planning_wald_tests_agree_with_statsmodels(demo_spec):
    """The plan's clustered Wald p-values at a given null equal statsmodels' wald_test on the pipeline's
    clustered fit (Eq. 5: a2 - a1 = c, and a1 = c1, a2 = c2)."""
    from analysis.regression import distance_regression
    from analysis.repeated_measures import design
    from simulation.effort import simulate_pairs
    from simulation.planning import _clustered_ols, _wald_p
    from studies.services import stored_file

    frame = simulate_pairs(stored_file(demo_spec)[0], 30, seed=5).query("condition == 'income'")
    fit = _clustered_ols(
        design(frame, ["d_aggr", "d_traj"]), frame["d_overall"].to_numpy(float), frame["participant_id"]
    )
    model = distance_regression(frame, "d_overall", cluster="participant_id").model
    null = np.array([0.0, 0.3, 0.55])
    expected = model.wald_test("d_traj - d_aggr = 0.25", scalar=True, use_f=False).pvalue
    assert _wald_p(fit.params, fit.cov_params(), null, [[0, -1, 1]]) == pytest.approx(float(expected), rel=1e-8)
    expected = model.wald_test("d_aggr = 0.3, d_traj = 0.55", scalar=True, use_f=False).pvalue
    assert _wald_p(fit.params, fit.cov_params(), null, [[0, 1, 0], [0, 0, 1]]) == pytest.approx(
        float(expected), rel=1e-8
    )


def test_generalise_stimuli_puts_the_two_way_tests_in_the_family(demo_spec):
    """With generalise="stimuli" the family's RQ1-RQ2 rows are the two-way bootstrap's, with the population
    estimand, wider than the participant-level ones that stay outside the family; without it nothing changes."""
    from analysis.pipeline import run_pipeline
    from analysis.repeated_measures import ESTIMAND_POPULATION, ESTIMAND_STIMULI
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    pairs = simulate_pairs(stored_file(demo_spec)[0], 24, seed=4).assign(reference="K")
    fixed = run_pipeline(pairs, seed=2, n_resamples=200, mixed_models=False).participant_level
    general = run_pipeline(pairs, seed=2, n_resamples=200, mixed_models=False, generalise="stimuli").participant_level
    assert TWO_WAY not in set(fixed["method"])
    family = general[general["in_family"]]
    per_condition = family[~family["model"].str.startswith("moderation")]
    assert set(per_condition["method"]) == {TWO_WAY}
    assert (per_condition["estimand"] == ESTIMAND_POPULATION.format(n=12)).all()
    assert len(per_condition) == len(fixed[fixed["in_family"] & ~fixed["model"].str.startswith("moderation")])
    moderation = family[family["model"].str.startswith("moderation")]
    assert set(moderation["method"]) == {CLUSTER_WALD}  # RQ3 stays the participant-level test
    second = general[general["method"] != TWO_WAY]
    kept = fixed.drop(columns=["pvalue_holm", "family", "in_family"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        second.drop(columns=["pvalue_holm", "family", "in_family"]).reset_index(drop=True), kept
    )
    assert not second[~second["model"].str.startswith("moderation")]["in_family"].any()  # second opinions
    assert ESTIMAND_STIMULI.format(n=12) in set(second[second["method"] == BOOTSTRAP]["estimand"])
    key = ["model", "outcome", "hypothesis"]
    two = per_condition[per_condition["hypothesis"] == "a2 = a1"].set_index(key)
    one = general[(general["method"] == CLUSTER_WALD) & (general["hypothesis"] == "a2 = a1")].set_index(key)
    assert ((two["ci_high"] - two["ci_low"]) > (one["ci_high"] - one["ci_low"]).loc[two.index]).all()
