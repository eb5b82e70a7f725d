"""The study's statistics from the tidy export (effort-aware fairness paper, Appendix F Tables 2-5)
and the human-calibrated effort weight.

Steps: keep completed participants who passed the attention checks (``analysis.sample``; the
dropped are counted by reason); headline participant-level tests (``analysis.repeated_measures``:
participant bootstrap and participant-clustered Wald tests, Holm over one stated family), crossed
mixed models (``analysis.mixed_model``), two-stage effect sizes, rmcorr beside Table 2 and ICCs of
the Likert ratings (``analysis.agreement``); then, descriptive (pairs treated as independent), per
condition compute
Table 2 (Spearman correlations with stars and Bonferroni-adjusted p-values), Table 3 (Hotelling t
and "Steiger's Z" comparing r_traj with r_aggr against the overall input distance d and the output
distance D, in two conventions side by side, see ``table3_from_correlations``), Table 4
(participant-bootstrap 95% CIs of r_traj - r_aggr), Table 5 (Eq. 5-6 per condition and Eq. 7-8
across conditions, plain and participant-clustered SEs), the shares of rationale factors, and
the Calibration alpha = a2 / (a1 + a2) from Eq. 5 per condition (the paper:
0.6114 / (0.6114 + 0.3182) = 0.6577), with two CIs: the participant bootstrap's (its estimand: alpha
*for these stimulus pairs*) and the two-way (participants x stimuli) bootstrap's (alpha for a
population of stimulus pairs like these); ``generalise="stimuli"`` makes the second the calibration's.

Sign convention: Table 4 reports r_traj - r_aggr (positive when trajectory correlates more). The
paper's Table 4 prints negative intervals under that label, i.e. r_aggr - r_traj; only the sign differs.
Correlation comparisons use n = number of rated pairs, as the paper does.

Table 3 conventions (``TABLE3_CONVENTIONS``):

* ``paper`` reproduces the paper's Table 3: Hotelling's t (1940) and, for the paper's "Steiger's
  Z-test (Meng, Rosenthal and Rubin 1992)", MRR's Z, both on the Spearman r as if they were Pearson
  r (no Spearman adjustment). From the paper's own Table 2 (n = 900 CLUE pairs, 888 SHED pairs) this
  gives 7.9759 / 5.5150 / 6.9075 / 5.3451 (CLUE) and 7.3396 / 7.9613 / 6.5572 / 7.6467 (SHED)
  against the printed 7.9758 / 5.5161 / 6.9077 / 5.3461 and 7.3360 / 7.9612 / 6.5541 / 7.6466: the
  differences are within what the 4-decimal rounding of Table 2's r propagates to.
* ``fieller`` (better calibrated for Spearman r): Hotelling's t and Steiger's (1980) Z1* with the
  Fieller-Hartley-Pearson variance 1.06/(n-3), i.e. every statistic divided by sqrt(1.06).

Both comparisons share the third correlation r_aggr,traj (Table 2's "Aggregate vs. Trajectory"):
r_traj,input vs r_aggr,input share "input", so the correlation of the two non-shared variables is
r_traj,aggr; likewise for output. Bonferroni is applied within a convention and condition over its
four tests (2 tests x 2 comparisons), as the paper's Table 3 does.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from analysis.agreement import likert_icc
from analysis.correlations import (
    bonferroni,
    bootstrap_correlation_difference,
    compare_correlations,
    correlation,
)
from analysis.mixed_model import STIMULUS_COLUMNS, MixedModelResult, crossed_mixed_model, stimulus_key
from analysis.regression import RegressionResult, distance_regression, moderation_regression
from analysis.repeated_measures import (
    ESTIMAND_POPULATION,
    ESTIMAND_STIMULI,
    RM_CORR_FIELDS,
    SLOPE_EFFECT_FIELDS,
    cluster_bootstrap_ols,
    condition_tests,
    design,
    generalising_tests,
    moderation_tests,
    participant_level_table,
    participant_slope_effect,
    repeated_measures_correlation,
    two_way_bootstrap_ols,
)
from analysis.sample import SampleSelection, select_participants

CORRELATIONS = {
    "r_aggr_input": ("d_aggr", "d_overall", "Aggregate vs. Overall Input"),
    "r_traj_input": ("d_traj", "d_overall", "Trajectory vs. Overall Input"),
    "r_aggr_traj": ("d_aggr", "d_traj", "Aggregate vs. Trajectory"),
    "r_aggr_output": ("d_aggr", "output_distance", "Aggregate vs. Output"),
    "r_traj_output": ("d_traj", "output_distance", "Trajectory vs. Output"),
}
OUTCOMES = {"input": "d_overall", "output": "output_distance"}
OUTCOME_LABELS = {"input": "d", "output": "D"}
DESCRIPTIVE = "descriptive (pairs treated as independent)"
PARTICIPANT_LEVEL = "participant-level (cluster-robust by participant)"
MIXED_ESTIMAND = (
    "for a population of stimulus pairs (crossed random intercepts; stimulus-specific weights not modelled)"
)

TABLE3_TESTS = {"hotelling": "Hotelling's t-test", "steiger": "Steiger's Z-test"}
# convention -> test -> (analysis.correlations method, Spearman adjustment, label)
TABLE3_CONVENTIONS = {
    "paper": {
        "hotelling": ("hotelling", False, "Hotelling's t, no Spearman adjustment (as in the paper)"),
        "steiger": ("meng", False, "Meng-Rosenthal-Rubin Z, no Spearman adjustment (the paper's 'Steiger's Z')"),
    },
    "fieller": {
        "hotelling": ("hotelling", True, "Hotelling's t / sqrt(1.06) (Fieller-Hartley-Pearson, better calibrated)"),
        "steiger": ("steiger", True, "Steiger's Z1* / sqrt(1.06) (Fieller-Hartley-Pearson, better calibrated)"),
    },
}
TABLE3_CORRELATIONS = ("traj_input", "aggr_input", "traj_aggr", "traj_output", "aggr_output")


def table3_from_correlations(correlations: dict[str, float], n: int, *, convention: str = "paper") -> pd.DataFrame:
    """Table 3 from the five correlations of Table 2 (keys ``traj_input``, ``aggr_input``,
    ``traj_aggr``, ``traj_output``, ``aggr_output``) and the number of rated pairs ``n``.

    Each comparison tests r_traj,space = r_aggr,space (shared variable: the input or output
    distance; the third correlation is r_traj,aggr). Columns: ``test`` (``hotelling``,
    ``steiger``), ``comparison`` (``input``, ``output``), ``statistic``, ``pvalue`` (two-sided),
    ``pvalue_bonferroni`` (over the four tests), ``method`` (of :func:`compare_correlations`),
    ``spearman_adjusted``, ``convention`` and a ``label`` saying which statistic it is.
    ``convention="paper"`` reproduces the paper's Table 3; ``"fieller"`` is the Spearman-adjusted one.
    """
    if convention not in TABLE3_CONVENTIONS:
        raise ValueError(f"convention must be one of {tuple(TABLE3_CONVENTIONS)}")
    missing = [key for key in TABLE3_CORRELATIONS if key not in correlations]
    if missing:
        raise ValueError(f"correlations lacks {missing}")
    rows = []
    for test, (method, spearman, label) in TABLE3_CONVENTIONS[convention].items():
        for space in OUTCOMES:
            res = compare_correlations(
                correlations[f"traj_{space}"],
                correlations[f"aggr_{space}"],
                correlations["traj_aggr"],
                n,
                method=method,
                spearman=spearman,
            )
            rows.append(
                {
                    "test": test,
                    "comparison": space,
                    "statistic": res.statistic,
                    "pvalue": res.pvalue,
                    "method": method,
                    "spearman_adjusted": spearman,
                    "convention": convention,
                    "label": label,
                }
            )
    frame = pd.DataFrame(rows)
    frame.insert(4, "pvalue_bonferroni", bonferroni(frame["pvalue"]))
    return frame


def stars(p: float, levels=(0.001, 0.01, 0.05)) -> str:
    """'***', '**', '*' or '' by the paper's Table 2 thresholds (Table 5 uses 0.01, 0.05, 0.1)."""
    return "*" * sum(p < level for level in levels)


