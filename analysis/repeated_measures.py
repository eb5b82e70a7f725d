"""Participant-level inference: every participant rates many pairs (12 in the paper), so pairs are
not independent and tests that treat them as such reject a true null far too often.

* ``cluster_bootstrap_ols``: OLS coefficients on resamples of whole participants (optionally
  within strata, e.g. the between-subject condition), vectorised through per-participant normal
  equations: for draw counts K (resamples x participants), X'WX = K @ (sum_i X_i'X_i) and likewise X'Wy.
* ``two_way_bootstrap_ols``: the same on pigeonhole resamples of participants *and* stimuli (Owen
  2007): the interval generalises to other stimuli like the study's, not only to other participants.
* ``bootstrap_pvalue``: two-sided bootstrap p-value of H0: theta = theta0 from the distribution
  centred at the estimate (Hall & Wilson 1991, "Two guidelines for bootstrap hypothesis testing"):
  p = (1 + #{|theta*_b - theta_hat| >= |theta_hat - theta0|}) / (B + 1).
* ``repeated_measures_correlation``: Bakdash & Marusich's (2017) rmcorr via ``pingouin.rm_corr``:
  the correlation of x and y within participants, r_rm = sign(b) sqrt(SS_x / (SS_x + SS_res)) from
  the ANCOVA y ~ participant + x, df = N - k - 1.
* ``participant_slope_effect``: the two-stage (summary-statistics) test: Eq. 5/6 fitted within
  each participant, then a one-sample t-test of a2_i - a1_i across participants with Cohen's
  d = mean / SD and its CI (Hedges & Olkin 1985, ``pingouin.compute_esci``).

The headline tests (``participant_level_tests``) condition on the study's stimulus set: they are
valid for any dependence among one participant's ratings (response styles, individual weights)
and for stimulus effects that are the same in every sample of participants: their estimand is the
quantity *for these stimulus pairs* (``ESTIMAND_STIMULI``). Generalising to other stimuli needs the
stimulus variance of the crossed mixed model (``analysis.mixed_model``) or the two-way bootstrap:
``generalising_tests`` (the family's RQ1-RQ2 tests with ``generalise="stimuli"``, ``ESTIMAND_POPULATION``)
resamples participants and stimuli (pigeonhole) for r_traj - r_aggr and (a1, a2), with centred p-values.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from analysis.correlations import BootstrapResult, adjust_pvalues, bootstrap_correlation_difference, resample_counts
from analysis.regression import RegressionResult

HEADLINE_FAMILY = (
    "headline participant-level tests: RQ1 r_traj = r_aggr (participant bootstrap), RQ2 a2 = a1 and "
    "a1 = a2 = 0 (cluster-robust Wald), per condition and outcome (d, D); RQ3 a4 = a5 = 0 (cluster-robust "
    "Wald) per outcome"
)
HEADLINE_FAMILY_STIMULI = (
    "headline tests generalising over stimuli (generalise = stimuli): RQ1 r_traj = r_aggr, RQ2 a2 = a1 and "
    "a1 = a2 = 0 (two-way bootstrap of participants and stimuli, centred p), per condition and outcome (d, D); "
    "RQ3 a4 = a5 = 0 (cluster-robust Wald, for these stimuli) per outcome"
)
FAMILY_NAME = "headline"  # the ``family`` column; HEADLINE_FAMILY states it in full
FAMILY_METHOD = "holm"
TABLE_ORDER = ("model", "outcome", "hypothesis", "quantity", "method", "estimate", "ci_low", "ci_high", "std_err")
BOOTSTRAP = "participant bootstrap (percentile CI, centred p)"
# what the headline tests and participant-resampling intervals estimate, stated where they are printed
ESTIMAND_STIMULI = "for these {n} stimulus pairs (participants resampled; other stimuli not represented)"
ESTIMAND_POPULATION = (
    "for a population of stimulus pairs like these {n} (participants and stimuli resampled: two-way bootstrap)"
)
CLUSTER_WALD = "cluster-robust Wald (CR1, by participant)"
TWO_WAY = "two-way bootstrap of participants and stimuli (pigeonhole; percentile CI, centred p)"


@dataclass(frozen=True)
class ClusterBootstrap:
    """A participant-bootstrap estimate: ``statistic`` is the estimate divided by the bootstrap SE."""

    estimate: float
    statistic: float
    pvalue: float
    confidence_interval: tuple[float, float]
    std_err: float
    n_resamples: int
    n_failed: int
    seed: int


def bootstrap_pvalue(distribution: np.ndarray, estimate: float, null: float = 0.0) -> float:
    """Two-sided p of H0: theta = ``null`` from the centred bootstrap distribution (NaNs ignored)."""
    dist = np.asarray(distribution, dtype=float)
    dist = dist[~np.isnan(dist)]
    extreme = np.abs(dist - estimate) >= abs(estimate - null)
    return float((1 + extreme.sum()) / (dist.size + 1))


def bootstrap_wald_pvalue(draws: np.ndarray, estimate: np.ndarray, null: np.ndarray) -> tuple[float, float]:
    """Joint test of H0: theta = ``null`` (a vector) from bootstrap ``draws`` (B x k, NaN rows ignored), centred
    as :func:`bootstrap_pvalue`: with S the bootstrap covariance, T = (theta_hat - null)' S^-1 (theta_hat - null)
    and p = (1 + #{(theta*_b - theta_hat)' S^-1 (theta*_b - theta_hat) >= T}) / (B + 1). Returns (T, p)."""
    ok = np.asarray(draws, dtype=float)
    ok = ok[~np.isnan(ok).any(axis=1)]
    estimate = np.asarray(estimate, dtype=float)
    precision = np.linalg.pinv(np.atleast_2d(np.cov(ok, rowvar=False)))
    gap = estimate - np.asarray(null, dtype=float)
    centred = ok - estimate
    statistic = float(gap @ precision @ gap)
    spread = np.einsum("bi,ij,bj->b", centred, precision, centred)
    return statistic, float((1 + (spread >= statistic).sum()) / (ok.shape[0] + 1))


def summarise_bootstrap(
    distribution: np.ndarray, estimate: float, *, seed: int, level: float = 0.95, null: float = 0.0
) -> ClusterBootstrap:
    """Percentile CI, bootstrap SE, z = estimate / SE and the centred p-value of a distribution."""
    dist = np.asarray(distribution, dtype=float)
    ok = dist[~np.isnan(dist)]
    tail = (1 - level) / 2
    lo, hi = np.quantile(ok, [tail, 1 - tail])
    se = float(ok.std(ddof=1))
    return ClusterBootstrap(
        float(estimate),
        float((estimate - null) / se) if se > 0 else float("nan"),
        bootstrap_pvalue(ok, estimate, null),
        (float(lo), float(hi)),
        se,
        int(dist.size),
        int(dist.size - ok.size),
        seed,
    )


def cluster_bootstrap_ols(
    x: np.ndarray,
    y: np.ndarray,
    groups,
    *,
    n_resamples: int,
    seed: int,
    strata=None,
    chunk: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Coefficients (n_resamples x p) of the OLS y ~ x (x with its own intercept column) on
    resamples of whole clusters ``groups``, drawn with replacement within each of ``strata`` (one
    value per row, constant within a cluster). A resample with a singular X'X gives NaNs."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    codes, uniques = pd.factorize(pd.Series(groups).to_numpy())
    n_groups, p = len(uniques), x.shape[1]
    xx = np.zeros((n_groups, p * p))
    np.add.at(xx, codes, np.einsum("ni,nj->nij", x, x).reshape(-1, p * p))
    xy = np.zeros((n_groups, p))
    np.add.at(xy, codes, x * y[:, None])
    if strata is None:
        members = [np.arange(n_groups)]
    else:
        stratum_of = pd.Series(pd.Series(strata).to_numpy()).groupby(codes).first()
        members = [np.flatnonzero(stratum_of.to_numpy() == level) for level in pd.unique(stratum_of)]
    rng = np.random.default_rng(seed)
    out, done = [], 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        counts = np.zeros((size, n_groups))
        for idx in members:
            counts[:, idx] = resample_counts(rng, idx.size, size)
        out.append(_solve_normal_equations((counts @ xx).reshape(-1, p, p), counts @ xy))
        done += size
        if progress:
            progress(done)
    return np.concatenate(out)


def _solve_normal_equations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """beta solving a beta = b for a stack of X'WX (... x p x p) and X'Wy (... x p); NaN where singular."""
    a = a.copy()
    singular = np.linalg.cond(a) > 1e12
    a[singular] = np.eye(a.shape[-1])
    beta = np.linalg.solve(a, b[..., None])[..., 0]
    beta[singular] = np.nan
    return beta


def two_way_bootstrap_ols(
    x: np.ndarray,
    y: np.ndarray,
    participants,
    stimuli,
    *,
    n_resamples: int,
    seed: int,
    chunk: int = 500,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Coefficients (n_resamples x p) of the OLS y ~ x on two-way (pigeonhole) bootstrap resamples:
    participants and stimuli are drawn with replacement independently and the rating of (i, j) gets
    weight c_i d_j, the product of their draw counts (Owen 2007, "The pigeonhole bootstrap", Ann.
    Appl. Stat. 1: 386-411; its variance is slightly conservative). With X_ij'X_ij summed per cell,
    X'WX = sum_ij c_i d_j (X'X)_ij. Unlike :func:`cluster_bootstrap_ols` the intervals include the
    variation from drawing other stimuli. A resample with a singular X'X gives NaNs."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rows, row_ids = pd.factorize(pd.Series(participants).to_numpy())
    cols, col_ids = pd.factorize(pd.Series(stimuli).to_numpy())
    n_p, n_s, p = len(row_ids), len(col_ids), x.shape[1]
    moments = np.zeros((n_p, n_s, p * p + p))
    np.add.at(moments, (rows, cols), np.hstack([np.einsum("ni,nj->nij", x, x).reshape(-1, p * p), x * y[:, None]]))
    flat = moments.reshape(n_p, -1)
    rng = np.random.default_rng(seed)
    out, done = [], 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        c = resample_counts(rng, n_p, size)
        d = resample_counts(rng, n_s, size)
        sums = np.einsum("bjk,bj->bk", (c @ flat).reshape(size, n_s, -1), d)
        out.append(_solve_normal_equations(sums[:, : p * p].reshape(-1, p, p), sums[:, p * p :]))
        done += size
        if progress:
            progress(done)
    return np.concatenate(out)


RM_CORR_FIELDS = ("r", "dof", "pvalue", "ci_low", "ci_high", "power")  # what repeated_measures_correlation returns


def repeated_measures_correlation(data: pd.DataFrame, x: str, y: str, subject: str = "participant_id") -> dict:
    """rmcorr (``pingouin.rm_corr``): ``r``, ``dof``, ``pvalue``, ``ci_low``, ``ci_high``, ``power``.
    Participants with fewer than two complete rows carry no within-participant information and are
    left out (pingouin would refuse them)."""
    frame = data[[subject, x, y]].dropna()
    frame = frame[frame.groupby(subject)[x].transform("size") >= 2]
    if frame[subject].nunique() < 3:
        raise ValueError("a repeated-measures correlation needs at least 3 participants with 2 or more pairs each")
    import pingouin as pg  # here, not at the top: pingouin loads matplotlib and xarray (0.5 CPU-s a process)

    res = pg.rm_corr(data=frame, x=x, y=y, subject=subject).iloc[0]
    lo, hi = res["CI95"]
    return {
        "r": float(res["r"]),
        "dof": int(res["dof"]),
        "pvalue": float(res["pval"]),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "power": float(res["power"]),
    }


SLOPE_EFFECT_FIELDS = (
    "n_participants",
    "participants_skipped",
    "mean_difference",
    "ci_low",
    "ci_high",
    "statistic",
    "dof",
    "pvalue",
    "cohen_d",
    "cohen_d_ci_low",
    "cohen_d_ci_high",
)  # what participant_slope_effect returns


def participant_slope_effect(
    frame: pd.DataFrame, outcome: str, *, participant: str = "participant_id", level: float = 0.95
) -> dict:
    """Two-stage test of a2 = a1: per participant OLS ``outcome ~ d_aggr + d_traj`` (participants
    whose own design is singular, e.g. constant ratings, are left out and counted), then a
    one-sample t-test of the differences a2_i - a1_i (scipy; pingouin rounds its CI) with Cohen's d
    = mean / SD and its CI (``pingouin.compute_esci``)."""
    rows = frame[[participant, "d_aggr", "d_traj", outcome]].dropna()
    codes, uniques = pd.factorize(rows[participant])
    x, y = design(rows, ["d_aggr", "d_traj"]), rows[outcome].to_numpy(float)
    xx = np.zeros((len(uniques), 9))
    np.add.at(xx, codes, np.einsum("ni,nj->nij", x, x).reshape(-1, 9))  # each participant's X'X and X'y
    xy = np.zeros((len(uniques), 3))
    np.add.at(xy, codes, x * y[:, None])
    a = xx.reshape(-1, 3, 3)
    usable = (np.bincount(codes, minlength=len(uniques)) >= 4) & (np.linalg.cond(a) < 1e10)
    beta = np.linalg.solve(a[usable], xy[usable][..., None])[..., 0]
    differences, skipped = list(beta[:, 2] - beta[:, 1]), int((~usable).sum())
    n = len(differences)
    if n < 3:
        raise ValueError("the two-stage test needs at least 3 participants with a non-singular design")
    diff = np.asarray(differences)
    res = stats.ttest_1samp(diff, 0.0)
    lo, hi = res.confidence_interval(confidence_level=level)
    d = float(diff.mean() / diff.std(ddof=1))
    import pingouin as pg

    d_lo, d_hi = pg.compute_esci(d, nx=n, ny=1, eftype="cohen", confidence=level, decimals=12)
    return {
        "n_participants": n,
        "participants_skipped": skipped,
        "mean_difference": float(np.mean(differences)),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "statistic": float(res.statistic),
        "dof": int(res.df),
        "pvalue": float(res.pvalue),
        "cohen_d": d,
        "cohen_d_ci_low": float(d_lo),
        "cohen_d_ci_high": float(d_hi),
    }


def design(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Intercept column and ``columns`` as the OLS design matrix."""
    return np.column_stack([np.ones(len(frame)), *(frame[c].to_numpy(float) for c in columns)])


def _wald_row(hypothesis: str, test) -> dict:
    """A joint cluster-robust Wald test (chi-square) from ``RegressionResult.wald_*``."""
    return _joint_row(hypothesis, CLUSTER_WALD, test.chi2, test.df[0], test.pvalue_chi2)


def _joint_row(hypothesis: str, method: str, statistic: float, df: int, pvalue: float) -> dict:
    """A row of a joint test: no single estimate or interval."""
    return {
        "hypothesis": hypothesis,
        "method": method,
        "estimate": np.nan,
        "std_err": np.nan,
        "statistic": statistic,
        "df": df,
        "pvalue": pvalue,
        "ci_low": np.nan,
        "ci_high": np.nan,
    }


def _contrast_row(fit: RegressionResult, a: str, b: str, hypothesis: str) -> dict:
    """Cluster-robust Wald test of b - a = 0 (chi-square, 1 df) with its normal CI."""
    t = fit.model.t_test(f"{b} - {a} = 0")
    lo, hi = np.asarray(t.conf_int())[0]
    z = float(np.asarray(t.tvalue).ravel()[0])
    return {
        "hypothesis": hypothesis,
        "method": CLUSTER_WALD,
        "estimate": float(np.asarray(t.effect).ravel()[0]),
        "std_err": float(np.asarray(t.sd).ravel()[0]),
        "statistic": z * z,
        "df": 1,
        "pvalue": float(np.asarray(t.pvalue).ravel()[0]),
        "ci_low": float(lo),
        "ci_high": float(hi),
    }


def _bootstrap_row(boot: ClusterBootstrap, hypothesis: str, method: str = BOOTSTRAP) -> dict:
    return {
        "hypothesis": hypothesis,
        "method": method,
        "estimate": boot.estimate,
        "std_err": boot.std_err,
        "statistic": boot.statistic,
        "df": np.nan,
        "pvalue": boot.pvalue,
        "ci_low": boot.confidence_interval[0],
        "ci_high": boot.confidence_interval[1],
    }


def condition_tests(
    frame: pd.DataFrame,
    outcome: str,
    clustered: RegressionResult,
    r_boot: BootstrapResult,
    *,
    n_resamples: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> list[dict]:
    """RQ1-RQ2 for one condition and outcome: the participant bootstrap of r_traj - r_aggr
    (``r_boot``, from ``bootstrap_correlation_difference``), cluster-robust Wald tests of a2 = a1 and
    a1 = a2 = 0 (``clustered``: the Eq. 5/6 fit with participant-clustered SEs) and the participant
    bootstrap of a2 - a1 (seeded with ``seed``). ``in_family`` marks the tests of the headline family."""
    betas = cluster_bootstrap_ols(
        design(frame, ["d_aggr", "d_traj"]),
        frame[outcome],
        frame["participant_id"],
        n_resamples=n_resamples,
        seed=seed,
        progress=progress,
    )
    params = clustered.params
    contrast = summarise_bootstrap(betas[:, 2] - betas[:, 1], params["d_traj"] - params["d_aggr"], seed=seed)
    r_diff = summarise_bootstrap(r_boot.distribution, r_boot.estimate, seed=r_boot.seed)
    return [
        {**_bootstrap_row(r_diff, "r_traj = r_aggr"), "quantity": "r_traj - r_aggr (Spearman)", "in_family": True},
        {**_contrast_row(clustered, "d_aggr", "d_traj", "a2 = a1"), "quantity": "a2 - a1", "in_family": True},
        {**_wald_row("a1 = a2 = 0", clustered.wald_joint), "quantity": "a1, a2", "in_family": True},
        {**_bootstrap_row(contrast, "a2 = a1"), "quantity": "a2 - a1", "in_family": False},
    ]


def generalising_tests(
    frame: pd.DataFrame,
    outcome: str,
    *,
    n_resamples: int,
    seed: int,
    stimulus: str = "stimulus",
    progress: Callable[[int], None] | None = None,
) -> list[dict]:
    """RQ1-RQ2 for one condition and outcome generalising over stimuli (``generalise="stimuli"``): two-way
    (pigeonhole) bootstraps of participants and the ``stimulus`` column's stimuli, for r_traj - r_aggr
    (Spearman, ``bootstrap_correlation_difference`` with ``stimuli``, seeded ``seed``) and for Eq. 5/6's (a1, a2)
    (:func:`two_way_bootstrap_ols`, ``seed + 1``): percentile CIs, centred p of r_traj = r_aggr and a2 = a1
    (:func:`bootstrap_pvalue`) and the joint centred p of a1 = a2 = 0 (:func:`bootstrap_wald_pvalue`).
    Their estimand: the quantity for a population of stimulus pairs like the study's."""
    x, y = design(frame, ["d_aggr", "d_traj"]), frame[outcome].to_numpy(float)
    r_boot = bootstrap_correlation_difference(
        frame["participant_id"],
        frame["d_traj"],
        frame["d_aggr"],
        y,
        stimuli=frame[stimulus],
        n_resamples=n_resamples,
        seed=seed,
    )
    betas = two_way_bootstrap_ols(
        x, y, frame["participant_id"], frame[stimulus], n_resamples=n_resamples, seed=seed + 1, progress=progress
    )
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    r_diff = summarise_bootstrap(r_boot.distribution, r_boot.estimate, seed=seed)
    contrast = summarise_bootstrap(betas[:, 2] - betas[:, 1], beta[2] - beta[1], seed=seed + 1)
    chi2, pvalue = bootstrap_wald_pvalue(betas[:, 1:], beta[1:], np.zeros(2))
    return [
        {**_bootstrap_row(r_diff, "r_traj = r_aggr", TWO_WAY), "quantity": "r_traj - r_aggr (Spearman)"},
        {**_bootstrap_row(contrast, "a2 = a1", TWO_WAY), "quantity": "a2 - a1"},
        {**_joint_row("a1 = a2 = 0", TWO_WAY, chi2, 2, pvalue), "quantity": "a1, a2"},
    ]


def moderation_tests(
    data: pd.DataFrame,
    outcome: str,
    clustered: RegressionResult,
    *,
    moderator_level: str,
    n_resamples: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> list[dict]:
    """RQ3 for one outcome: cluster-robust Wald of a4 = a5 = 0 (in the family) and participant
    bootstraps (stratified by condition, the between-subject factor) of a4 and a5."""
    frame = data.assign(C=(data["condition"] == moderator_level).astype(float))
    frame = frame.assign(**{"d_aggr:C": frame["d_aggr"] * frame["C"], "d_traj:C": frame["d_traj"] * frame["C"]})
    columns = ["d_aggr", "d_traj", "C", "d_aggr:C", "d_traj:C"]
    betas = cluster_bootstrap_ols(
        design(frame, columns),
        frame[outcome],
        frame["participant_id"],
        strata=frame["condition"],
        n_resamples=n_resamples,
        seed=seed,
        progress=progress,
    )
    rows = [{**_wald_row("a4 = a5 = 0", clustered.wald_joint), "quantity": "a4, a5", "in_family": True}]
    for name, term, index in (("a4", "d_aggr:C", 4), ("a5", "d_traj:C", 5)):
        boot = summarise_bootstrap(betas[:, index], clustered.params[term], seed=seed)
        rows.append({**_bootstrap_row(boot, f"{name} = 0"), "quantity": name, "in_family": False})
    return rows


def participant_level_table(rows: list[dict]) -> pd.DataFrame:
    """The headline table with Holm-adjusted p-values over the family (``pvalue_holm``, empty
    for rows outside it) and the family's name (``FAMILY_NAME``) in ``family``."""
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    family_p = table["pvalue"].where(table["in_family"])
    table["pvalue_holm"] = adjust_pvalues(family_p, method=FAMILY_METHOD)
    table["family"] = np.where(table["in_family"], FAMILY_NAME, "")
    if "df" in table:
        table["df"] = table["df"].astype("Int64")
    first = [c for c in TABLE_ORDER if c in table]
    return table[first + [c for c in table if c not in first]]
