import numpy as np
import pandas as pd
import pytest

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
