"""Design check before running a study: what precision and power does a given size buy?

For each of ``n_studies`` simulated studies of ``n`` participants (the survey's generative model with
participant and stimulus random effects, :func:`simulation.effort.simulate_pairs`), per condition:

* alpha = a2 / (a1 + a2) from Eq. 5 and its 95% CI by the delta method, var(alpha) = g' V g with
  g = (-a2, a1) / (a1 + a2)^2, once with the participant-clustered (CR1) covariance V of (a1, a2)
  (a fast stand-in for the pipeline's participant bootstrap, which gives similar widths) and once
  with the plain OLS covariance, which treats a participant's ratings as independent;
* whether Steiger's Z (Spearman-adjusted) rejects r_traj,input = r_aggr,input at the Bonferroni
  level (it treats the rated pairs as independent, as the paper does);
* whether the participant-clustered Wald test rejects a1 = a2 (trajectory weighted more: a2 > a1).

Reported per condition: mean and 90th percentile of the clustered CI width; the share of studies
whose clustered (``coverage``) and plain (``coverage_plain``) CI covers the generating alpha; the
mean ratio of the clustered to the plain SE of alpha (``se_ratio``); the power of both tests. Every
share p over R simulated studies comes with its Monte Carlo standard error sqrt(p (1 - p) / R)
(``*_mcse``). Coverage is for alpha of the population of participants and stimuli: with
``stimulus_sd > 0`` the stimulus effects are drawn afresh for every simulated study, and intervals
that resample (or cluster by) participants only, as the pipeline's do, cover less than nominal.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.stats import norm

from analysis.correlations import compare_correlations, correlation

TABLE_COLUMNS = (
    "condition",
    "ci_width_mean",
    "ci_width_p90",
    "coverage",
    "coverage_mcse",
    "coverage_plain",
    "coverage_plain_mcse",
    "se_ratio",
    "steiger_power",
    "steiger_power_mcse",
    "wald_power",
    "wald_power_mcse",
)


@dataclass(frozen=True)
class AlphaEstimate:
    """alpha = a2 / (a1 + a2) from one fit of Eq. 5, with delta-method SEs (clustered and plain)."""

    statistic: float
    se: float  # participant-clustered (CR1)
    se_plain: float
    wald_pvalue: float  # clustered Wald test of a1 = a2 (chi-square, 1 df)
    a1: float
    a2: float

    def confidence_interval(self, confidence_level: float = 0.95, *, plain: bool = False) -> tuple[float, float]:
        half = norm.ppf(0.5 + confidence_level / 2) * (self.se_plain if plain else self.se)
        return self.statistic - half, self.statistic + half


@dataclass(frozen=True)
class PlanResult:
    n: int
    n_studies: int
    seed: int
    true_alpha: float
    table: pd.DataFrame  # one row per condition, columns TABLE_COLUMNS
    model: dict  # the generative model's parameters
    warnings: tuple[str, ...] = ()  # groups too small to compare (``analysis.group_size``)


def alpha_estimate(pairs: pd.DataFrame, *, cluster: str = "participant_id") -> AlphaEstimate:
    """Fit Eq. 5 (d_overall ~ d_aggr + d_traj) by OLS; delta-method SEs of alpha from the plain and
    the ``cluster``-robust (CR1, statsmodels) covariance of (a0, a1, a2)."""
    x = sm.add_constant(pairs[["d_aggr", "d_traj"]].to_numpy(float), has_constant="add")
    fit = sm.OLS(pairs["d_overall"].to_numpy(float), x).fit()
    clustered = fit.get_robustcov_results("cluster", groups=pd.factorize(pairs[cluster])[0])
    _, a1, a2 = fit.params
    g = np.array([0.0, -a2, a1]) / (a1 + a2) ** 2
    contrast = np.array([0.0, -1.0, 1.0])
    cov = clustered.cov_params()
    z = (a2 - a1) / np.sqrt(contrast @ cov @ contrast)
    return AlphaEstimate(
        statistic=float(a2 / (a1 + a2)),
        se=float(np.sqrt(g @ cov @ g)),
        se_plain=float(np.sqrt(g @ fit.cov_params() @ g)),
        wald_pvalue=float(2 * norm.sf(abs(z))),
        a1=float(a1),
        a2=float(a2),
    )


def mc_se(p: float, replications: int) -> float:
    """Monte Carlo standard error of a share p estimated from ``replications`` independent runs."""
    return float(np.sqrt(p * (1 - p) / replications))


def plan_study(
    spec: dict,
    *,
    n: int,
    n_studies: int = 200,
    seed: int = 1,
    model=None,
    alpha_level: float = 0.05,
    n_tests: int = 4,
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """Simulate ``n_studies`` studies of ``n`` participants; the table described in the module
    docstring. ``alpha_level`` is the tests' level; Steiger's test is Bonferroni-adjusted over
    ``n_tests`` (the pipeline's Table 3 family)."""
    from simulation.effort import GenerativeModel, simulate_pairs

    model = model or GenerativeModel()
    true_alpha = model.a2 / (model.a1 + model.a2)
    rng = np.random.default_rng(seed)
    records = []
    for run in range(n_studies):
        pairs = simulate_pairs(spec, n, seed=int(rng.integers(2**62)), model=model)
        for cond, frame in pairs.groupby("condition"):
            est = alpha_estimate(frame)
            lo, hi = est.confidence_interval()
            lo_plain, hi_plain = est.confidence_interval(plain=True)
            r_traj = correlation(frame["d_traj"], frame["d_overall"]).statistic
            r_aggr = correlation(frame["d_aggr"], frame["d_overall"]).statistic
            r_kh = correlation(frame["d_aggr"], frame["d_traj"]).statistic
            test = compare_correlations(r_traj, r_aggr, r_kh, len(frame), method="steiger", spearman=True)
            records.append(
                {
                    "condition": cond,
                    "width": hi - lo,
                    "covers": lo <= true_alpha <= hi,
                    "covers_plain": lo_plain <= true_alpha <= hi_plain,
                    "se_ratio": est.se / est.se_plain,
                    "reject": test.pvalue * n_tests < alpha_level and test.statistic > 0,
                    "wald_reject": est.wald_pvalue < alpha_level and est.a2 > est.a1,
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
            coverage_plain=("covers_plain", "mean"),
            se_ratio=("se_ratio", "mean"),
            steiger_power=("reject", "mean"),
            wald_power=("wald_reject", "mean"),
        )
        .reset_index()
    )
    for share in ("coverage", "coverage_plain", "steiger_power", "wald_power"):
        table[f"{share}_mcse"] = [mc_se(p, n_studies) for p in table[share]]
    return PlanResult(n, n_studies, seed, float(true_alpha), table[list(TABLE_COLUMNS)], asdict(model))
