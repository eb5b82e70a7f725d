"""Run the study pipeline on a study's export and store the run and its Calibrations."""

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pandas as pd

from analysis.bts import MIN_RESPONDENTS, participant_bts
from analysis.pipeline import Calibration as EffortCalibration
from analysis.pipeline import CalibrationsResult, PipelineResult, pipeline_calibrations, run_pipeline
from analysis.sensitivity import sensitivity_of
from fairness.rater_groups import ALL
from fairness.task_blocks import DesignAnalysis
from runs.analysis_plan import check_reason, registered_deviations
from runs.calibrations import calibration_create
from runs.design_analysis import GroupOptions, study_analysis
from runs.models import AnalysisRun
from runs.provenance import study_provenance
from runs.reports.design import EffortOfDesign, design_sensitivity, write_design_report
from runs.reports.effort import alpha_sensitivity
from runs.services import run_storing
from runs.study_exports import StudyExports
from studies.models import Study
from studies.services import latest_study
from studies.study_file import GENERALISE
from tasks.pair_distance import rates_effort

R = TypeVar("R")
NO_PAIR_DISTANCE = (
    "Not applicable: the study has no pair_distance block (the effort analysis and its Likert Calibration rate "
    "pairs of subjects' distances)."
)  # results.json only: a study of other designs reads nothing about effort in its report
NO_EFFORT_BLOCK = (
    "No effort analysis and no Calibration stored: no pair_distance block rates the trajectory, aggregate and "
    "overall measures (Eq. 5 needs all three)."
)
NO_EFFORT_PAIRS = (
    "No effort analysis and no Calibration stored: no rated pair has all of d_S, d_E, d and the output-space "
    "distance D (the effort pipeline needs a fair_score block over the same pool, as format 1's studies have)."
)


def analysis_run_create(
    *,
    slug: str,
    out_dir: Path,
    seed: int = 1,
    n_resamples: int = 2000,
    include_incomplete: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    include_pilot: bool = False,
    by: Sequence[str] = (),
    generalise: str | None = None,
    groups: GroupOptions | None = None,
    multiple_testing: str = "holm",
    job_id=None,
    deviation_reason: str = "",
) -> AnalysisRun:
    """The study's analysis (:func:`design_run_create`, every study: a format 1 file is stored as its format 2
    conversion), split by the questionnaire questions ``by`` (none: one rater group): completed, non-excluded
    participants only unless ``include_incomplete``, pilot participants only with ``include_pilot`` (the
    report counts the dropped by reason); the report written into ``out_dir``, its files stored (storage
    folder ``analysis/<uuid>``) and the run with one new Calibration version per condition in one
    transaction; if storing fails, nothing of the run remains. ``generalise``: "stimuli" or "none" overrides
    the study file's ``analysis.generalise`` ("stimuli": alpha's CI resamples stimulus pairs too); ``groups``:
    the group options (minimum sizes, pooling, bins); ``multiple_testing``: the adjustment within each family
    of tests (``analysis.families``: holm, bh or none). A preregistered study's analysis that deviates from
    its plan needs ``deviation_reason`` (``runs.analysis_plan.check_reason``). ``job_id``: the job running it
    (a cancelled job stores nothing: :func:`runs.services.run_storing`)."""
    study = latest_study(slug)
    generalise = study_generalise(study.spec, generalise)
    options = plan_options(by, include_incomplete, include_pilot, generalise, multiple_testing, seed, n_resamples)
    check_reason(study, {**options, **(groups or {})}, deviation_reason)
    return design_run_create(
        study,
        out_dir=out_dir,
        by=by,
        seed=seed,
        n_resamples=n_resamples,
        include_incomplete=include_incomplete,
        include_pilot=include_pilot,
        progress=progress,
        generalise=generalise,
        groups=groups or {},
        multiple_testing=multiple_testing,
        job_id=job_id,
        deviation_reason=deviation_reason,
    )


