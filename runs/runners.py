"""What each kind of job does, given its working folder: the same services the management
commands use, with the uploaded inputs read under the upload limits."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from django.core.files import File
from django.urls import reverse

from core.uploads import check_parquet_upload, is_parquet, read_csv_upload
from research.export import table_records
from research.study_upload import (
    OUTCOMES,
    load_stashed,
    preview_record,
    read_upload,
    stash_preview,
    stash_upload,
    study_preview,
)
from runs.adaptive import adaptive_refit
from runs.analysis_runs import analysis_run_create
from runs.audit_parameters import AuditParameters
from runs.audit_runs import STAGES as AUDIT_STAGES
from runs.audit_runs import audit_run_create
from runs.design_analysis import GROUP_OPTIONS, GroupOptions
from runs.models import Job
from runs.plan_parameters import plan_total
from runs.planning_runs import plan_results, run_plan, write_plan_report
from runs.preregistration import preregister
from runs.provenance import Provenance, settings_text
from runs.relative_fairness import write_study_dp_report
from runs.reports.situation_testing import write_st_report
from runs.situation_runs import read_situation_upload, situation_testing_run
from runs.stage_progress import StageProgress
from runs.storage import copy_to_local, new_prefix, store_directory
from studies.models import Study


@dataclass
class JobContext:
    job: Job
    workdir: Path
    progress: StageProgress  # progress(stage, done, total); progress.plan(stages) for a job of known stages
    log: Callable[[str], None]


def _study(job: Job) -> Study:
    """The study of a job of a study's kind (analysis, audit, differential parity, plan, adaptive refit):
    queued with it, and deleted with it (``on_delete=CASCADE``)."""
    if job.study is None:
        raise ValueError(f"the {job.kind} job {job.pk} has no study")
    return job.study


def _report_dir(context: JobContext) -> Path:
    out = context.workdir / "report"
    out.mkdir()
    return out


def run_analysis(context: JobContext) -> tuple[dict, str]:
    job = context.job
    run = analysis_run_create(
        slug=_study(job).slug,
        out_dir=_report_dir(context),
        seed=job.params["seed"],
        n_resamples=job.params["n_resamples"],
        include_incomplete=job.params.get("include_incomplete", False),
        progress=context.progress,
        include_pilot=job.params.get("include_pilot", False),
        by=job.params.get("by", []),
        generalise=job.params.get("generalise"),
        multiple_testing=job.params.get("multiple_testing", "holm"),
        # GroupOptions' keys; the request serializer checked their values
        groups=cast(GroupOptions, {k: job.params[k] for k in GROUP_OPTIONS if k in job.params}),
        job_id=job.pk,
        deviation_reason=job.params.get("deviation_reason", ""),
    )
    context.log(f"analysis run {run.pk} stored with {run.calibrations.count()} calibrations")
    return {
        "analysis_run": run.pk,
        "report_url": reverse("researcher:analysis-file", args=[run.pk, "report.html"]),
        "calibrations": [
            {
                "id": cal.pk,
                "condition": cal.condition.key,
                "version": cal.version,
                "alpha": cal.alpha,
                "ci_low": cal.ci_low,
                "ci_high": cal.ci_high,
                "estimand": cal.estimand_text,
            }
            for cal in run.calibrations.select_related("condition")
        ],
    }, run.files_prefix


def run_audit(context: JobContext) -> tuple[dict, str]:
    job = context.job
    out = _report_dir(context)
    subjects = copy_to_local(job.inputs["subjects"], out / "subjects.upload")
    frame = None  # a Parquet file is read by the audit (its engine: pandas or Dask), under the same limits
    if is_parquet(subjects, name="subjects"):
        subjects = subjects.rename(out / "subjects.parquet")
        check_parquet_upload(subjects, name="subjects")
    else:
        subjects = subjects.rename(out / "subjects.csv")
        frame = read_csv_upload(subjects, name="subjects")  # size, header and row limits: read once
    context.progress.plan(AUDIT_STAGES)
    run = audit_run_create(
        slug=_study(job).slug,
        subjects_file=subjects,
        subjects_frame=frame,
        out_dir=out,
        parameters=AuditParameters.from_request(job.params),  # a job queued before an option: its default
        progress=context.progress,
        researcher=job.created_by,
        job_id=job.pk,
    )
    context.log(f"audit run {run.pk} stored")
    return {
        "audit_run": run.pk,
        "report_url": reverse("researcher:audit-file", args=[run.pk, "report.html"]),
        "results": run.results,
    }, run.files_prefix


def run_situation_testing_job(context: JobContext) -> tuple[dict, str]:
    job, p = context.job, context.job.params
    local = {name: copy_to_local(stored, context.workdir / f"{name}.upload") for name, stored in job.inputs.items()}
    data = read_situation_upload(local["data"], name="data", sep=p["sep"])
    cf = None
    if "counterfactuals" in local:
        cf = read_situation_upload(local["counterfactuals"], name="counterfactuals", sep=p["sep"])
    context.progress("situation testing", 1, 3)
    result = situation_testing_run(data, cf, p)
    context.progress("report", 2, 3)
    out = _report_dir(context)
    shown = ("protected", "protected_value", "target", "negative", "features", "k", "alpha", "tau", "mode", "engine")
    settings = {name: p[name] for name in shown if p.get(name) not in (None, [])}
    provenance = Provenance(settings={"Individuals": str(len(data)), **settings_text(settings)})
    write_st_report(result, data, out, title="Situation testing", settings=settings, provenance=provenance)
    prefix = new_prefix("situation_testing")
    store_directory(out, prefix)
    k_small = min(p["k"])
    method = "CSTwo" if cf is not None else "ST"
    flagged = result.individuals[(result.individuals["k"] == k_small) & result.individuals[method]].head(100)
    return {
        "report_url": reverse("researcher:job-file", args=[job.pk, "report.html"]),
        "counts": table_records(result.counts),
        "flagged": [
            {
                "complainant": int(c),
                "delta_p": float(d),
                **{g: [int(i) for i in ids] for g, ids in result.groups_of(int(c), k_small, method).items()},
            }
            for c, d in zip(flagged["complainant"], flagged[f"{method}_delta"], strict=True)
        ],
        "flagged_k": k_small,
        "flagged_method": method,
    }, prefix


def run_differential_parity(context: JobContext) -> tuple[dict, str]:
    job = context.job
    slug = _study(job).slug
    favourable = job.params.get("favourable", "lower")  # jobs queued before the option: the default
    out = _report_dir(context)
    _, tables = write_study_dp_report(
        slug,
        out,
        alpha=job.params.get("alpha", 0.05),
        favourable=favourable,
        multiple_testing=job.params.get("multiple_testing", "holm"),
    )
    prefix = new_prefix("differential_parity")
    store_directory(out, prefix)
    return {
        "tables": {name: table_records(frame) for name, frame in tables.items()},
        "report_url": reverse("researcher:job-file", args=[job.pk, "report.html"]),
    }, prefix


def run_plan_job(context: JobContext) -> tuple[dict, str]:
    """plan_study on the study's own file (its effort design; a study without one fails with the reason):
    the job's result is results.json; report.html and plan.csv are stored with the job."""
    job, p = context.job, context.job.params
    study = _study(job)
    result = run_plan(
        study.spec,
        p,
        progress=lambda done: context.progress("simulated studies", done, plan_total(p)),
    )
    out = _report_dir(context)
    write_plan_report(result, out, title=f"{study.slug}: study plan for {p['n']} participants")
    prefix = new_prefix("plan")
    store_directory(out, prefix)
    context.log(f"{p['studies']} simulated studies of {p['n']} participants")
    return {
        **plan_results(result),
        "report_url": reverse("researcher:job-file", args=[job.pk, "report.html"]),
    }, prefix


