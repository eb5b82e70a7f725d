"""Design check before running a study: what precision and power does a given size buy?

For each of ``n_studies`` simulated studies of ``n`` participants (the survey's generative model,
:func:`surveys.simulation.simulate_pairs`), per condition:

* the 95% CI of alpha = a2 / (a1 + a2) by the delta method on the participant-clustered covariance
  of (a1, a2): var(alpha) = g' V g with g = (-a2, a1) / (a1 + a2)^2 (a fast stand-in for the
  pipeline's bootstrap, which gives similar widths);
* whether Steiger's Z (Spearman-adjusted) rejects r_traj,input = r_aggr,input at the Bonferroni level.

Reported: mean and 90th percentile of the CI width, the power (share of rejections), and the
share of studies whose CI covers the generating alpha.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.correlations import compare_correlations, correlation
from analysis.regression import distance_regression


@dataclass(frozen=True)
class PlanResult:
    n: int
    n_studies: int
    seed: int
    true_alpha: float
    table: pd.DataFrame  # one row per condition: ci_width_mean, ci_width_p90, coverage, steiger_power


def alpha_delta_ci(pairs: pd.DataFrame, level: float = 0.95) -> tuple[float, float, float]:
    """alpha and its delta-method CI from Eq. 5 with participant-clustered covariance."""
    from scipy.stats import norm

    fit = distance_regression(pairs, "d_overall", cluster="participant_id").model
    a1, a2 = fit.params["d_aggr"], fit.params["d_traj"]
    cov = fit.cov_params().loc[["d_aggr", "d_traj"], ["d_aggr", "d_traj"]].to_numpy()
    g = np.array([-a2, a1]) / (a1 + a2) ** 2
    alpha = a2 / (a1 + a2)
    half = norm.ppf(0.5 + level / 2) * float(np.sqrt(g @ cov @ g))
    return float(alpha), float(alpha - half), float(alpha + half)


def plan_study(
    spec: dict,
    *,
    n: int,
    n_studies: int = 200,
    seed: int = 1,
    model=None,
    alpha_level: float = 0.05,
    n_tests: int = 4,
    progress=None,
) -> PlanResult:
    from surveys.simulation import GenerativeModel, simulate_pairs

    model = model or GenerativeModel()
    true_alpha = model.a2 / (model.a1 + model.a2)
    rng = np.random.default_rng(seed)
    records = []
    for run in range(n_studies):
        pairs = simulate_pairs(spec, n, seed=int(rng.integers(2**62)), model=model)
        for cond, frame in pairs.groupby("condition"):
            alpha, lo, hi = alpha_delta_ci(frame)
            r_traj = correlation(frame["d_traj"], frame["d_overall"]).statistic
            r_aggr = correlation(frame["d_aggr"], frame["d_overall"]).statistic
            r_kh = correlation(frame["d_aggr"], frame["d_traj"]).statistic
            test = compare_correlations(r_traj, r_aggr, r_kh, len(frame), method="steiger", spearman=True)
            records.append(
                {
                    "condition": cond,
                    "width": hi - lo,
                    "covers": lo <= true_alpha <= hi,
                    "reject": test.pvalue * n_tests < alpha_level and test.statistic > 0,
                }
            )
        if progress:
            progress(run + 1)
    frame = pd.DataFrame(records)
    table = (
        frame.groupby("condition")
        .agg(
            ci_width_mean=("width", "mean"),
            ci_width_p90=("width", lambda w: np.quantile(w, 0.9)),
            coverage=("covers", "mean"),
            steiger_power=("reject", "mean"),
        )
        .reset_index()
    )
    return PlanResult(n, n_studies, seed, true_alpha, table)