def store_run(
    study: Study,
    out_dir: Path,
    *,
    seed: int,
    n_resamples: int,
    calibrations: Sequence[EffortCalibration],
    job_id=None,
) -> AnalysisRun:
    """Store the report folder ``out_dir`` (storage folder ``analysis/<uuid>``) and the run with one new
    Likert Calibration version per condition of ``calibrations`` in one transaction; if storing fails,
    nothing of the run remains, nor when the job ``job_id`` was cancelled (:func:`runs.services.run_storing`)."""
    with run_storing(out_dir, "analysis", job_id=job_id) as prefix:
        run = AnalysisRun.objects.create(
            study=study,
            seed=seed,
            n_resamples=n_resamples,
            files_prefix=prefix,
            results=json.loads((out_dir / "results.json").read_text()),
        )
        for cal in calibrations:
            calibration_create(
                study=study,
                analysis_run=run,
                kind="likert",
                condition=cal.condition,
                alpha=cal.alpha,
                ci_low=cal.ci[0],
                ci_high=cal.ci[1],
                a1=cal.a1,
                a2=cal.a2,
                n_participants=cal.n_participants,
                seed=seed,
                generalise=cal.generalise or "",
                estimand=cal.estimand,
            )
    return run


def effort_analysis(
    slug: str,
    *,
    seed: int,
    n_resamples: int,
    include_incomplete: bool,
    include_pilot: bool,
    generalise: str | None,
    quality_exclusion: str = "study",
    progress: Callable[[str, int, int], None] | None = None,
    exports: StudyExports | None = None,
) -> PipelineResult:
    """The effort pipeline (``analysis.pipeline.run_pipeline``: Tables 2-5, the headline tests and each
    condition's calibration alpha) on the study's pairs table, the rows with an overall rating (the
    ``pair_distance`` blocks' ratings, as format 1 wrote them for a converted study); ``exports``: the job's
    snapshot of exports, else a new one."""
    pairs, participants = effort_pairs(
        slug, include_pilot=include_pilot, quality_exclusion=quality_exclusion, exports=exports
    )
    return run_pipeline(
        pairs,
        participants,
        seed=seed,
        n_resamples=n_resamples,
        include_incomplete=include_incomplete,
        progress=progress,
        generalise=generalise,
    )