def run_design_check(context: JobContext) -> tuple[dict, str]:
    """The design check of a built study file stashed for the job's researcher (``runs.design_check``): its
    warnings in the log, report.html, design_check.csv and results.json stored with the job."""
    import json

    from research.study_upload import stashed_bytes
    from runs.design_check import check_design, write_check_report
    from studies.services import stored_file

    job, p = context.job, context.job.params
    spec, _ = stored_file(json.loads(stashed_bytes(user=job.created_by, digest=p["digest"])))
    check = check_design(
        spec,
        participants=p["participants"],
        by=p["by"],
        replications=p["replications"],
        progress=lambda done: context.progress("simulated runs", done, p["replications"]),
    )
    for line in check.warnings or ("No warning: every estimate is identified at this size.",):
        context.log(line)
    out = _report_dir(context)
    write_check_report(check, out, title=f"{spec['slug']}: design check at {p['participants']} participants")
    prefix = new_prefix("design_check")
    store_directory(out, prefix)
    return {**check.as_dict(), "report_url": reverse("researcher:job-file", args=[job.pk, "report.html"])}, prefix


def run_study_build(context: JobContext) -> tuple[dict, str]:
    """The builder on a CSV too large to build in a request: build, validate, stash with its summary;
    the job's page then leads to the build preview."""
    from research.study_build import build_and_stash, read_subjects

    job, p = context.job, context.job.params
    context.progress("reading the CSV", 0, 2)
    frame = read_subjects(copy_to_local(job.inputs["subjects"], context.workdir / "subjects.csv"), p)
    context.log(f"{p['name']}: {len(frame):,} rows, {len(frame.columns):,} columns")
    context.progress("building and checking the study file", 1, 2)
    digest = build_and_stash(user=job.created_by, frame=frame, params=p)
    return {"digest": digest, "next_url": reverse("researcher:build-preview", args=[digest])}, ""


