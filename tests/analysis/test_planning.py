from dataclasses import replace

import numpy as np
import pytest

from analysis.pipeline import bootstrap_alpha
from analysis.planning import TABLE_COLUMNS, alpha_estimate, mc_se, plan_study
from analysis.regression import distance_regression
from simulation.effort import GenerativeModel, simulate_pairs

NO_RANDOM_EFFECTS = GenerativeModel(participant_intercept_sd=0.0, participant_slope_sd=0.0, stimulus_sd=0.0)
# Strong between-participant variation (no stimulus effects: participant clustering is then the whole story)
PARTICIPANTS_VARY = replace(NO_RANDOM_EFFECTS, participant_intercept_sd=0.5, participant_slope_sd=0.3)


@pytest.fixture
def spec(demo_spec):
    from studies.study_file import validate_study

    return validate_study(demo_spec)


def test_simulated_pairs_table_matches_export_shape(spec):
    pairs = simulate_pairs(spec, 10, seed=1)
    assert len(pairs) == 10 * 12 and set(pairs["condition"]) == {"arrests", "income"}
    assert pairs[["d_traj", "d_aggr", "d_overall"]].stack().between(1, 6).all()


def test_without_random_effects_the_old_model_is_recovered_exactly(spec):
    """Reference sums computed with the generative model before random effects existed (commit
    b274d18, ``simulate_pairs(spec, 10, seed=7)``): the random effects use their own stream."""
    pairs = simulate_pairs(spec, 10, seed=7, model=NO_RANDOM_EFFECTS)
    w = np.arange(1, len(pairs) + 1)
    assert len(pairs) == 120
    assert [int((pairs[c] * w).sum()) for c in ("d_overall", "d_traj", "d_aggr")] == [24852, 25748, 24876]
    assert (pairs["fair_score"] * w).sum() == pytest.approx(3658.611, abs=1e-3)
    assert pairs["prediction_similar"].sum() == 6411
    # the default model differs only in d_overall (and the BTS predictions that follow it)
    varied = simulate_pairs(spec, 10, seed=7)
    assert varied[["d_traj", "d_aggr", "fair_score"]].equals(pairs[["d_traj", "d_aggr", "fair_score"]])
    assert not varied["d_overall"].equals(pairs["d_overall"])


def test_alpha_estimate_matches_the_pipeline_regression(spec):
    """The delta-method CI is built on the same clustered fit as the pipeline's Table 5 (statsmodels
    formula API), and agrees with the participant bootstrap the pipeline reports."""
    frame = simulate_pairs(spec, 150, seed=2).query("condition == 'income'")
    est = alpha_estimate(frame)
    fit = distance_regression(frame, "d_overall", cluster="participant_id").model
    a1, a2 = fit.params["d_aggr"], fit.params["d_traj"]
    g = np.array([-a2, a1]) / (a1 + a2) ** 2
    cov = fit.cov_params().loc[["d_aggr", "d_traj"], ["d_aggr", "d_traj"]].to_numpy()
    assert est.statistic == pytest.approx(a2 / (a1 + a2), rel=1e-10)
    assert est.se == pytest.approx(np.sqrt(g @ cov @ g), rel=1e-8)
    lo, hi = est.confidence_interval()
    (blo, bhi), _ = bootstrap_alpha(frame, n_resamples=2000, seed=1)
    assert (hi - lo) == pytest.approx(bhi - blo, rel=0.25)
    assert lo < est.statistic < hi


def test_clustered_and_plain_standard_errors_differ_when_participants_vary(spec):
    flat = [
        alpha_estimate(f).se / alpha_estimate(f).se_plain
        for _, f in simulate_pairs(spec, 120, seed=4, model=NO_RANDOM_EFFECTS).groupby("condition")
    ]
    varied = [
        alpha_estimate(f).se / alpha_estimate(f).se_plain
        for _, f in simulate_pairs(spec, 120, seed=4, model=PARTICIPANTS_VARY).groupby("condition")
    ]
    assert all(0.75 < r < 1.25 for r in flat)  # no clustering to speak of: the two nearly coincide
    assert all(r > 1.25 for r in varied)


def test_monte_carlo_standard_error():
    assert mc_se(0.95, 100) == pytest.approx(np.sqrt(0.95 * 0.05 / 100))
    assert mc_se(1.0, 50) == 0.0


@pytest.fixture(scope="module")
def plans(request):
    """The same 80 simulated studies of 40 participants (common random numbers) without and with
    strong between-participant variation."""
    import json

    from studies.study_file import validate_study
    from tests.conftest import DEMO_FILE

    spec = validate_study(json.loads(DEMO_FILE.read_text()))
    return {
        name: plan_study(spec, n=40, n_studies=80, seed=11, model=model)
        for name, model in (("flat", NO_RANDOM_EFFECTS), ("varied", PARTICIPANTS_VARY))
    }


def test_plan_table_reports_monte_carlo_errors(plans):
    table = plans["flat"].table
    assert tuple(table.columns) == TABLE_COLUMNS
    for share in ("coverage", "coverage_plain", "steiger_power", "wald_power"):
        assert np.allclose(table[f"{share}_mcse"], np.sqrt(table[share] * (1 - table[share]) / 80))
    assert plans["flat"].model["participant_slope_sd"] == 0.0 and plans["flat"].n_studies == 80


def _pooled(plan, column: str) -> tuple[float, float]:
    """A share pooled over the two conditions (2 x 80 studies) and its Monte Carlo SE."""
    p = float(plan.table[column].mean())
    return p, mc_se(p, 2 * plan.n_studies)


def test_without_random_effects_both_intervals_are_near_nominal(plans):
    for column in ("coverage", "coverage_plain"):
        p, se = _pooled(plans["flat"], column)
        assert abs(p - 0.95) <= 3 * max(se, mc_se(0.95, 160)), column
    assert plans["flat"].table["se_ratio"].between(0.8, 1.2).all()


def test_with_participant_variation_plain_coverage_falls_and_clustered_holds(plans):
    plain, plain_se = _pooled(plans["varied"], "coverage_plain")
    clustered, clustered_se = _pooled(plans["varied"], "coverage")
    assert plain + 3 * plain_se < 0.95  # below nominal beyond Monte Carlo error
    assert abs(clustered - 0.95) <= 3 * mc_se(0.95, 160) + 0.02  # CR1 with 20 clusters: slightly liberal
    assert (plans["varied"].table["se_ratio"] > 1.25).all()


def test_power_decreases_with_participant_variance(plans):
    for column in ("steiger_power", "wald_power"):
        flat, flat_se = _pooled(plans["flat"], column)
        varied, varied_se = _pooled(plans["varied"], column)
        assert varied + 2 * np.hypot(flat_se, varied_se) < flat, column


def test_plan_study_widths_shrink_with_more_participants(spec):
    result = plan_study(spec, n=40, n_studies=4, seed=3)
    assert (result.table["ci_width_mean"] > 0).all() and result.table["steiger_power"].between(0, 1).all()
    small = plan_study(spec, n=12, n_studies=4, seed=3).table["ci_width_mean"].mean()
    assert small > result.table["ci_width_mean"].mean()  # fewer participants, wider intervals
