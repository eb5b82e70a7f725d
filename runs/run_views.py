"""Runs from the dashboard: start an analysis, a model audit or a differential-parity run (the
API's request serializers check the options, ``runs.services.job_create`` queues the same
background job as the API), follow a job, list every run of a study, and serve the files of runs
and jobs (reports, tables)."""

import re
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, SuspiciousFileOperation
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_http_methods

from fairness.group_options import MIN_GROUP_SIZE, MIN_SUBJECT_GROUP
from fairness.sampling_options import BOUNDS, MAX_PAIRS, MIN_HALF_WIDTH, MIN_PAIRS
from participation.models import ConflictingArrival
from research.dashboard import quota_fill, summarise
from research.participant_samples import SAMPLES, sample_filter
from research.prolific_client import REJECTION_CATEGORIES
from research.prolific_services import PROLIFIC_QUERY, prolific_panel
from research.researcher_views import (
    collaborators_context,
    lifecycle_context,
    pilot_context,
    require_editor,
    sample_of,
)
from research.tables import study_tables
from runs.audit_parameters import DEFAULTS as AUDIT_DEFAULTS
from runs.human_source_options import OPTIONS, SURROGATES
from runs.models import AnalysisRun, AuditRun, Calibration, Job, Preregistration
from runs.selectors import jobs_visible_to, may_cancel
from runs.serializers import (
    AnalysisRequestSerializer,
    AuditRequestSerializer,
    DifferentialParityRequestSerializer,
)
from runs.services import JobQuotaExceeded, job_cancel, job_create
from runs.storage import RunStorageError, list_files
from studies.format2 import BY_LANGUAGE, questionnaire_questions
from studies.selectors import latest_versions, studies_visible_to, visible_versions
from studies.translation import file_languages
from tasks import BLOCK_TASKS
from tasks.pair_distance import rates_effort

# URL name of a run kind -> (job kind, the API's serializer of its options, its uploaded files)
STARTABLE = {
    "analysis": (Job.Kind.ANALYSIS, AnalysisRequestSerializer, ()),
    "audit": (Job.Kind.AUDIT, AuditRequestSerializer, ("subjects",)),
    "differential-parity": (Job.Kind.DIFFERENTIAL_PARITY, DifferentialParityRequestSerializer, ()),
}


def queue_from_form(**job_fields) -> tuple[Job | None, dict[str, list[str]], int]:
    """Queue a job started from a dashboard form (``job_create``): (the job, no errors, 200), or (None, the
    form's error, 429 beyond the researcher's job quota or 507 when an upload cannot be stored)."""
    try:
        return job_create(**job_fields), {}, 200
    except JobQuotaExceeded as exc:
        return None, {"non_field_errors": [str(exc)]}, 429
    except RunStorageError as exc:
        return None, {"non_field_errors": [f"{exc}; nothing was kept. Try again later."]}, 507


@login_required
@require_http_methods(["GET", "POST"])
def run_start(request: HttpRequest, slug: str, kind: str = "analysis") -> HttpResponse:
    """GET: the forms for every kind; POST to ``start/<kind>/``: queue that job and go to its page."""
    if kind not in STARTABLE:
        raise Http404("No such kind of run.")
    versions = visible_versions(request.user, slug)
    study = versions[0]
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        require_editor(request.user, slug)
        job_kind, serializer_class, upload_fields = STARTABLE[kind]
        data: MultiValueDict[str, Any] = request.POST.copy()  # the form's texts, then its uploaded files
        data.update(request.FILES)
        serializer = serializer_class(data=data, context={"study": study, "researcher": request.user})
        if serializer.is_valid():
            params = dict(serializer.validated_data)
            uploads = {field: params.pop(field) for field in upload_fields}
            job, errors, status = queue_from_form(
                kind=job_kind, user=request.user, study=study, params=params, uploads=uploads
            )
            if job is not None:
                return redirect("researcher:job", job_id=job.pk)
        else:
            errors, status = {field: [str(m) for m in found] for field, found in serializer.errors.items()}, 400
    context = {
        "study": study,
        "analysis_blocks": analysis_contents(study.spec),
        "stores_calibration": any(map(rates_effort, study.spec.get("blocks", []))),
        "parity_blocks": [
            (block["key"], block["task"])
            for block in study.spec.get("blocks", [])
            if block.get("type") == "task" and BLOCK_TASKS[block["task"]].parity_table
        ],
        "parity_tasks": [name for name, task in BLOCK_TASKS.items() if task.parity_table],
        "kind": kind if request.method == "POST" else "",
        "errors": errors,
        "values": request.POST,
        "by": request.POST.getlist("by"),
        "conditions": study.spec.get("conditions", []),
        "questions": questionnaire_questions(study.spec),
        "by_language": BY_LANGUAGE
        if len(file_languages(study.spec)) > 1 and BY_LANGUAGE not in questionnaire_questions(study.spec)
        else "",
        "min_group_size": MIN_GROUP_SIZE,
        "min_subject_group": MIN_SUBJECT_GROUP,
        "human_sources": human_source_choices(request.user, errors if kind == "audit" else {}, request.POST),
        "surrogates": SURROGATES,
        "registration": Preregistration.objects.filter(study__slug=slug).first(),
        "audit_defaults": AUDIT_DEFAULTS,
        "pair_bounds": BOUNDS,
        "audit_engines": {"pandas": "pandas (this machine)", "dask": "Dask (a Parquet file)"},
        "min_pairs": MIN_PAIRS,
        "max_pairs": MAX_PAIRS,
        "max_pairs_text": f"{MAX_PAIRS:,}",
        "min_half_width": MIN_HALF_WIDTH,
        "calibrations": Calibration.objects.filter(study__in=versions, kind=Calibration.Kind.LIKERT)
        .select_related("condition")
        .order_by("condition__key", "-version"),
    }
    return render(request, "researcher/run_start.html", context, status=status)


