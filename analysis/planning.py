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

* alpha's generalising CI: the pipeline's two-way (participants x stimuli) pigeonhole bootstrap
  (:func:`analysis.pipeline.bootstrap_alpha` with ``generalise="stimuli"``, ``n_resamples`` each).

The estimator's target (``estimand``) is not the generating a2 / (a1 + a2): rounding to the Likert
scale and clipping at its ends bias OLS, so alpha converges to a different value. The estimand is
alpha of the pooled fit over all simulated studies (R x n participants, R independent draws of the
stimulus effects: alpha of the population of participants and stimuli); ``bias`` = estimand -
generating alpha, with the estimand's Monte Carlo SE sd(alpha_r) / sqrt(R). Each study's interval
is judged against the pooled fit of the *other* R - 1 studies (leave-one-out, so the target does not
depend on the study judged; NaN with R = 1).

Reported per condition: ``estimand``, ``bias``, mean and 90th percentile of the width of the
clustered CI and of the two-way CI; the share of studies whose clustered (``coverage``), plain
(``coverage_plain``) and two-way (``coverage_two_way``) CI covers the estimand, and the clustered
CI's coverage of the generating alpha (``coverage_generating``: bias and coverage mixed); the mean
ratio of the clustered to the plain SE of alpha (``se_ratio``); the power of both tests. Every
share p over R simulated studies comes with its Monte Carlo standard error sqrt(p (1 - p) / R)
(``*_mcse``). With ``stimulus_sd > 0`` the stimulus effects are drawn afresh for every simulated
study: intervals that resample (or cluster by) participants only, as the headline ones do, estimate
alpha *for the study's stimulus pairs* and cover the population estimand less than nominal; the
two-way interval is the generalising one. It is calibrated for the complete crossed design (every
participant rates every pair, as in the effort study); when each participant rates a subset of the
pairs (``stimulus_copies`` m > 1: m times as many pairs, ``simulate_pairs``) the pigeonhole bootstrap
is conservative and hardly narrows, while the true spread does: ``stimuli_table`` projects the spread
of alpha, and the width of a calibrated generalising CI, for more stimuli from the simulation itself.
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
    "n_stimuli",
    "estimand",
    "estimand_mcse",
    "bias",
    "ci_width_mean",
    "ci_width_p90",
    "coverage",
    "coverage_mcse",
    "coverage_generating",
    "coverage_generating_mcse",
    "coverage_plain",
    "coverage_plain_mcse",
    "ci_width_two_way_mean",
    "ci_width_two_way_p90",
    "coverage_two_way",
    "coverage_two_way_mcse",
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
    true_alpha: float  # the generating a2 / (a1 + a2); the estimator's target is table["estimand"]
    table: pd.DataFrame  # one row per condition, columns TABLE_COLUMNS
    model: dict  # the generative model's parameters
    stimuli: pd.DataFrame  # stimuli_table: projected generalising widths for more stimulus pairs
    n_resamples: int = 0
    stimulus_copies: int = 1
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


STIMULUS_MULTIPLIERS = (1, 2, 4, 8)


