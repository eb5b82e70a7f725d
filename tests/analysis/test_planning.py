import pytest

from analysis.pipeline import bootstrap_alpha
from analysis.planning import alpha_delta_ci, plan_study
from surveys.simulation import GenerativeModel, simulate_pairs


def test_simulated_pairs_table_matches_export_shape(demo_spec):
    from surveys.study_file import validate_study

    pairs = simulate_pairs(validate_study(demo_spec), 10, seed=1)
    assert len(pairs) == 10 * 12 and set(pairs["condition"]) == {"arrests", "income"}
    assert pairs[["d_traj", "d_aggr", "d_overall"]].stack().between(1, 6).all()


def test_delta_ci_agrees_with_participant_bootstrap(demo_spec):
    from surveys.study_file import validate_study

    pairs = simulate_pairs(validate_study(demo_spec), 150, seed=2)
    frame = pairs[pairs["condition"] == "income"]
    alpha, lo, hi = alpha_delta_ci(frame)
    (blo, bhi), _ = bootstrap_alpha(frame, n_resamples=2000, seed=1)
    assert (hi - lo) == pytest.approx(bhi - blo, rel=0.25)
    assert lo < alpha < hi


def test_plan_study_reports_width_coverage_and_power(demo_spec):
    from surveys.study_file import validate_study

    result = plan_study(validate_study(demo_spec), n=40, n_studies=4, seed=3, model=GenerativeModel())
    assert list(result.table.columns) == ["condition", "ci_width_mean", "ci_width_p90", "coverage", "steiger_power"]
    assert (result.table["ci_width_mean"] > 0).all() and result.table["steiger_power"].between(0, 1).all()
    small = plan_study(validate_study(demo_spec), n=12, n_studies=4, seed=3).table["ci_width_mean"].mean()
    assert small > result.table["ci_width_mean"].mean()  # fewer participants, wider intervals
