import numpy as np
import pandas as pd
import pytest

from fairness import calibration
from fairness.calibration import calibrate_from_disagreement
from fairness.individual import subject_violations


def test_recovers_the_alpha_that_generated_disagreements():
    rng = np.random.default_rng(0)
    n = 400
    effort, aggregate, risk = rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    true_alpha = 0.8
    judged = np.arange(40)
    v = subject_violations(effort, aggregate, risk, alpha=true_alpha, subjects=judged)
    p = (v - v.min()) / (v.max() - v.min())
    rows = [
        {"participant": f"p{k}", "subject": int(i), "disagreement": int(rng.random() < 0.05 + 0.9 * p[i])}
        for k in range(150)
        for i in judged
    ]
    result = calibrate_from_disagreement(
        effort, aggregate, risk, pd.DataFrame(rows), subject_index={i: i for i in judged}, n_resamples=200, seed=1
    )
    assert result.ci[0] <= true_alpha <= result.ci[1]
    assert abs(result.alpha - true_alpha) <= 0.15 and result.correlation > 0.8
    assert len(result.grid) == 101 and result.n_subjects == 40 and result.n_participants == 150


def test_needs_feedback_on_several_subjects():
    with pytest.raises(ValueError, match="at least 3"):
        calibrate_from_disagreement(
            [0, 1],
            [0, 1],
            [0, 1],
            pd.DataFrame({"participant": ["a"], "subject": [0], "disagreement": [1]}),
            subject_index={0: 0},
        )


def test_no_defined_correlation_is_an_error_not_alpha_one_half():
    """Equal disagreement rates (or violations equal for every alpha) leave the Spearman criterion
    undefined on the whole grid; the estimate used to fall back to the grid's median, 0.5."""
    rng = np.random.default_rng(0)
    n = 50
    effort, aggregate, risk = rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    judged = range(10)
    same_rate = pd.DataFrame(
        [{"participant": f"p{k}", "subject": i, "disagreement": 1} for k in range(5) for i in judged]
    )
    with pytest.raises(ValueError, match="every judged subject has the same disagreement rate"):
        calibrate_from_disagreement(effort, aggregate, risk, same_rate, subject_index={i: i for i in judged})
    varied = same_rate.assign(disagreement=[int(i % 2) for i in same_rate["subject"]])
    flat_risk = np.full(n, 0.5)  # no output gaps: violations are 0 for every alpha
    with pytest.raises(ValueError, match="violations are equal"):
        calibrate_from_disagreement(effort, aggregate, flat_risk, varied, subject_index={i: i for i in judged})


def test_the_best_alpha_is_the_median_of_the_best_grid_points_row_by_row():
    """The estimate per row (all rows at once) equals ``np.median`` of that row's grid points with the
    highest correlation, exactly: ties of 1 to 6 points (odd and even counts), NaN correlations, rows with
    no defined correlation (NaN), and a grid in any order."""
    rng = np.random.default_rng(0)
    grid = np.round(np.arange(0, 1 + 1e-9, 0.01), 10)
    correlations = rng.choice([0.1, 0.4, 0.7, np.nan], size=(400, grid.size), p=[0.5, 0.3, 0.19, 0.01])
    for row, ties in zip(correlations, rng.integers(1, 7, len(correlations)), strict=True):
        row[rng.choice(grid.size, ties, replace=False)] = 0.9
    correlations[:3] = np.nan
    for points in (grid, rng.permutation(grid)):
        hits = np.isclose(
            correlations, np.nanmax(np.where(np.isnan(correlations), -np.inf, correlations), axis=1)[:, None]
        )
        expected = [np.median(points[row]) if row.any() else np.nan for row in hits]
        assert np.array_equal(calibration._argbest(correlations, points), expected, equal_nan=True)


def test_curves_computed_once_give_the_same_calibration():
    """Curves of more subjects than were judged (as a rater-group analysis computes them once for all its
    calibrations) give the calibration that computes its own, exactly."""
    rng = np.random.default_rng(3)
    effort, aggregate, risk = rng.uniform(0, 1, (3, 120))
    feedback = pd.DataFrame(
        {"participant": np.repeat(np.arange(20), 15), "subject": np.tile(np.arange(15), 20)}
    ).assign(disagreement=lambda f: (rng.random(len(f)) < 0.2 + 0.04 * f["subject"]).astype(int))
    index = {i: i for i in range(30)}
    curves = calibration.violation_curves(effort, aggregate, risk, list(range(30)), subject_index=index)
    alone = calibrate_from_disagreement(effort, aggregate, risk, feedback, subject_index=index, n_resamples=50)
    shared = calibrate_from_disagreement(
        effort, aggregate, risk, feedback, subject_index=index, n_resamples=50, curves=curves
    )
    assert (shared.alpha, shared.ci) == (alone.alpha, alone.ci)
    assert np.array_equal(shared.correlations, alone.correlations, equal_nan=True)
    assert np.array_equal(shared.distribution, alone.distribution, equal_nan=True)