def plan_study(
    spec: dict,
    *,
    n: int,
    n_studies: int = 200,
    seed: int = 1,
    model=None,
    alpha_level: float = 0.05,
    n_tests: int = 4,
    n_resamples: int = 500,
    stimulus_copies: int = 1,
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """Simulate ``n_studies`` studies of ``n`` participants; the table described in the module
    docstring. ``alpha_level`` is the tests' level; Steiger's test is Bonferroni-adjusted over
    ``n_tests`` (the pipeline's Table 3 family); ``n_resamples`` is the two-way bootstrap's size;
    ``stimulus_copies`` multiplies the stimulus pairs (each participant still rates 12)."""
    from analysis.pipeline import bootstrap_alpha
    from analysis.repeated_measures import design
    from simulation.effort import GenerativeModel, simulate_pairs

    model = model or GenerativeModel()
    true_alpha = model.a2 / (model.a1 + model.a2)
    rng = np.random.default_rng(seed)
    records, moments = [], []
    for run in range(n_studies):
        study_seed = int(rng.integers(2**62))
        pairs = simulate_pairs(spec, n, seed=study_seed, model=model, stimulus_copies=stimulus_copies)
        pairs["stimulus"] = pairs["set"] + "/" + pairs["comparison"]
        for cond, frame in pairs.groupby("condition"):
            est = alpha_estimate(frame)
            lo, hi = est.confidence_interval()
            lo_plain, hi_plain = est.confidence_interval(plain=True)
            (lo_two, hi_two), _ = bootstrap_alpha(frame, n_resamples=n_resamples, seed=study_seed, generalise="stimuli")
            r_traj = correlation(frame["d_traj"], frame["d_overall"]).statistic
            r_aggr = correlation(frame["d_aggr"], frame["d_overall"]).statistic
            r_kh = correlation(frame["d_aggr"], frame["d_traj"]).statistic
            test = compare_correlations(r_traj, r_aggr, r_kh, len(frame), method="steiger", spearman=True)
            x = design(frame, ["d_aggr", "d_traj"])
            moments.append((cond, x.T @ x, x.T @ frame["d_overall"].to_numpy(float)))
            records.append(
                {
                    "condition": cond,
                    "n_stimuli": frame["stimulus"].nunique(),
                    "alpha": est.statistic,
                    "se": est.se,
                    "interval": (lo, hi),
                    "interval_plain": (lo_plain, hi_plain),
                    "interval_two_way": (lo_two, hi_two),
                    "width": hi - lo,
                    "width_two_way": hi_two - lo_two,
                    "covers_generating": lo <= true_alpha <= hi,
                    "se_ratio": est.se / est.se_plain,
                    "reject": test.pvalue * n_tests < alpha_level and test.statistic > 0,
                    "wald_reject": est.wald_pvalue < alpha_level and est.a2 > est.a1,
                }
            )
        if progress:
            progress(run + 1)
    frame = pd.DataFrame(records)
    frame["target"], estimands = _leave_one_out_estimands(moments)
    for kind in ("", "_plain", "_two_way"):
        frame[f"covers{kind}"] = [
            float(lo <= t <= hi) if np.isfinite(t) else np.nan
            for (lo, hi), t in zip(frame[f"interval{kind}"], frame["target"], strict=True)
        ]
    table = (
        frame.groupby("condition")
        .agg(
            n_stimuli=("n_stimuli", "max"),
            estimand_mcse=("alpha", lambda a: a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else np.nan),
            ci_width_mean=("width", "mean"),
            ci_width_p90=("width", lambda w: np.quantile(w, 0.9)),
            coverage=("covers", "mean"),
            coverage_generating=("covers_generating", "mean"),
            coverage_plain=("covers_plain", "mean"),
            ci_width_two_way_mean=("width_two_way", "mean"),
            ci_width_two_way_p90=("width_two_way", lambda w: np.quantile(w, 0.9)),
            coverage_two_way=("covers_two_way", "mean"),
            se_ratio=("se_ratio", "mean"),
            steiger_power=("reject", "mean"),
            wald_power=("wald_reject", "mean"),
        )
        .reset_index()
    )
    table["estimand"] = table["condition"].map(estimands)
    table["bias"] = table["estimand"] - true_alpha
    for share in (
        "coverage",
        "coverage_generating",
        "coverage_plain",
        "coverage_two_way",
        "steiger_power",
        "wald_power",
    ):
        table[f"{share}_mcse"] = [mc_se(p, n_studies) for p in table[share]]
    return PlanResult(
        n,
        n_studies,
        seed,
        float(true_alpha),
        table[list(TABLE_COLUMNS)],
        asdict(model),
        stimuli_table(frame),
        n_resamples,
        stimulus_copies,
    )


def _leave_one_out_estimands(moments: list[tuple[str, np.ndarray, np.ndarray]]) -> tuple[list[float], dict]:
    """Per (study, condition) record, alpha of the pooled Eq. 5 fit over the other studies' pairs of its
    condition (sum of their X'X and X'y); and per condition the pooled fit over all studies."""

    def alpha_of(xx: np.ndarray, xy: np.ndarray) -> float:
        _, a1, a2 = np.linalg.solve(xx, xy)
        return float(a2 / (a1 + a2))

    totals: dict[str, list] = {}
    for cond, xx, xy in moments:
        total = totals.setdefault(cond, [np.zeros_like(xx), np.zeros_like(xy), 0])
        total[0], total[1], total[2] = total[0] + xx, total[1] + xy, total[2] + 1
    targets = [
        alpha_of(totals[cond][0] - xx, totals[cond][1] - xy) if totals[cond][2] > 1 else float("nan")
        for cond, xx, xy in moments
    ]
    return targets, {cond: alpha_of(xx, xy) for cond, (xx, xy, _) in totals.items()}


def stimuli_table(
    records: pd.DataFrame, multipliers: tuple[int, ...] = STIMULUS_MULTIPLIERS, confidence_level: float = 0.95
) -> pd.DataFrame:
    """How much m times as many stimulus pairs (each participant still rating as many) would narrow alpha's
    sampling spread: a projection from the simulated studies themselves, not from any interval. Var(alpha_r)
    over the R studies is the variance over participants *and* stimuli, the mean squared clustered SE the
    part from participants given the stimuli; the rest, V_s = Var(alpha_r) - mean(se^2) (at least 0), comes
    from drawing the stimuli and falls as 1 / m:
    ``sd_alpha`` = sqrt(mean(se^2) + V_s / m) and ``ci_width`` = 2 z sd_alpha, the width a calibrated
    generalising 95% CI would have (NaN with fewer than 2 studies)."""
    z = norm.ppf(0.5 + confidence_level / 2)
    rows = []
    for cond, part in records.groupby("condition"):
        v_p = float((part["se"] ** 2).mean())
        v_s = max(float(part["alpha"].var(ddof=1)) - v_p, 0.0) if len(part) > 1 else float("nan")
        for m in multipliers:
            sd = float(np.sqrt(v_p + v_s / m))
            rows.append(
                {
                    "condition": cond,
                    "stimulus_pairs": int(part["n_stimuli"].max()) * m,
                    "sd_participants": float(np.sqrt(v_p)),
                    "sd_stimuli": float(np.sqrt(v_s / m)),
                    "sd_alpha": sd,
                    "ci_width": 2 * z * sd,
                }
            )
    return pd.DataFrame(rows)