MIN_PARTICIPANTS = 3  # included participants the analysis needs, overall and in every condition
GENERALISE = ("stimuli",)  # values of the ``generalise`` option (None: the study's own stimuli)
NAN_CI = (float("nan"), float("nan"))


def check_generalise(generalise: str | None) -> str | None:
    """The ``generalise`` option: None (inference for the study's stimuli) or "stimuli"."""
    if generalise is not None and generalise not in GENERALISE:
        raise ValueError(f"generalise must be one of {list(GENERALISE)} or left out, got {generalise!r}")
    return generalise


@dataclass(frozen=True)
class Calibration:
    """The human-calibrated effort weight of one condition: alpha = a2 / (a1 + a2).

    ``ci`` is the calibration's CI: ``ci_stimuli`` (two-way bootstrap, generalising to other stimulus
    pairs) when ``generalise == "stimuli"``, else ``ci_participants`` (participant bootstrap, for
    these ``n_stimuli`` pairs); ``estimand`` says which in words."""

    condition: str
    alpha: float
    ci: tuple[float, float]
    a1: float
    a2: float
    n_participants: int
    n_resamples: int
    seed: int
    ci_participants: tuple[float, float] = NAN_CI
    ci_stimuli: tuple[float, float] = NAN_CI  # NaN when the pairs do not identify stimuli
    n_stimuli: int = 0
    generalise: str | None = None
    estimand: str = ""


