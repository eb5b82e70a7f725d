"""Audit models against a study's human calibration and yes/no feedback, and store the run."""

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pandas as pd

from fairness.dask_subjects import read_subjects_dask
from fairness.model_audit import PairSampling, audit, read_subjects
from runs.analysis_plan import exploratory_deviations
from runs.audit_condition import AuditError as AuditError  # the audit's refusals, raised by audited_condition
from runs.audit_condition import audited_condition
from runs.audit_parameters import AuditParameters
from runs.audit_sensitivity import audit_sensitivity, study_feedback
from runs.calibrations import calibration_create, study_condition
from runs.human_sources import STAGES as SOURCE_STAGES
from runs.human_sources import human_audit_of
from runs.models import AuditRun
from runs.provenance import CalibrationUsed, participant_counts, study_provenance
from runs.reports.audit import write_audit_report
from runs.services import run_storing
from runs.study_exports import StudyExports
from studies.services import latest_study

# the audit's progress stages, in order (runs.stage_progress.StageProgress)
EXPORT, AUDIT, SENSITIVITY, REPORT = "study export", "group metrics and feedback", "sensitivity", "report"
STAGES = (EXPORT, *SOURCE_STAGES, AUDIT, SENSITIVITY, REPORT)


def audit_run_create(
    *,
    slug: str,
    subjects_file: str | Path,
    out_dir: Path,
    parameters: AuditParameters,
    subjects_frame: pd.DataFrame | None = None,
    researcher=None,
    job_id=None,
    progress: Callable[[str, int, int], None] | None = None,
    multiple_testing: str = "holm",
) -> AuditRun:
    """Read the subjects file (or take ``subjects_frame``, the file already read under the upload
    limits), pick the human weights (the given Calibration, else the latest
    Likert calibration of the condition), score every model, estimate alpha from the study's
    yes/no feedback when its subjects are in the file, write the report into ``out_dir``, store
    its files (storage folder ``audit/<uuid>``), the run and the disagreement Calibration. ``parameters``
    (``runs.audit_parameters.AuditParameters``): the sources ``metric_from``, ``utility_from``, ``features_from``
    (``SLUG[:BLOCK]``, studies of ``researcher``, else of the audited study's owner) add what people said, per
    rater group of ``by`` (``runs.human_sources``), the human metric's Lipschitz condition with L = ``lipschitz``,
    the reliance on features judged unfair with the ``surrogate`` ("linear" or "forest") of each model's scores;
    ``groups`` are the subjects' sensitive columns (None: an effort file's guessed ones, else none),
    ``outcome_column`` their truth; the effort-aware parts need effort series in the subjects and ``desirable``
    and ``aggregate_scale`` in the condition; ``multiple_testing`` adjusts the notions' tests within each model's
    family; ``engine`` "dask" reads a Parquet subjects file on Dask (``fairness.dask_subjects``; ``scheduler``
    "tcp://HOST:PORT", else DASK_SCHEDULER_ADDRESS, else a LocalCluster), ``exact_eaif`` computes every EaIF
    exactly on Dask at any size; ``bound``, ``n_pairs`` and ``half_width`` say how EaIF is sampled above the
    exact limit (``fairness.model_audit.PairSampling``). Each study's export is built once (``runs.study_exports``).
    ``progress(stage, done, total)`` is told of each of :data:`STAGES`. ``job_id``: the job running it (a
    cancelled job stores nothing: :func:`runs.services.run_storing`)."""
    progress = progress or (lambda stage, done, total: None)
    p = parameters
    study = latest_study(slug)
    if p.engine == "dask" and subjects_frame is None:
        subjects_frame = read_subjects_dask(
            subjects_file,
            groups=None if p.groups is None else list(p.groups),
            outcome_column=p.outcome_column,
            scheduler=p.scheduler,
        )
    subjects = read_subjects(
        subjects_file if subjects_frame is None else subjects_frame,
        groups=None if p.groups is None else list(p.groups),
        outcome_column=p.outcome_column,
    )
    condition, likert = audited_condition(
        study, condition=p.condition, calibration_id=p.calibration_id, effort_series=bool(subjects.series_columns)
    )
    conditions = {c["key"]: c for c in study.spec["conditions"]}
    explained = "desirable" in conditions[condition] and "aggregate_scale" in conditions[condition]
    exports = StudyExports()
    progress(EXPORT, 0, 1)
    disagreements = exports.tables(slug).disagreements
    progress(EXPORT, 1, 1)
    human_of = partial(  # the audit's sources; called again for the sensitivity
        human_audit_of, subjects, audited_slug=slug, researcher=researcher, parameters=p, exports=exports
    )
    human = human_of(progress=progress)
    alphas = {f"human (likert v{likert.version})": likert.alpha} if likert else {}
    feedback = study_feedback(disagreements, condition)
    models = set(subjects.models)
    shown_model = p.shown_model if p.shown_model in models else None
    progress(AUDIT, 0, 1)
    result = audit(
        subjects,
        human=human,
        desirable=conditions[condition]["desirable"] if explained else None,
        scale=conditions[condition]["aggregate_scale"] if explained else None,
        alphas=alphas,
        feedback=feedback,
        shown_model=shown_model,
        seed=p.seed,
        n_resamples=p.n_resamples,
        multiple_testing=p.multiple_testing,
        exact_on_dask=p.exact_eaif,
        scheduler=p.scheduler,
        sampling=PairSampling(bound=p.bound, n_pairs=p.n_pairs, half_width=p.half_width),
    )
    progress(AUDIT, 1, 1)
    participants, dropped = participant_counts(disagreements) if len(disagreements) else ({}, {})
    provenance = study_provenance(
        study,
        participants=participants,
        dropped=dropped,
        seeds={"bootstrap": p.seed},
        settings={
            "Condition": condition,
            "Subjects file": f"{Path(subjects_file).name} ({len(subjects.frame)} subjects)",
            "Models": ", ".join(sorted(models)),
            "Sensitive columns": ", ".join(subjects.group_columns) or "none named (--groups)",
            "Truth": subjects.outcome_column or "none (--outcome-column)",
            "Bootstrap resamples": str(p.n_resamples),
            **(
                {"Engine": f"Dask ({p.scheduler or 'DASK_SCHEDULER_ADDRESS or a local cluster'})"}
                if p.engine == "dask"
                else {}
            ),
            **({} if likert else {"Calibration used": "none: the condition has no Likert calibration (equal weights)"}),
            **(human.sources if human else {}),
            **({"Rater groups of the sources": " / ".join(p.by)} if human and p.by else {}),
        },
        calibration=CalibrationUsed(
            study=f"{likert.study.title} ({likert.study.slug} v{likert.study.version})",
            condition=likert.condition.key,
            kind=likert.kind,
            version=likert.version,
            n_participants=likert.n_participants,
            alpha=likert.alpha,
            ci=(likert.ci_low, likert.ci_high),
            estimand=likert.estimand_text,
        )
        if likert
        else None,
    )
    progress(SENSITIVITY, 0, 1)
    sensitivity = audit_sensitivity(
        result,
        subjects,
        slug=slug,
        condition=condition,
        likert=likert,
        shown_model=shown_model,
        seed=p.seed,
        n_resamples=p.n_resamples,
        human=lambda mode: human_of(quality_exclusion=mode),
        exports=exports,
        source_slugs=[reference.partition(":")[0] for reference in p.sources.values()],
    )
    progress(SENSITIVITY, 1, 1)
    progress(REPORT, 0, 1)
    report = write_audit_report(
        result,
        out_dir,
        deviations=exploratory_deviations(study, what="a model audit"),
        title=f"{study.title}: model audit ({condition})",
        provenance=provenance,
        sensitivity=sensitivity,
    )
    with run_storing(out_dir, "audit", job_id=job_id) as prefix:
        run = AuditRun.objects.create(
            study=study,
            condition=study_condition(study, condition),
            subjects_file=Path(subjects_file).name,
            likert_calibration=likert,
            files_prefix=prefix,
            results=report.results,
        )
        cal = result.disagreement_calibration
        if cal is not None:
            calibration_create(
                study=study,
                kind="disagreement",
                condition=condition,
                alpha=cal.alpha,
                ci_low=cal.ci[0],
                ci_high=cal.ci[1],
                n_participants=cal.n_participants,
                seed=p.seed,
                estimand=cal.estimand,
            )
    progress(REPORT, 1, 1)
    return run
