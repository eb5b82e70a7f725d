"""Design check before running a study: what precision and power does a given size buy?

For each of ``n_studies`` simulated studies of ``n`` participants (the survey's generative model with
participant and stimulus random effects, :func:`simulation.effort.simulate_pairs`), per condition:

* alpha = a2 / (a1 + a2) from Eq. 5 and its 95% CI by the delta method, var(alpha) = g' V g with
  g = (-a2, a1) / (a1 + a2)^2, once with the participant-clustered (CR1) covariance V of (a1, a2)
  (a fast stand-in for the pipeline's participant bootstrap, which gives similar widths) and once
  with the plain OLS covariance, which treats a participant's ratings as independent
  (:func:`analysis.effort_weight.alpha_estimate`);
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

``headline_sizes`` (``plan_study(..., size_studies=R)``) measures the size of the headline tests (RQ1
r_traj = r_aggr, RQ2 a2 = a1 and a1 = a2 = 0, RQ3 a4 = a5 = 0) at stimulus SD 0, 0.1 and 0.3: each test of
H0: theta = the population's value (the other studies' pooled fit), both the participant-level tests (for
the study's own stimuli) and the two-way bootstrap tests used with ``generalise="stimuli"``.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import chi2, norm
from statsmodels.regression.linear_model import OLS, RegressionResultsWrapper

from analysis.correlations import (
    bootstrap_correlation_difference,
    compare_correlations,
    correlation,
    spearman_from_counts,
)
from analysis.effort_weight import alpha_estimate
from analysis.repeated_measures import (
    BOOTSTRAP,
    CLUSTER_WALD,
    TWO_WAY,
    bootstrap_pvalue,
    bootstrap_wald_pvalue,
    design,
    two_way_bootstrap_ols,
)
from simulation.effort_model import SIZE_STIMULUS_SDS

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
    sizes: pd.DataFrame = field(default_factory=pd.DataFrame)  # headline_sizes, when asked for


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
    size_studies: int = 0,
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """Simulate ``n_studies`` studies of ``n`` participants of the effort design of the validated format 2
    file ``spec`` (``simulation.effort_design``: its pair_distance blocks rating trajectory, aggregate and
    overall; ValueError without one); the table described in the module docstring. ``alpha_level`` is
    the tests' level; Steiger's test is Bonferroni-adjusted over ``n_tests`` (the pipeline's Table 3
    family); ``n_resamples`` is the two-way bootstrap's size (0: no two-way interval, its columns NaN);
    ``stimulus_copies`` multiplies the stimulus pairs (each participant still rates 12). With
    ``size_studies`` > 0, ``sizes`` is :func:`headline_sizes` with that many studies per stimulus SD
    (``progress`` then counts on past ``n_studies``).

    Parameters
    ----------
    spec : dict
        A validated format 2 study file with an effort design.
    n : int
        Participants per simulated study.
    n_studies : int
        Simulated studies (R).
    seed : int
        The seed of every random choice.
    model : simulation.effort.GenerativeModel, optional
        The generative model (default: the survey's, a1 = 0.32, a2 = 0.61).
    alpha_level : float
        The tests' level.
    n_tests : int
        The Bonferroni family size of Steiger's test.
    n_resamples : int
        The two-way bootstrap's resamples per study (0: none; the two-way columns are NaN).
    stimulus_copies : int
        How many times the stimulus pairs are multiplied.
    size_studies : int
        Simulated studies per stimulus SD for the headline tests' size (0: not measured).
    progress : callable, optional
        Called with the number of studies done.

    Returns
    -------
    PlanResult
        ``table`` (one row per condition, the columns of the module docstring), ``true_alpha``,
        ``stimuli``, ``warnings``, ``sizes``.

    Examples
    --------
    The parts of a format 2 file the simulation reads: one condition rating four stimulus pairs, planned
    for 20 participants over 3 simulated studies; the generating alpha is the default model's
    0.61 / (0.32 + 0.61):

    >>> series = {"A": [1, 2, 3, 4], "B": [1, 2, 3, 5], "C": [4, 3, 2, 1], "D": [1, 1, 1, 7], "E": [7, 1, 1, 1]}
    >>> block = {"type": "task", "task": "pair_distance", "key": "pairs", "pool": "people",
    ...          "conditions": ["arrests"], "measures": ["trajectory", "aggregate", "overall"],
    ...          "likert": {"points": 6, "similar_max": 3}, "rationale_factors": [],
    ...          "pairs": [{"a": "A", "b": b} for b in "BCDE"]}
    >>> spec = {"conditions": [{"key": "arrests"}], "blocks": [block],
    ...         "pools": [{"key": "people", "subjects": [{"id": k, "series": v} for k, v in series.items()]}]}
    >>> plan = plan_study(spec, n=20, n_studies=3, n_resamples=20)
    >>> round(plan.true_alpha, 4), plan.table["condition"].tolist(), plan.table["n_stimuli"].tolist()
    (0.6559, ['arrests'], [4])
    """
    from analysis.pipeline import bootstrap_alpha
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
            (lo_two, hi_two), _ = (
                bootstrap_alpha(frame, n_resamples=n_resamples, seed=study_seed, generalise="stimuli")
                if n_resamples
                else ((np.nan, np.nan), None)
            )
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
            float(lo <= t <= hi) if np.isfinite(t) and np.isfinite(lo) else np.nan  # NaN: no interval
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
    sizes = pd.DataFrame()
    if size_studies:
        sizes = headline_sizes(
            spec,
            n=n,
            n_studies=size_studies,
            seed=seed,
            model=model,
            level=alpha_level,
            n_resamples=n_resamples,
            progress=(lambda done: progress(n_studies + done)) if progress else None,
        )
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
        sizes=sizes,
    )


SIZE_COLUMNS = ("stimulus_sd", "model", "hypothesis", "method", "inference", "size", "size_mcse", "n_studies")
# a4, a5 of Eq. 7 (design: 1, d_S, d_E, C, d_S C, d_E C)
INTERACTIONS: list[list[float]] = [[0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]
PARTICIPANTS_INFERENCE = "for these stimuli (participants resampled)"
GENERALISING_INFERENCE = "generalising (participants and stimuli resampled)"


def headline_sizes(
    spec: dict,
    *,
    n: int,
    n_studies: int,
    seed: int,
    model=None,
    stimulus_sds: tuple[float, ...] = SIZE_STIMULUS_SDS,
    level: float = 0.05,
    n_resamples: int = 500,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """The size of each headline test on the overall rating d, by simulation: ``n_studies`` studies of ``n``
    participants per stimulus SD in ``stimulus_sds`` (the model's other parameters; the same study seeds at
    every SD: common random numbers). Stimulus effects are drawn afresh per study, so the null that matters
    is the population's: each test is of H0: theta = theta*, theta* the pooled value over the *other* studies
    (the population estimand, as for alpha's coverage; Spearman's r from the pooled counts of rating pairs).
    Its rejection rate at ``level`` is the size (= 1 - coverage of the test's confidence region).

    Tests, per condition: RQ1 r_traj = r_aggr (participant bootstrap, centred p; and the two-way bootstrap),
    RQ2 a2 = a1 and a1 = a2 = 0 (cluster-robust Wald, CR1 by participant, chi-square; and the two-way
    bootstrap, centred p, joint by :func:`analysis.repeated_measures.bootstrap_wald_pvalue`); across the
    conditions RQ3 a4 = a5 = 0 (cluster-robust Wald). Columns ``SIZE_COLUMNS``; ``size_mcse`` =
    sqrt(p (1 - p) / R). The output distance D has no stimulus effect in the simulator and is left out."""
    from simulation.effort import GenerativeModel, simulate_pairs
    from simulation.effort_design import effort_conditions

    model = model or GenerativeModel()
    seeds = [int(s) for s in np.random.default_rng([seed, 23]).integers(2**62, size=n_studies)]
    points = np.arange(1, effort_conditions(spec)[0].scale["likert"]["points"] + 1, dtype=float)
    grid_a, grid_b = np.repeat(points, points.size), np.tile(points, points.size)
    rows, done = [], 0
    for sd in stimulus_sds:
        studies = []
        for study_seed in seeds:
            pairs = simulate_pairs(spec, n, seed=study_seed, model=replace(model, stimulus_sd=sd))
            studies.append(_study_statistics(pairs, n_resamples, study_seed, points))
            done += 1
            if progress:
                progress(done)
        rows += [{"stimulus_sd": sd} | row for row in _sizes(studies, grid_a, grid_b, level)]
    return pd.DataFrame(rows, columns=list(SIZE_COLUMNS))


def _study_statistics(pairs: pd.DataFrame, n_resamples: int, seed: int, points: np.ndarray) -> dict:
    """Per condition (and ``moderation``): the estimates, clustered covariances, bootstrap draws and the
    moments/counts from which the other studies' pooled values are formed."""
    pairs = pairs.assign(stimulus=pairs["set"] + "/" + pairs["comparison"])
    out = {}
    for cond, frame in pairs.groupby("condition"):
        x, y = design(frame, ["d_aggr", "d_traj"]), frame["d_overall"].to_numpy(float)
        fit = _clustered_ols(x, y, frame["participant_id"])
        args = (frame["d_traj"], frame["d_aggr"], frame["d_overall"])
        out[cond] = {
            "beta": fit.params,
            "cov": fit.cov_params(),
            "moments": (x.T @ x, x.T @ y),
            "counts": [_value_counts(frame[c], frame["d_overall"], points) for c in ("d_traj", "d_aggr")],
            "r_boot": bootstrap_correlation_difference(
                frame["participant_id"], *args, n_resamples=n_resamples, seed=seed
            ),
            "r_two_way": bootstrap_correlation_difference(
                frame["participant_id"], *args, stimuli=frame["stimulus"], n_resamples=n_resamples, seed=seed + 1
            ),
            "betas_two_way": two_way_bootstrap_ols(
                x, y, frame["participant_id"], frame["stimulus"], n_resamples=n_resamples, seed=seed + 2
            ),
        }
    conditions = sorted(out)
    if len(conditions) == 2:
        c = (pairs["condition"] == conditions[0]).to_numpy(float)
        x = design(pairs.assign(C=c), ["d_aggr", "d_traj", "C"])
        x = np.column_stack([x, x[:, 1] * c, x[:, 2] * c])
        y = pairs["d_overall"].to_numpy(float)
        fit = _clustered_ols(x, y, pairs["participant_id"])
        out["moderation"] = {"beta": fit.params, "cov": fit.cov_params(), "moments": (x.T @ x, x.T @ y)}
    return out


def _clustered_ols(x: np.ndarray, y: np.ndarray, groups) -> RegressionResultsWrapper:
    """OLS with the participant-clustered (CR1) covariance, as the pipeline's headline Wald tests."""
    return OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(groups)[0]})