@dataclass(frozen=True)
class PipelineResult:
    exclusions: dict
    table2: pd.DataFrame
    table3: pd.DataFrame
    table4: pd.DataFrame
    table5: pd.DataFrame
    factor_shares: pd.DataFrame
    calibrations: list[Calibration]
    regressions: dict = field(repr=False)
    seed: int = 0
    sample: SampleSelection | None = field(default=None, repr=False)
    participant_level: pd.DataFrame = field(default_factory=pd.DataFrame)
    mixed_models: pd.DataFrame = field(default_factory=pd.DataFrame)
    effect_sizes: pd.DataFrame = field(default_factory=pd.DataFrame)
    rm_correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    icc: pd.DataFrame = field(default_factory=pd.DataFrame)
    generalise: str | None = None  # "stimuli": the family's RQ1-RQ2 rows are the two-way bootstrap's


def alpha_from(a1: float, a2: float) -> float:
    """alpha = a2 / (a1 + a2) from Eq. 5's weights (the paper's normalisation, "Computing EaIF").

    Caveat: a1 and a2 are *linear* weights of Likert ratings (d = a0 + a1 d_S + a2 d_E), while alpha
    is then used as the weight of *squared* differences of effort E and aggregate S in the EaIF
    distance d = sqrt(alpha (E_i - E_j)^2 + (1 - alpha) (S_i - S_j)^2), on the scales E and S have
    there, not the Likert scale. The ratio transfers only if both Likert ratings map onto those
    differences with the same scale factor and a linear-in-differences rating is equivalent to the
    weighted Euclidean form; neither is tested by the study. Read alpha as the relative importance
    people give trajectory over aggregate, not as a calibrated metric weight.
    """
    return a2 / (a1 + a2)


def bootstrap_alpha(
    frame: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    level: float = 0.95,
    chunk: int = 1000,
    progress: Callable[[int], None] | None = None,
    generalise: str | None = None,
    stimulus: str = "stimulus",
) -> tuple[tuple[float, float], np.ndarray]:
    """Percentile CI of alpha = a2 / (a1 + a2) from Eq. 5, resampling participants
    (``analysis.repeated_measures.cluster_bootstrap_ols``: vectorised per-participant normal equations);
    with ``generalise="stimuli"`` participants and the ``stimulus`` column's stimuli
    (``two_way_bootstrap_ols``), so the interval covers alpha of a population of such stimuli."""
    x = design(frame, ["d_aggr", "d_traj"])
    if check_generalise(generalise) == "stimuli":
        if stimulus not in frame:
            raise ValueError(f"generalising over stimuli needs a {stimulus!r} column identifying the rated pairs")
        betas = two_way_bootstrap_ols(
            x,
            frame["d_overall"],
            frame["participant_id"],
            frame[stimulus],
            n_resamples=n_resamples,
            seed=seed,
            progress=progress,
        )
    else:
        betas = cluster_bootstrap_ols(
            x,
            frame["d_overall"],
            frame["participant_id"],
            n_resamples=n_resamples,
            seed=seed,
            chunk=chunk,
            progress=progress,
        )
    dist = betas[:, 2] / (betas[:, 1] + betas[:, 2])
    tail = (1 - level) / 2
    lo, hi = np.nanquantile(dist, [tail, 1 - tail])
    return (float(lo), float(hi)), dist