def run_study_upload(context: JobContext) -> tuple[dict, str]:
    """A study file too large to check in a request: validate, stash, and store the preview against the
    current version; the job's page then leads to the upload preview."""
    job = context.job
    local = copy_to_local(job.inputs["file"], context.workdir / "study.json")
    context.progress("checking the study file", 0, 2)
    with local.open("rb") as handle:
        digest, raw, spec = read_upload(File(handle))
    stash_upload(user=job.created_by, digest=digest, raw=raw)
    context.progress("comparing with the current version", 1, 2)
    preview = study_preview(user=job.created_by, digest=digest, spec=spec)
    stash_preview(user=job.created_by, digest=digest, kind="upload", preview=preview_record(preview))
    return {"digest": digest, "next_url": reverse("researcher:upload-preview", args=[digest])}, ""


def run_study_load(context: JobContext) -> tuple[dict, str]:
    """Load a large stashed file as its researcher (``study_load``'s ownership rule); the job's page then
    leads to the study's dashboard with the outcome."""
    result = load_stashed(user=context.job.created_by, digest=context.job.params["digest"])
    study = result.study
    context.log(f"{study.slug} v{study.version}: {result.action}")
    return {
        "study": study.slug,
        "version": study.version,
        "action": result.action,
        "next_url": reverse("researcher:dashboard", args=[study.slug]),
        "message": f"{study.slug} v{study.version}: {OUTCOMES[result.action]}.",
    }, ""


def run_preregistration(context: JobContext) -> tuple[dict, str]:
    job = context.job
    study = _study(job)
    context.progress("registering: the bundle and its simulated run", 0, 1)
    registration = preregister(study.slug, context.workdir / "bundle", plan=job.params["plan"], user=job.created_by)
    context.log(
        f"registered {study.slug} version {registration.study.version}: manifest {registration.manifest_sha256}"
    )
    return {
        "preregistration": registration.pk,
        "manifest_sha256": registration.manifest_sha256,
        "next_url": reverse("researcher:preregistration", args=[study.slug]),
    }, ""


def run_adaptive_refit(context: JobContext) -> tuple[dict, str]:
    job = context.job
    return adaptive_refit(study_id=_study(job).pk, block=job.params["block"]), ""


RUNNERS: dict[str, Callable[[JobContext], tuple[dict, str]]] = {
    Job.Kind.ANALYSIS: run_analysis,
    Job.Kind.AUDIT: run_audit,
    Job.Kind.SITUATION_TESTING: run_situation_testing_job,
    Job.Kind.DIFFERENTIAL_PARITY: run_differential_parity,
    Job.Kind.PLAN: run_plan_job,
    Job.Kind.STUDY_BUILD: run_study_build,
    Job.Kind.STUDY_UPLOAD: run_study_upload,
    Job.Kind.STUDY_LOAD: run_study_load,
    Job.Kind.ADAPTIVE_REFIT: run_adaptive_refit,
    Job.Kind.PREREGISTRATION: run_preregistration,
    Job.Kind.DESIGN_CHECK: run_design_check,
}
