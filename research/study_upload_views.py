"""Upload a study file in the browser: the form, the validation errors (path and rule), the
preview against the current version, and "Load as new version" (``study_load``'s ownership rule:
another researcher's slug is refused; a new slug becomes a study owned by the uploader)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from research.study_upload import (
    StashedFileMissing,
    StashNotStored,
    load_stashed,
    read_upload,
    stash_upload,
    stashed_spec,
    study_preview,
)
from studies.services import StudyOwnedByOther
from studies.study_file import InvalidStudyFile

OUTCOMES = {
    "created": "created as a new study, owned by you",
    "unchanged": "unchanged: the same content is already loaded",
    "replaced": "updated in place (the previous version had no participants yet)",
    "new_version": "saved as a new version (the previous one has participants, who keep theirs)",
    "taken": "refused: the slug is another researcher's",
}


class StudyUploadForm(forms.Form):
    file = forms.FileField(label="Study file (JSON)")


@login_required
@require_http_methods(["GET", "POST"])
def study_upload(request: HttpRequest) -> HttpResponse:
    form = StudyUploadForm(request.POST or None, request.FILES or None)
    problems = []
    storage_error = ""
    if request.method == "POST" and form.is_valid():
        try:
            digest, raw = read_upload(form.cleaned_data["file"])
            stash_upload(user=request.user, digest=digest, raw=raw)
        except InvalidStudyFile as exc:
            problems = exc.problems
        except StashNotStored as exc:
            storage_error = str(exc)
        else:
            return redirect("researcher:upload-preview", digest=digest)
    status = (507 if storage_error else 400) if request.method == "POST" else 200
    context = {
        "form": form,
        "problems": problems,
        "storage_error": storage_error,
        "max_bytes": settings.STUDY_FILE_MAX_BYTES,
    }
    return render(request, "researcher/upload.html", context, status=status)


def load_stashed_and_redirect(request: HttpRequest, digest: str) -> HttpResponse | None:
    """Load the stashed file as the researcher (upload or builder preview's "save"): to the study's
    dashboard with a message, or None (with the refusal as a message) when the slug is another's."""
    try:
        result = load_stashed(user=request.user, digest=digest)
    except StudyOwnedByOther as exc:
        messages.error(request, str(exc))
        return None
    study = result.study
    messages.success(request, f"{study.slug} v{study.version}: {OUTCOMES[result.action]}.")
    return redirect("researcher:dashboard", slug=study.slug)


@login_required
@require_http_methods(["GET", "POST"])
def study_upload_preview(request: HttpRequest, digest: str) -> HttpResponse:
    try:
        spec = stashed_spec(user=request.user, digest=digest)
    except StashedFileMissing as exc:
        raise Http404("No such upload: loaded already, expired, or never made. Upload it again.") from exc
    if request.method == "POST" and (loaded := load_stashed_and_redirect(request, digest)) is not None:
        return loaded
    preview = study_preview(user=request.user, digest=digest, spec=spec)
    return render(request, "researcher/upload_preview.html", {"preview": preview, "outcome": OUTCOMES[preview.outcome]})