def effort_pairs(
    slug: str, *, include_pilot: bool, quality_exclusion: str, exports: StudyExports | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The study's pairs rows with an overall rating and its participants table, as the effort pipeline takes them
    (from ``exports``, the job's snapshot of exports, else a new one)."""
    tables = (exports or StudyExports()).tables(slug, include_pilot=include_pilot, quality_exclusion=quality_exclusion)
    return tables.pairs.dropna(subset=["d_overall"]), tables.participants


GENERALISE_SETTING = {
    None: "participants resampled (for the study's own stimulus pairs)",
    "stimuli": "participants and stimulus pairs resampled (generalising over stimuli; two-way bootstrap)",
}


def without_flagged(analyse: Callable[[str], R], main: R, spec: dict, *, same: bool = False) -> tuple[R, R | None]:
    """The analyses with all participants and without those flagged for answer quality (``analyse(mode)``
    with ``research.quality.EXCLUSION_MODES`` "none" and "flagged"): the first is ``main`` when the study
    excludes by no flag; the second None when too few participants are left to analyse. Both are ``main``,
    nothing analysed again, when every mode's export is main's (``same``: no participant has a server-measured
    flag, ``runs.study_exports.StudyExports.same_in_every_mode``)."""
    if same:
        return main, main
    everyone = analyse("none") if spec.get("quality", {}).get("exclude_if") else main
    try:
        return everyone, analyse("flagged")
    except ValueError:
        return everyone, None


def plan_options(
    by: Sequence[str],
    include_incomplete: bool,
    include_pilot: bool,
    generalise: str | None,
    multiple_testing: str,
    seed: int,
    n_resamples: int,
) -> dict:
    """An analysis's options as a registered plan names them (``runs.analysis_plan``)."""
    return {
        "by": list(by),
        "include_incomplete": include_incomplete,
        "include_pilot": include_pilot,
        "generalise": generalise,
        "multiple_testing": multiple_testing,
        "seed": seed,
        "n_resamples": n_resamples,
    }


def study_generalise(spec: dict, generalise: str | None) -> str | None:
    """The ``generalise`` option in effect: ``generalise`` ("stimuli", or "none" for the study's own stimuli)
    if given, else the study file's ``analysis.generalise``; None means the study's own stimuli."""
    chosen = generalise or spec.get("analysis", {}).get("generalise")
    if chosen not in (None, "none", *GENERALISE):
        raise ValueError(f"generalise must be one of {['none', *GENERALISE]}, got {chosen!r}")
    return None if chosen == "none" else chosen


def design_run_create(study: Study, *, out_dir: Path, job_id=None, **options) -> AnalysisRun:
    """A format 2 study's analysis per task block and rater group (:func:`design_report_write` with
    ``options``): report, results.json and CSVs stored under ``analysis/<uuid>``, and the run; with the effort
    analysis of its ``pair_distance`` blocks (:func:`design_effort`) also one new Likert Calibration per
    condition, as a format 1 study's."""
    calibrations = design_report_write(study, out_dir=out_dir, **options)
    return store_run(
        study,
        out_dir,
        seed=options["seed"],
        n_resamples=options["n_resamples"],
        calibrations=calibrations,
        job_id=job_id,
    )


def design_report_write(
    study: Study,
    *,
    out_dir: Path,
    by: Sequence[str],
    seed: int,
    n_resamples: int,
    include_incomplete: bool,
    include_pilot: bool,
    progress: Callable[[str, int, int], None] | None = None,
    generalise: str | None = None,
    groups: GroupOptions,
    multiple_testing: str = "holm",
    deviation_reason: str = "",
) -> list:
    """The analysis of :func:`design_run_create` written into ``out_dir`` (nothing stored), with the
    deviations from the study's registered plan when it has one (``runs.analysis_plan``); returns the effort
    calibrations to store."""
    exports = StudyExports()  # one export per quality exclusion mode, shared by the blocks' and the effort analysis
    same = exports.same_in_every_mode(study.slug, include_pilot=include_pilot)

    def analyse(quality_exclusion: str, progress: Callable[[str, int, int], None] | None = None) -> DesignAnalysis:
        return study_analysis(
            study.slug,
            study.spec,
            by=by,
            include_pilot=include_pilot,
            include_incomplete=include_incomplete,
            quality_exclusion=quality_exclusion,
            exports=exports,
            seed=seed,
            n_resamples=n_resamples,
            n_permutations=n_resamples,
            progress=progress,
            generalise=generalise,
            multiple_testing=multiple_testing,
            **groups,
        )

    try:
        result = analyse("study", progress)
    except ValueError as exc:
        raise ValueError(f"study {study.slug!r}: {exc}") from exc
    sensitivity = design_sensitivity(*without_flagged(analyse, result, study.spec, same=same))
    provenance = study_provenance(
        study,
        participants={
            "analysed": result.n_participants,
            "with a rater group": result.n_participants - result.n_without_group,
        },
        dropped=(dict(result.sample.dropped) if result.sample else {})
        | (
            {
                f"from the rater-group rows and tests, kept in the {ALL!r} rows (no answer to {' or '.join(by)})": (
                    result.n_without_group
                )
            }
            if by
            else {}
        ),
        seeds={"analysis": seed},
        settings={
            "Rater groups": result.rater_group,
            "Smallest compared group": (
                f"{result.options['min_group_size']} participants, {result.options['min_subject_group']} subjects "
                + ("(smaller groups pooled into 'other')" if result.options["pool_small"] else "(smaller: too few)")
            ),
            "Subject-group bins": "; ".join(f"{k}: {v}" for k, v in result.options["bins"].items())
            or "numeric columns at the pool's quartiles",
            "Bootstrap resamples and permutations": str(n_resamples),
            "Participants": "all with answers" if include_incomplete else "completed only",
            "Pilot participants": "included" if include_pilot else "left out",
        }
        | (  # alpha's CI: only a study with effort ratings has one
            {"Calibration CI": GENERALISE_SETTING[generalise]} if any(map(rates_effort, study.spec["blocks"])) else {}
        ),
    )
    effort = design_effort(
        study,
        seed=seed,
        n_resamples=n_resamples,
        include_incomplete=include_incomplete,
        include_pilot=include_pilot,
        generalise=generalise,
        progress=progress,
        exports=exports,
    )
    if effort.sensitivity is not None:  # the effort alphas' rows beside the blocks', as in a format 1 report
        sensitivity = sensitivity_of(
            [sensitivity.table, effort.sensitivity.table], max(sensitivity.n_flagged, effort.sensitivity.n_flagged)
        )
    options = plan_options(by, include_incomplete, include_pilot, generalise, multiple_testing, seed, n_resamples)
    write_design_report(
        result,
        out_dir,
        title=f"{study.title}: analysis{f' by {result.rater_group}' if by else ''} (seed {seed})",
        provenance=provenance,
        sensitivity=sensitivity,
        effort=effort,
        deviations=registered_deviations(
            study, {**options, **groups}, why=deviation_reason, n_analysed=result.n_participants
        ),
    )
    return effort.result.calibrations if effort.result else []


def design_effort(
    study: Study,
    *,
    seed: int,
    n_resamples: int,
    include_incomplete: bool,
    include_pilot: bool,
    generalise: str | None,
    progress: Callable[[str, int, int], None] | None = None,
    exports: StudyExports | None = None,
) -> EffortOfDesign:
    """The effort analysis of a study's ``pair_distance`` blocks (:func:`effort_analysis`: a converted format 1
    study's alphas, CIs and tables are the format 1 analysis's, tested against its recorded results), its
    alphas without the flagged participants and the participants' BTS scores over the pairs (the first effort
    block's ``likert.similar_max``, the study's ``bonus.honesty.min_respondents``), or the reason there is
    none (no block rating trajectory, aggregate and overall; too few participants); ``progress`` as
    ``run_pipeline``'s; ``exports``: the job's snapshot of exports, else a new one."""
    blocks = study.spec["blocks"]
    if not any(block["type"] == "task" and block["task"] == "pair_distance" for block in blocks):
        return EffortOfDesign(None, NO_PAIR_DISTANCE, applies=False)
    if not any(map(rates_effort, blocks)):
        return EffortOfDesign(None, NO_EFFORT_BLOCK)

    exports = exports or StudyExports()

    def alphas(quality_exclusion: str) -> PipelineResult | CalibrationsResult:  # the sensitivity needs alpha only
        pairs = effort_pairs(
            study.slug, include_pilot=include_pilot, quality_exclusion=quality_exclusion, exports=exports
        )
        return pipeline_calibrations(
            *pairs, seed=seed, n_resamples=n_resamples, include_incomplete=include_incomplete, generalise=generalise
        )

    try:
        result = effort_analysis(
            study.slug,
            seed=seed,
            n_resamples=n_resamples,
            include_incomplete=include_incomplete,
            include_pilot=include_pilot,
            generalise=generalise,
            progress=progress,
            exports=exports,
        )
    except ValueError as exc:
        return EffortOfDesign(None, f"No effort analysis of the pair_distance blocks and no Calibration stored: {exc}.")
    if not result.calibrations:
        return EffortOfDesign(None, NO_EFFORT_PAIRS)
    block = next(b for b in study.spec["blocks"] if rates_effort(b))
    floor = study.spec.get("bonus", {}).get("honesty", {}).get("min_respondents", MIN_RESPONDENTS)
    assert result.sample is not None  # run_pipeline always sets it
    bts = participant_bts(result.sample.pairs, similar_max=block["likert"]["similar_max"], min_respondents=floor)
    main: PipelineResult | CalibrationsResult = result
    return EffortOfDesign(
        result,
        "",
        alpha_sensitivity(
            *without_flagged(
                alphas, main, study.spec, same=exports.same_in_every_mode(study.slug, include_pilot=include_pilot)
            )
        ),
        bts,
    )