def _value_counts(a: pd.Series, b: pd.Series, points: np.ndarray) -> np.ndarray:
    """Counts of the rating pairs (a, b) over the Likert grid (a major), flattened."""
    ia = np.searchsorted(points, a.to_numpy(float))
    ib = np.searchsorted(points, b.to_numpy(float))
    return np.bincount(ia * points.size + ib, minlength=points.size**2).astype(float)


def _sizes(studies: list[dict], grid_a: np.ndarray, grid_b: np.ndarray, level: float) -> list[dict]:
    """Rejection rates of H0: theta = (the other studies' pooled value) over the simulated studies."""
    records = []
    for key in studies[0]:
        part = [s[key] for s in studies]
        xx, xy = sum(p["moments"][0] for p in part), sum(p["moments"][1] for p in part)
        totals = [sum(p["counts"][k] for p in part) for k in (0, 1)] if key != "moderation" else []
        for p in part:
            null = np.linalg.solve(xx - p["moments"][0], xy - p["moments"][1])
            if key == "moderation":
                tests = [
                    (
                        "a4 = a5 = 0",
                        CLUSTER_WALD,
                        PARTICIPANTS_INFERENCE,
                        _wald_p(p["beta"], p["cov"], null, INTERACTIONS),
                    )
                ]
            else:
                r_null = spearman_from_counts(totals[0] - p["counts"][0], grid_a, grid_b) - spearman_from_counts(
                    totals[1] - p["counts"][1], grid_a, grid_b
                )
                tests = _condition_pvalues(p, null, r_null)
            records += [(key, *test) for test in tests]
    frame = pd.DataFrame(records, columns=["model", "hypothesis", "method", "inference", "pvalue"])
    rows = []
    for (key, hypothesis, method, inference), ps in frame.groupby(
        ["model", "hypothesis", "method", "inference"], sort=False
    )["pvalue"]:
        size = float((ps < level).mean())
        rows.append(
            {
                "model": key,
                "hypothesis": hypothesis,
                "method": method,
                "inference": inference,
                "size": size,
                "size_mcse": mc_se(size, len(ps)),
                "n_studies": len(ps),
            }
        )
    return rows