def run_pipeline(
    pairs: pd.DataFrame,
    participants: pd.DataFrame | None = None,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    moderator_level: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    include_incomplete: bool = False,
    mixed_models: bool = True,
    generalise: str | None = None,
) -> PipelineResult:
    """Everything the paper reports, per condition, from the pairs export, with participant-level
    inference first. With the ``participants`` table only completed participants are analysed
    unless ``include_incomplete``; attention-excluded participants never are (``result.sample``
    counts the dropped by reason). ``moderator_level`` is the condition coded C = 1 in Eq. 7-8
    (default: the undesirable-feature condition, the paper's CLUE; the first condition when the pairs
    do not say which is undesirable: no ``desirable`` column, or none with 0). ``mixed_models=False`` skips
    the (slow) crossed mixed models. ``generalise="stimuli"`` makes each calibration's CI the two-way
    (participants x stimuli) bootstrap's (both CIs are reported either way when stimuli are identified) and
    the headline family's RQ1-RQ2 tests the two-way bootstrap's (``generalising_tests``); the
    participant-level rows stay, outside the family, as second opinions for the study's own stimuli."""
    sample, data, conditions = _analysable(pairs, participants, include_incomplete, generalise)
    excluded_ids = set(pairs.loc[pairs["excluded"] == 1, "participant_id"])
    total_ids = set(pairs["participant_id"])
    exclusions = {
        "participants_with_answers": len(total_ids),
        "excluded": len(excluded_ids),
        "included": sample.included,
    }
    if participants is not None:
        exclusions["completed"] = int((participants["status"] == "completed").sum())
    if moderator_level is None:
        undesirable = list(data.loc[data["desirable"] == 0, "condition"]) if "desirable" in data else []
        moderator_level = str(undesirable[0]) if undesirable else conditions[0]

    t2, t3, t4, t5, shares, calibrations, fits = [], [], [], [], [], [], {}
    headline, mixed, effects, rm = [], [], [], []
    for ci_index, cond in enumerate(conditions):
        frame = data[data["condition"] == cond]
        n = len(frame)
        n_stimuli = int(frame["stimulus"].nunique()) if "stimulus" in frame else 0
        estimand = {"estimand": ESTIMAND_STIMULI.format(n=n_stimuli) if n_stimuli else "for the study's stimuli"}
        corr = {key: correlation(frame[a], frame[b], method="spearman") for key, (a, b, _) in CORRELATIONS.items()}
        adjusted = bonferroni([c.pvalue for c in corr.values()])
        for (key, (_, _, label)), p_adj in zip(CORRELATIONS.items(), adjusted, strict=True):
            c = corr[key]
            t2.append(
                {
                    "condition": cond,
                    "coefficient": key,
                    "label": label,
                    "r": c.statistic,
                    "pvalue": c.pvalue,
                    "pvalue_bonferroni": p_adj,
                    "stars": stars(c.pvalue),
                    "ci_low": c.ci[0],
                    "ci_high": c.ci[1],
                    "n": n,
                    "inference": DESCRIPTIVE,
                }
            )
            rm.append(
                {"condition": cond, "coefficient": key, "label": label}
                | _or_note(partial(repeated_measures_correlation, frame, *CORRELATIONS[key][:2]), RM_CORR_FIELDS)
            )
        r = {key.removeprefix("r_"): c.statistic for key, c in corr.items()}
        r["traj_aggr"] = r.pop("aggr_traj")
        for convention in TABLE3_CONVENTIONS:
            table = table3_from_correlations(r, n, convention=convention)
            table.insert(0, "condition", cond)
            table.insert(2, "test_name", table["test"].map(TABLE3_TESTS))
            t3.append(table.assign(n=n, stars=[stars(p) for p in table["pvalue"]], inference=DESCRIPTIVE))
        boots = {}
        for space, outcome in OUTCOMES.items():
            boots[space] = boot = bootstrap_correlation_difference(
                frame["participant_id"],
                frame["d_traj"],
                frame["d_aggr"],
                frame[outcome],
                n_resamples=n_resamples,
                seed=seed + 10 * ci_index + (space == "output"),
                progress=_reporter(progress, f"bootstrap r {cond}/{space}", n_resamples),
            )
            t4.append(
                {
                    "condition": cond,
                    "difference": f"r_traj,{space} - r_aggr,{space}",
                    "estimate": boot.estimate,
                    "ci_low": boot.ci[0],
                    "ci_high": boot.ci[1],
                    "n_resamples": n_resamples,
                    "seed": boot.seed,
                }
            )
        for space, outcome in OUTCOMES.items():
            for cluster in (None, "participant_id"):
                fit = distance_regression(frame, outcome, cluster=cluster)
                fits[(cond, space, "clustered" if cluster else "ols")] = fit
                t5.append(_table5_rows(fit, cond, space, "clustered" if cluster else "ols"))
            about = {"model": cond, "outcome": OUTCOME_LABELS[space]} | estimand
            rows = condition_tests(
                frame,
                outcome,
                fits[(cond, space, "clustered")],
                boots[space],
                n_resamples=n_resamples,
                seed=seed + 200 + 10 * ci_index + (space == "output"),
                progress=_reporter(progress, f"bootstrap a2 - a1 {cond}/{space}", n_resamples),
            )
            if generalise == "stimuli":
                general = generalising_tests(
                    frame,
                    outcome,
                    n_resamples=n_resamples,
                    seed=seed + 500 + 10 * ci_index + (space == "output"),
                    progress=_reporter(progress, f"two-way bootstrap {cond}/{space}", n_resamples),
                )
                population = {"estimand": ESTIMAND_POPULATION.format(n=n_stimuli), "in_family": True}
                headline += [about | row | population for row in general]
                rows = [row | {"in_family": False} for row in rows]  # second opinions for these stimuli
            headline += [about | row for row in rows]
            effects.append(about | _or_note(partial(participant_slope_effect, frame, outcome), SLOPE_EFFECT_FIELDS))
            if mixed_models:
                mixed += _mixed_rows(data=frame, outcome=outcome, label=about, formula=f"{outcome} ~ d_aggr + d_traj")
        shares.append(
            {
                "condition": cond,
                "pairs": n,
                "trajectory": frame["factor_trajectory"].mean(),
                "aggregate": frame["factor_aggregate"].mean(),
                "other": frame["factor_other"].mean(),
            }
        )
        calibrations.append(
            _calibration(
                frame,
                fits[(cond, "input", "ols")],
                ci_index,
                seed=seed,
                n_resamples=n_resamples,
                generalise=generalise,
                progress=progress,
            )
        )
    if len(conditions) > 1:
        for space, outcome in OUTCOMES.items():
            for cluster in (None, "participant_id"):
                fit = moderation_regression(data, outcome, moderator_level=moderator_level, cluster=cluster)
                fits[("moderation", space, "clustered" if cluster else "ols")] = fit
                t5.append(
                    _table5_rows(fit, f"moderation (C = {moderator_level})", space, "clustered" if cluster else "ols")
                )
            n_all = int(data["stimulus"].nunique()) if "stimulus" in data else 0
            about = {
                "model": f"moderation (C = {moderator_level})",
                "outcome": OUTCOME_LABELS[space],
                "estimand": ESTIMAND_STIMULI.format(n=n_all) if n_all else "for the study's stimuli",
            }
            rows = moderation_tests(
                data,
                outcome,
                fits[("moderation", space, "clustered")],
                moderator_level=moderator_level,
                n_resamples=n_resamples,
                seed=seed + 300 + (space == "output"),
            )
            headline += [about | row for row in rows]
            if mixed_models:
                moderated = data.assign(C=(data["condition"] == moderator_level).astype(float))
                formula = f"{outcome} ~ d_aggr + d_traj + C + d_aggr:C + d_traj:C"
                mixed += _mixed_rows(data=moderated, outcome=outcome, label=about, formula=formula)
    return PipelineResult(
        exclusions=exclusions,
        table2=pd.DataFrame(t2),
        table3=pd.concat(t3, ignore_index=True) if t3 else pd.DataFrame(),
        table4=pd.DataFrame(t4),
        table5=pd.concat(t5, ignore_index=True) if t5 else pd.DataFrame(),
        factor_shares=pd.DataFrame(shares),
        calibrations=calibrations,
        regressions=fits,
        seed=seed,
        sample=sample,
        participant_level=participant_level_table(headline),
        mixed_models=pd.DataFrame(mixed),
        effect_sizes=pd.DataFrame(effects),
        rm_correlations=pd.DataFrame(rm),
        icc=likert_icc(data) if "stimulus" in data else pd.DataFrame(),
        generalise=generalise,
    )