def analysis_contents(spec: dict) -> list[tuple[str, str, str]]:
    """What the analysis report estimates for each task block of ``spec``: (key, task, the headings of
    its tables, or why it has none), so the form speaks of the study's own design."""
    contents = []
    for block in spec.get("blocks", []):
        if block.get("type") == "task":
            task = BLOCK_TASKS[block["task"]]
            tables = "; ".join(table.heading for table in task.report_tables.values())
            contents.append((block["key"], block["task"], tables or task.no_analysis))
    return contents


def human_source_choices(user, errors: dict, values) -> list[dict]:
    """The audit form's source selects (``runs.human_source_options.OPTIONS``: ``metric_from``, ``utility_from``,
    ``features_from``): the task blocks whose type yields what the option needs (``tasks.yields``), in the latest
    version of each of the researcher's studies."""
    blocks = [
        (study.slug, block)
        for study in latest_versions(user)
        for block in study.spec.get("blocks", [])
        if block.get("type") == "task"
    ]
    return [
        {
            "name": name,
            "label": option.label,
            "hint": f"{option.does} The list holds your studies' blocks that yield {option.needs.meaning}.",
            "value": values.get(name, ""),
            "errors": errors.get(name, []),
            "choices": [
                (f"{slug}:{block['key']}", f"{slug}: {block['key']} ({block['task']})")
                for slug, block in blocks
                if block["task"] in option.tasks
            ],
        }
        for name, option in OPTIONS.items()
    ]


# A study file's job: the form it came from (URL name, label), linked from its page
STUDY_FILE_FORMS: dict[str, tuple[str, str]] = {  # job kind -> (URL name, label)
    Job.Kind.STUDY_BUILD: ("researcher:build", "Build a study from a CSV"),
    Job.Kind.STUDY_UPLOAD: ("researcher:upload", "Upload a study"),
    Job.Kind.STUDY_LOAD: ("researcher:studies", "Studies"),
}


@login_required
@require_http_methods(["POST"])
def job_cancel_view(request: HttpRequest, job_id) -> HttpResponse:
    """The job page's "Cancel" button (POST with the CSRF token): cancel the job, back to its page."""
    job = jobs_visible_to(request.user).select_related("study").filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job among yours.")
    if not may_cancel(request.user, job):
        raise PermissionDenied("A viewer of the study cannot cancel its jobs.")
    job_cancel(job_id=job.pk, user=request.user)  # a job that has just ended stays as it ended
    return redirect("researcher:job", job_id=job.pk)


@login_required
def job_detail(request: HttpRequest, job_id) -> HttpResponse:
    """A job's status, progress and log; ``static/surveys/job.js`` polls ``/api/jobs/<id>/`` and
    reloads the page when the job ends (a ``<meta refresh>`` does it without JavaScript). A study
    file's job that succeeded leads on to its ``next_url`` (the preview, or the loaded study's dashboard);
    one that failed lists the file's problems."""
    job = jobs_visible_to(request.user).select_related("created_by").filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job among yours.")
    result = job.result or {}
    if job.status == Job.Status.SUCCEEDED and result.get("next_url"):  # a study file's build, check or load
        if result.get("message"):
            messages.success(request, result["message"])
        return redirect(result["next_url"])
    finished = job.reported_status in Job.FINISHED
    return render(
        request,
        "researcher/job.html",
        {
            "job": job,
            "finished": finished,
            "report_url": result.get("report_url", "") if job.status == Job.Status.SUCCEEDED else "",
            "problems": result.get("problems", []) if job.status == Job.Status.FAILED else [],
            "more_problems": result.get("more_problems", 0),
            "files": [(name, reverse("researcher:job-file", args=[job.pk, name])) for name in job.files],
            "form": STUDY_FILE_FORMS.get(job.kind),
            "may_cancel": may_cancel(request.user, job),
            "api_url": reverse("api-job", args=[job.pk]),
        },
    )