def _condition_pvalues(p: dict, null: np.ndarray, r_null: float) -> list[tuple[str, str, str, float]]:
    """One study's p-values of RQ1-RQ2 at the population values ``null`` (Eq. 5) and ``r_null``."""
    beta, cov, draws = p["beta"], p["cov"], p["betas_two_way"]
    boot, two_way = p["r_boot"], p["r_two_way"]
    contrast = beta[2] - beta[1]
    return [
        (
            "r_traj = r_aggr",
            BOOTSTRAP,
            PARTICIPANTS_INFERENCE,
            bootstrap_pvalue(boot.distribution, boot.estimate, r_null),
        ),
        ("a2 = a1", CLUSTER_WALD, PARTICIPANTS_INFERENCE, _wald_p(beta, cov, null, [[0, -1, 1]])),
        ("a1 = a2 = 0", CLUSTER_WALD, PARTICIPANTS_INFERENCE, _wald_p(beta, cov, null, [[0, 1, 0], [0, 0, 1]])),
        (
            "r_traj = r_aggr",
            TWO_WAY,
            GENERALISING_INFERENCE,
            bootstrap_pvalue(two_way.distribution, two_way.estimate, r_null),
        ),
        (
            "a2 = a1",
            TWO_WAY,
            GENERALISING_INFERENCE,
            bootstrap_pvalue(draws[:, 2] - draws[:, 1], contrast, null[2] - null[1]),
        ),
        ("a1 = a2 = 0", TWO_WAY, GENERALISING_INFERENCE, bootstrap_wald_pvalue(draws[:, 1:], beta[1:], null[1:])[1]),
    ]


def _wald_p(beta: np.ndarray, cov: np.ndarray, null: np.ndarray, restrictions: list[list[float]]) -> float:
    """Wald chi-square p of H0: R beta = R null (R: ``restrictions``, one row each) with the clustered
    covariance ``cov``: W = (R (beta - null))' (R cov R')^-1 R (beta - null) ~ chi-square(rows of R)."""
    r = np.asarray(restrictions, dtype=float)
    gap = r @ (beta - null)
    return float(chi2.sf(gap @ np.linalg.solve(r @ cov @ r.T, gap), r.shape[0]))


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
