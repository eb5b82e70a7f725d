"""Upload a study file in the browser: the form (its view, which checks small files inline and queues a
job for larger ones, is ``runs.study_file_views.study_upload``), the preview against the current version,
and "Load as new version" (``study_load``'s ownership rule: another researcher's slug is refused; a new slug
becomes a study owned by the uploader)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from research.study_upload import (
    OUTCOMES,
    StashedFileMissing,
    load_stashed,
    preview_record,
    stash_is_large,
    stashed_bytes,
    stashed_preview,
    stashed_spec,
    study_preview,
)
from studies.services import StudyOwnedByOther


class StudyUploadForm(forms.Form):
    file = forms.FileField(label="Study file (JSON)")


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
    """What loading the stashed file would do: computed here for a small file; for one larger than
    ``INLINE_MAX_BYTES`` the upload job's record, and "Load" queues a load job (``researcher:study-load``)."""
    large = stash_is_large(user=request.user, digest=digest)
    try:
        if large:
            stashed_bytes(user=request.user, digest=digest)  # still there, intact
            stored = stashed_preview(user=request.user, digest=digest, kind="upload")
            if stored is None:
                raise StashedFileMissing(digest)
            preview = stored
        else:
            spec = stashed_spec(user=request.user, digest=digest)
    except StashedFileMissing as exc:
        raise Http404("No such upload: loaded already, expired, or never made. Upload it again.") from exc
    if not large:
        if request.method == "POST" and (loaded := load_stashed_and_redirect(request, digest)) is not None:
            return loaded
        preview = preview_record(study_preview(user=request.user, digest=digest, spec=spec))
    context = {
        "preview": preview,
        "outcome": OUTCOMES[preview["outcome"]],
        "load_url": reverse("researcher:study-load", args=[digest]) if large else "",
    }
    return render(request, "researcher/upload_preview.html", context)