@login_required
def run_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Every run of the study (all versions): analyses, audits, calibrations and background jobs."""
    versions = visible_versions(request.user, slug)
    analyses = AnalysisRun.objects.filter(study__in=versions).select_related("study")
    return render(
        request,
        "researcher/runs.html",
        {
            "study": versions[0],
            "analyses": [(run, list_files(run.files_prefix)) for run in analyses],
            "audits": AuditRun.objects.filter(study__in=versions).select_related(
                "study", "condition", "likert_calibration__condition"
            ),
            "calibrations": Calibration.objects.filter(study__in=versions)
            .select_related("study", "analysis_run", "condition")
            .order_by("kind", "condition__key", "-version"),
            "jobs": Job.objects.filter(study__in=versions).select_related("created_by"),
        },
    )


# Run files that may be served; reports load Plotly from the project's static files.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
}
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}$")


def _serve_stored(prefix: str | None, filename: str) -> FileResponse:
    """A run's file from the storage API (any web server can serve any run's files)."""
    suffix = Path(filename).suffix
    if not prefix or not SAFE_NAME.match(filename) or suffix not in CONTENT_TYPES:
        raise Http404("No such report file.")
    try:
        handle = default_storage.open(f"{prefix}/{filename}", "rb")
    except (FileNotFoundError, SuspiciousFileOperation) as exc:
        raise Http404("No such report file in this run.") from exc
    return FileResponse(handle, content_type=CONTENT_TYPES[suffix])


def _latest_prefix(model, versions) -> str | None:
    runs = model.objects.filter(study__in=versions).order_by("-created_at")
    return runs.values_list("files_prefix", flat=True).first()


@login_required
def latest_report_file(request: HttpRequest, slug: str, filename: str) -> FileResponse:
    """Files of the study's latest analysis report."""
    return _serve_stored(_latest_prefix(AnalysisRun, visible_versions(request.user, slug)), filename)


@login_required
def latest_audit_file(request: HttpRequest, slug: str, filename: str) -> FileResponse:
    """Files of the study's latest model-audit report."""
    return _serve_stored(_latest_prefix(AuditRun, visible_versions(request.user, slug)), filename)


@login_required
def analysis_file(request: HttpRequest, run_id: int, filename: str) -> FileResponse:
    run = AnalysisRun.objects.filter(pk=run_id, study__in=studies_visible_to(request.user)).first()
    return _serve_stored(run.files_prefix if run else None, filename)


@login_required
def audit_file(request: HttpRequest, run_id: int, filename: str) -> FileResponse:
    run = AuditRun.objects.filter(pk=run_id, study__in=studies_visible_to(request.user)).first()
    return _serve_stored(run.files_prefix if run else None, filename)


@login_required
def job_file(request: HttpRequest, job_id, filename: str) -> FileResponse:
    job = jobs_visible_to(request.user).filter(pk=job_id).first()
    return _serve_stored(job.files_prefix if job else None, filename)


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    versions = visible_versions(request.user, slug)
    sample = sample_of(request)
    summary = summarise(slug, participants=sample_filter(sample))
    start_url = request.build_absolute_uri(reverse("surveys:start", args=[slug]))
    return render(
        request,
        "researcher/dashboard.html",
        {
            "study": versions[0],
            "versions": versions,
            "sample": sample,
            "samples": SAMPLES,
            "summary": summary,
            "status_table": summary.by_condition_status,
            "quotas": quota_fill(slug, versions[0].spec),
            "tables": study_tables(slug),
            "latest_run": AnalysisRun.objects.filter(study__in=versions).first(),
            "latest_audit": AuditRun.objects.filter(study__in=versions).select_related("condition").first(),
            "calibrations": Calibration.objects.filter(study__in=versions)
            .select_related("condition")
            .order_by("kind", "condition__key", "-version"),
            "start_url": start_url,
            "id_conflicts": ConflictingArrival.objects.filter(participant__study__in=versions)
            .values("participant")
            .distinct()
            .count(),
            "prolific_url": start_url + PROLIFIC_QUERY,
            "prolific": prolific_panel(slug),
            "rejection_categories": REJECTION_CATEGORIES,
            **pilot_context(request, versions, summary.counts),
            **lifecycle_context(versions, summary.counts),
            **collaborators_context(request, slug),
        },
    )
