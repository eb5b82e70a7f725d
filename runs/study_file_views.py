"""The study builder's and the study upload's forms, and "Load" of a large stashed file: small inputs
are handled inside the request (bounded: ``studies.builder.builds_inline``,
``research.study_upload.INLINE_MAX_BYTES``), larger ones become background jobs (``Job.Kind.STUDY_BUILD``,
``STUDY_UPLOAD``, ``STUDY_LOAD``) whose page shows progress and then leads to the same preview, so that a
researcher's large file never holds a web thread that participants' requests wait for."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.uploads import UploadError, csv_upload_header
from research.study_builder_views import StudyBuildForm, build_params
from research.study_upload import (
    BUILD_INLINE_MAX_BYTES,
    INLINE_MAX_BYTES,
    StashedFileMissing,
    StashNotStored,
    check_upload_size,
    read_upload,
    stash_is_large,
    stash_upload,
    stashed_bytes,
)
from research.study_upload_views import StudyUploadForm
from runs.models import Job
from runs.plan_parameters import BUILDER_BY, DESIGN_CHECK_REPLICATIONS, PLAN_PARAMETERS
from runs.services import JobQuotaExceeded, job_create
from runs.storage import RunStorageError
from studies.study_file import InvalidStudyFile


def _queue(request: HttpRequest, **job_fields) -> tuple[Job | None, str, int]:
    """Queue a job: (the job, "", 302), or (None, why not, 429 beyond the quota / 507 storage failed)."""
    try:
        return job_create(user=request.user, **job_fields), "", 302
    except JobQuotaExceeded as exc:
        return None, str(exc), 429
    except RunStorageError as exc:
        return None, f"{exc}; nothing was kept. Try again later.", 507


@login_required
@require_http_methods(["GET", "POST"])
def study_build(request: HttpRequest) -> HttpResponse:
    """The builder's form. A CSV of at most ``BUILD_INLINE_MAX_BYTES`` whose table ``builds_inline`` is
    built here (problems: 400, the preview: 302); any other is stored and built by a job (302 to its page)."""
    problems: list[str] = []
    header: list[str] = []
    upload = request.FILES.get("subjects") if request.method == "POST" else None
    if upload is not None:
        try:
            header = csv_upload_header(upload, name=upload.name or "subjects")  # the column picker's (no pandas)
        except UploadError as exc:
            problems = [str(exc)]
        upload.seek(0)
    form = StudyBuildForm(request.POST or None, request.FILES or None, header=header)
    error, status = "", 200
    if request.method == "POST" and not problems and form.is_valid():
        upload = form.cleaned_data["subjects"]
        params = build_params(form.cleaned_data, upload.name)
        try:
            digest, problems = (
                _build_inline(request.user, upload, params) if upload.size <= BUILD_INLINE_MAX_BYTES else (None, [])
            )
            if digest is not None:
                return redirect("researcher:build-preview", digest=digest)
            if not problems:
                upload.seek(0)
                job, error, status = _queue(
                    request, kind=Job.Kind.STUDY_BUILD, params=params, uploads={"subjects": upload}
                )
                if job is not None:
                    return redirect("researcher:job", job_id=job.pk)
        except UploadError as exc:
            problems = [str(exc)]
        except InvalidStudyFile as exc:
            problems = [str(p) for p in exc.problems]
        except StashNotStored as exc:
            error, status = str(exc), 507
    if request.method == "POST" and status == 200:
        status = 400
    context = {
        "form": form,
        "problems": problems,
        "storage_error": error,
        "max_bytes": settings.UPLOAD_MAX_BYTES,
        "roles": StudyBuildForm(header=["column"])["role_0"],  # the picker's select, for the browser to copy
    }
    return render(request, "researcher/build.html", context, status=status)


def _build_inline(user, upload, params: dict) -> tuple[str | None, list[str]]:
    """Parse a small CSV here and build it if its table ``builds_inline``: (its digest, []), (None, the
    problems), or (None, []) for a table to build in a job. pandas is imported only on this path."""
    from research.study_build import build_and_stash, read_subjects
    from studies.builder import StudyBuildError, builds_inline

    frame = read_subjects(upload, params)
    if not builds_inline(frame):
        return None, []
    try:
        return build_and_stash(user=user, frame=frame, params=params), []
    except StudyBuildError as exc:
        return None, exc.problems


@login_required
@require_http_methods(["GET", "POST"])
def study_upload(request: HttpRequest) -> HttpResponse:
    """The upload form. A file of at most ``INLINE_MAX_BYTES`` is checked here (problems: 400, the preview:
    302); a larger one (up to ``STUDY_FILE_MAX_BYTES``) is stored and checked by a job (302 to its page)."""
    form = StudyUploadForm(request.POST or None, request.FILES or None)
    problems = []
    error, status = "", 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > INLINE_MAX_BYTES:
                check_upload_size(upload)
                job, error, status = _queue(request, kind=Job.Kind.STUDY_UPLOAD, uploads={"file": upload})
                if job is not None:
                    return redirect("researcher:job", job_id=job.pk)
            else:
                digest, raw, _ = read_upload(upload)
                stash_upload(user=request.user, digest=digest, raw=raw)
                return redirect("researcher:upload-preview", digest=digest)
        except InvalidStudyFile as exc:
            problems = exc.problems
        except StashNotStored as exc:
            error, status = str(exc), 507
    if request.method == "POST" and status == 200:
        status = 400
    context = {"form": form, "problems": problems, "storage_error": error, "max_bytes": settings.STUDY_FILE_MAX_BYTES}
    return render(request, "researcher/upload.html", context, status=status)


@login_required
@require_POST
def study_load_start(request: HttpRequest, digest: str) -> HttpResponse:
    """ "Load" / "Save" of a stashed file larger than ``INLINE_MAX_BYTES``: a load job (302 to its page); a
    small one, or a refusal (quota), goes back to its preview (``?from=build``: the builder's)."""
    preview = "researcher:build-preview" if request.GET.get("from") == "build" else "researcher:upload-preview"
    try:
        stashed_bytes(user=request.user, digest=digest)
    except StashedFileMissing:
        messages.error(request, "No such file: loaded already, expired, or never made. Upload or build it again.")
        return redirect("researcher:studies")
    if not stash_is_large(user=request.user, digest=digest):
        return redirect(preview, digest=digest)
    job, error, _ = _queue(request, kind=Job.Kind.STUDY_LOAD, params={"digest": digest})
    if job is None:
        messages.error(request, error)
        return redirect(preview, digest=digest)
    return redirect("researcher:job", job_id=job.pk)


class DesignCheckForm(forms.Form):
    """The builder preview's "Check the design": the planned number of participants."""

    participants = forms.IntegerField(
        min_value=int(PLAN_PARAMETERS["n"].low), max_value=int(PLAN_PARAMETERS["n"].high), initial=150
    )


@login_required
@require_POST
def study_build_design_check(request: HttpRequest, digest: str) -> HttpResponse:
    """ "Check the design" on the builder's preview: a design-check job (``runs.design_check``, off the request
    path) on the stashed file at the planned participants, split by the builder's stakeholder role (302 to the
    job's page); a refused number or the quota goes back to the preview with the reason."""
    try:
        stashed_bytes(user=request.user, digest=digest)
    except StashedFileMissing:
        messages.error(request, "No such file: saved already, expired, or never built. Build it again.")
        return redirect("researcher:build")
    form = DesignCheckForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Planned participants: {' '.join(str(e) for e in form.errors['participants'])}")
        return redirect("researcher:build-preview", digest=digest)
    params = {
        "digest": digest,
        "participants": form.cleaned_data["participants"],
        "by": list(BUILDER_BY),
        "replications": DESIGN_CHECK_REPLICATIONS,
    }
    job, error, _ = _queue(request, kind=Job.Kind.DESIGN_CHECK, params=params)
    if job is None:
        messages.error(request, error)
        return redirect("researcher:build-preview", digest=digest)
    return redirect("researcher:job", job_id=job.pk)