@dataclass(frozen=True)
class CalibrationsResult:
    """:func:`pipeline_calibrations`' result: the ``calibrations`` and ``sample`` :func:`run_pipeline` would give."""

    calibrations: list[Calibration]
    sample: SampleSelection


def pipeline_calibrations(
    pairs: pd.DataFrame,
    participants: pd.DataFrame | None = None,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    include_incomplete: bool = False,
    generalise: str | None = None,
) -> CalibrationsResult:
    """Only the calibrations (alpha per condition with its CIs) and the sample of :func:`run_pipeline` with the
    same arguments, the same values (same seeds), without its tables, tests and mixed models: what a
    sensitivity analysis of alpha needs, at a fraction of the cost. Raises run_pipeline's errors."""
    sample, data, conditions = _analysable(pairs, participants, include_incomplete, generalise)
    calibrations = [
        _calibration(
            frame := data[data["condition"] == cond],
            distance_regression(frame, OUTCOMES["input"]),
            ci_index,
            seed=seed,
            n_resamples=n_resamples,
            generalise=generalise,
        )
        for ci_index, cond in enumerate(conditions)
    ]
    return CalibrationsResult(calibrations, sample)


def _analysable(
    pairs: pd.DataFrame, participants: pd.DataFrame | None, include_incomplete: bool, generalise: str | None
) -> tuple[SampleSelection, pd.DataFrame, list]:
    """The analysed participants, their complete rated pairs (with a ``stimulus`` id when the pairs identify
    stimuli) and the conditions in order of appearance; a ValueError when too few participants remain overall
    or in a condition, or ``generalise="stimuli"`` without stimulus columns."""
    check_generalise(generalise)
    sample = select_participants(pairs, participants, include_incomplete=include_incomplete)
    if sample.included < MIN_PARTICIPANTS:
        raise ValueError(f"too few participants to analyse: {sample.sentence()}")
    data = sample.pairs.dropna(subset=["d_traj", "d_aggr", "d_overall", "output_distance"])
    if all(c in data for c in STIMULUS_COLUMNS):
        data = data.assign(stimulus=stimulus_key(data))
    elif generalise == "stimuli":
        raise ValueError(f"generalising over stimuli needs the pairs table's columns {list(STIMULUS_COLUMNS)}")
    per_condition = data.groupby("condition", sort=False)["participant_id"].nunique()
    few = [f"{n} in {cond!r}" for cond, n in per_condition.items() if n < MIN_PARTICIPANTS]
    if few:  # a condition's cluster-robust SEs and participant bootstraps need several participants
        raise ValueError(
            f"too few participants with rated pairs in a condition to analyse it ({', '.join(few)}; at least "
            f"{MIN_PARTICIPANTS} in every condition)"
        )
    return sample, data, list(dict.fromkeys(data["condition"]))


