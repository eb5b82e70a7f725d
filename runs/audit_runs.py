"""Audit models against a study's human calibration and yes/no feedback, and store the run."""

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import pandas as pd

from fairness.dask_subjects import read_subjects_dask
from fairness.human_audit import Surrogate
from fairness.model_audit import audit, read_subjects
from research.export import export_tables
from runs.audit_condition import AuditError as AuditError  # the audit's refusals, raised by audited_condition
from runs.audit_condition import audited_condition
from runs.audit_sensitivity import audit_sensitivity, study_feedback
from runs.calibrations import calibration_create, study_condition
from runs.human_sources import human_audit_of
from runs.models import AuditRun
from runs.provenance import CalibrationUsed, participant_counts, study_provenance
from runs.reports.audit import write_audit_report
from runs.services import run_storing
from studies.services import latest_study


def audit_run_create(
    *,
    slug: str,
    subjects_file: str | Path,
    out_dir: Path,
    subjects_frame: pd.DataFrame | None = None,
    condition: str | None = None,
    calibration_id: int | None = None,
    shown_model: str | None = "study_ai",
    seed: int = 1,
    n_resamples: int = 1000,
    metric_from: str | None = None,
    utility_from: str | None = None,
    features_from: str | None = None,
    by: Sequence[str] = (),
    lipschitz: float = 1.0,
    surrogate: Surrogate = "linear",
    researcher=None,
    job_id=None,
    groups: Sequence[str] | None = None,
    outcome_column: str | None = None,
    engine: str = "pandas",
    scheduler: str | None = None,
    exact_on_dask: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> AuditRun:
    """Read the subjects file (or take ``subjects_frame``, the file already read under the upload
    limits), pick the human weights (the given Calibration, else the latest
    Likert calibration of the condition), score every model, estimate alpha from the study's
    yes/no feedback when its subjects are in the file, write the report into ``out_dir``, store
    its files (storage folder ``audit/<uuid>``), the run and the disagreement Calibration. ``metric_from``,
    ``utility_from``, ``features_from`` (``SLUG[:BLOCK]``, studies of ``researcher``, else of the audited
    study's owner) add what people said, per rater group of ``by`` (``runs.human_sources``), the human metric's
    Lipschitz condition with L = ``lipschitz``, the reliance on features judged unfair with the ``surrogate``
    ("linear" or "forest") of each model's scores. ``groups`` are the subjects' sensitive columns (None: an effort
    file's guessed ones, else none), ``outcome_column`` their truth; the effort-aware parts need effort series in
    the subjects and ``desirable`` and ``aggregate_scale`` in the condition. ``engine`` "dask" reads a Parquet
    subjects file on Dask (``fairness.dask_subjects``; ``scheduler`` "tcp://HOST:PORT", else DASK_SCHEDULER_ADDRESS,
    else a LocalCluster), ``exact_on_dask`` computes every EaIF exactly on Dask at any size.
    ``progress(stage, done, total)`` is told of each stage. ``job_id``: the job running it (a cancelled job stores
    nothing:
    :func:`runs.services.run_storing`)."""
    progress = progress or (lambda stage, done, total: None)
    study = latest_study(slug)
    if engine == "dask" and subjects_frame is None:
        subjects_frame = read_subjects_dask(
            subjects_file, groups=groups, outcome_column=outcome_column, scheduler=scheduler
        )
    subjects = read_subjects(
        subjects_file if subjects_frame is None else subjects_frame, groups=groups, outcome_column=outcome_column
    )
    condition, likert = audited_condition(
        study, condition=condition, calibration_id=calibration_id, effort_series=bool(subjects.series_columns)
    )
    conditions = {c["key"]: c for c in study.spec["conditions"]}
    explained = "desirable" in conditions[condition] and "aggregate_scale" in conditions[condition]
    progress("human sources", 1, 4)
    human_of = partial(  # the audit's sources with every option; called again for the sensitivity
        human_audit_of,
        subjects,
        audited_slug=slug,
        researcher=researcher,
        metric_from=metric_from,
        utility_from=utility_from,
        features_from=features_from,
        by=by,
        lipschitz=lipschitz,
        surrogate=surrogate,
        seed=seed,
        n_resamples=n_resamples,
    )
    human = human_of()
    alphas = {f"human (likert v{likert.version})": likert.alpha} if likert else {}
    disagreements = export_tables(slug).disagreements
    feedback = study_feedback(disagreements, condition)
    models = set(subjects.models)
    shown_model = shown_model if shown_model in models else None
    progress("audit", 2, 4)
    result = audit(
        subjects,
        human=human,
        desirable=conditions[condition]["desirable"] if explained else None,
        scale=conditions[condition]["aggregate_scale"] if explained else None,
        alphas=alphas,
        feedback=feedback,
        shown_model=shown_model,
        seed=seed,
        n_resamples=n_resamples,
        exact_on_dask=exact_on_dask,
        scheduler=scheduler,
    )
    participants, dropped = participant_counts(disagreements) if len(disagreements) else ({}, {})
    provenance = study_provenance(
        study,
        participants=participants,
        dropped=dropped,
        seeds={"bootstrap": seed},
        settings={
            "Condition": condition,
            "Subjects file": f"{Path(subjects_file).name} ({len(subjects.frame)} subjects)",
            "Models": ", ".join(sorted(models)),
            "Sensitive columns": ", ".join(subjects.group_columns) or "none named (--groups)",
            "Truth": subjects.outcome_column or "none (--outcome-column)",
            "Bootstrap resamples": str(n_resamples),
            **(
                {"Engine": f"Dask ({scheduler or 'DASK_SCHEDULER_ADDRESS or a local cluster'})"}
                if engine == "dask"
                else {}
            ),
            **({} if likert else {"Calibration used": "none: the condition has no Likert calibration (equal weights)"}),
            **(human.sources if human else {}),
            **({"Rater groups of the sources": " / ".join(by)} if human and by else {}),
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
    sources = (metric_from, utility_from, features_from)
    progress("sensitivity", 3, 4)
    sensitivity = audit_sensitivity(
        result,
        subjects,
        slug=slug,
        condition=condition,
        likert=likert,
        shown_model=shown_model,
        seed=seed,
        n_resamples=n_resamples,
        human=lambda mode: human_of(quality_exclusion=mode),
        source_slugs=[reference.partition(":")[0] for reference in sources if reference],
    )
    progress("report", 4, 4)
    write_audit_report(
        result,
        out_dir,
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
            results=json.loads((out_dir / "results.json").read_text()),
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
                seed=seed,
                estimand=cal.estimand,
            )
    return run