def _calibration(
    frame: pd.DataFrame,
    ols: RegressionResult,
    ci_index: int,
    *,
    seed: int,
    n_resamples: int,
    generalise: str | None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Calibration:
    """The condition's calibration: alpha from Eq. 5's plain fit ``ols`` with its participant-bootstrap CI and,
    when ``frame`` identifies stimuli, its two-way bootstrap CI (seeds ``seed`` + 100 / 400 + ``ci_index``)."""
    cond = frame["condition"].iloc[0]
    n_stimuli = int(frame["stimulus"].nunique()) if "stimulus" in frame else 0
    a1, a2 = float(ols.params["d_aggr"]), float(ols.params["d_traj"])
    ci, _ = bootstrap_alpha(
        frame,
        n_resamples=n_resamples,
        seed=seed + 100 + ci_index,
        progress=_reporter(progress, f"bootstrap alpha {cond}", n_resamples),
    )
    ci_stimuli = NAN_CI
    if n_stimuli:
        ci_stimuli, _ = bootstrap_alpha(
            frame,
            n_resamples=n_resamples,
            seed=seed + 400 + ci_index,
            generalise="stimuli",
            progress=_reporter(progress, f"two-way bootstrap alpha {cond}", n_resamples),
        )
    chosen = ESTIMAND_POPULATION if generalise == "stimuli" else ESTIMAND_STIMULI
    return Calibration(
        cond,
        alpha_from(a1, a2),
        ci_stimuli if generalise == "stimuli" else ci,
        a1,
        a2,
        frame["participant_id"].nunique(),
        n_resamples,
        seed,
        ci_participants=ci,
        ci_stimuli=ci_stimuli,
        n_stimuli=n_stimuli,
        generalise=generalise,
        estimand=chosen.format(n=n_stimuli) if n_stimuli else "for the study's stimuli",
    )


def _or_note(compute: Callable[[], dict], fields: tuple[str, ...]) -> dict:
    """``compute()``'s row with an empty note, or its ``fields`` blank and why it was not computed (its table has
    the same columns either way)."""
    try:
        return compute() | {"note": ""}
    except (ValueError, AssertionError) as exc:  # pingouin's rm_corr asserts its input
        return dict.fromkeys(fields, np.nan) | {"note": f"not computed: {exc}"}


def _reporter(progress: Callable[[str, int, int], None] | None, label: str, total: int) -> Callable[[int], None] | None:
    """A bootstrap's progress callback (resamples done) reporting under ``label``; None without ``progress``."""
    if progress is None:
        return None
    return lambda done: progress(label, done, total)


def _mixed_rows(*, data: pd.DataFrame, outcome: str, label: dict, formula: str) -> list[dict]:
    """One row per fixed effect and one for the contrast a2 - a1 of a crossed mixed model, with
    its variance components, convergence and note; one row with the note when there is no stimulus
    column or the model could not be fitted."""
    if "stimulus" not in data:
        return [
            label | {"term": "", "converged": False, "note": "not fitted: the pairs table does not identify stimuli"}
        ]
    fit: MixedModelResult = crossed_mixed_model(data, formula)
    label = label | {"estimand": MIXED_ESTIMAND}
    common = {
        "var_participant": fit.variance_components.get("participant", np.nan),
        "var_stimulus": fit.variance_components.get("stimulus", np.nan),
        "var_residual": fit.variance_components.get("residual", np.nan),
        "n": fit.n,
        "n_participants": fit.n_participants,
        "n_stimuli": fit.n_stimuli,
        "converged": fit.converged,
        "note": fit.note,
    }
    if fit.params.empty:
        return [label | {"term": ""} | common]
    rows = [
        label
        | {
            "term": term,
            "coef": fit.params[term],
            "std_err": fit.bse[term],
            "pvalue": fit.pvalues[term],
            "ci_low": fit.conf_int.loc[term].iloc[0],
            "ci_high": fit.conf_int.loc[term].iloc[1],
        }
        | common
        for term in fit.params.index
    ]
    c = fit.contrast
    if c is not None:  # the model has both slopes
        rows.append(
            label
            | {
                "term": "a2 - a1 (d_traj - d_aggr)",
                "coef": c.estimate,
                "std_err": c.std_err,
                "pvalue": c.pvalue,
                "ci_low": c.confidence_interval[0],
                "ci_high": c.confidence_interval[1],
            }
            | common
        )
    return rows


def _table5_rows(fit, model: str, space: str, se: str) -> pd.DataFrame:
    rows = pd.DataFrame(
        {
            "model": model,
            "outcome": "d" if space == "input" else "D",
            "se": se,
            "term": fit.params.index,
            "coef": fit.params.to_numpy(),
            "std_err": fit.bse.to_numpy(),
            "pvalue": fit.pvalues.to_numpy(),
            "stars": [stars(p, (0.01, 0.05, 0.1)) for p in fit.pvalues],
            "ci_low": fit.conf_int.iloc[:, 0].to_numpy(),
            "ci_high": fit.conf_int.iloc[:, 1].to_numpy(),
        }
    )
    return rows.assign(
        inference=DESCRIPTIVE if se == "ols" else PARTICIPANT_LEVEL,
        r_squared=fit.rsquared,
        r_squared_adj=fit.rsquared_adj,
        f_statistic=fit.fvalue,
        n=fit.n,
        wald_joint_chi2=fit.wald_joint.chi2,
        wald_joint_p=fit.wald_joint.pvalue_chi2,
        wald_equal_chi2=fit.wald_equal.chi2,
        wald_equal_p=fit.wald_equal.pvalue_chi2,
    )
