"""Build a study from a CSV in the browser: the form (template and options as ``build_study`` names them;
its view, which builds small tables inline and queues a job for larger ones, is
``runs.study_file_views.study_build``), a preview of the built study (blocks, pool, items per participant,
strata, one profile as participants see it), the study file to download, and "Save" = loading it like an
uploaded study file (:mod:`research.study_upload`: stashed under its SHA-256 for this researcher,
``study_load``'s ownership rule)."""

import json

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from research.study_upload import StashedFileMissing, stash_is_large, stashed_bytes, stashed_preview
from research.study_upload_views import load_stashed_and_redirect
from tasks import BLOCK_TASKS

# build_study's templates as the registry lists them (``BlockTask.builder_template``, ``builder_description``)
TEMPLATE_CHOICES = {t.builder_template: t.builder_description for t in BLOCK_TASKS.values() if t.builder_template}


class StudyBuildForm(forms.Form):
    subjects = forms.FileField(label="Subjects (CSV, one row per person)")
    template = forms.ChoiceField(
        choices=list(TEMPLATE_CHOICES.items()), widget=forms.RadioSelect, initial="disagreement"
    )
    id_column = forms.CharField(label="Id column", max_length=200)
    label_column = forms.CharField(label="AI label column (0/1)", max_length=200, required=False)
    score_column = forms.CharField(label="AI score column (0 to 1)", max_length=200, required=False)
    group_columns = forms.CharField(
        label="Group columns", max_length=2000, required=False, help_text="Comma-separated, e.g. race, sex"
    )
    outcome_column = forms.CharField(
        label="Outcome column (0/1, not shown)",
        max_length=200,
        required=False,
        help_text="The true outcome, e.g. two_year_recid: the analysis reports error rates against it",
    )
    profile = forms.CharField(
        label="Profile text",
        max_length=5000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="With {column} placeholders, e.g. “A {sex} aged {age}.” Empty: a table of the columns.",
    )
    per_participant = forms.IntegerField(label="Items per participant", min_value=1, required=False)
    stratify_by = forms.CharField(label="Stratify by column", max_length=200, required=False)
    decision = forms.CharField(
        label="Decision",
        max_length=200,
        required=False,
        help_text="Choice and feature fairness: the decision their questions name (empty: the template's default)",
    )
    mix = forms.CharField(
        label="Item mix",
        max_length=200,
        required=False,
        help_text="Comparable, choice: near, far, random; triplet: near-far, near-random, random (comma-separated)",
    )
    slug = forms.CharField(max_length=60, required=False, help_text="Default: from the file name and template")
    title = forms.CharField(max_length=200, required=False)
    completion_code = forms.CharField(max_length=64, required=False)


def build_params(data: dict, name: str) -> dict:
    """The builder form's cleaned data as ``BuildOptions`` fields (JSON, a job's params) plus the file's ``name``."""
    return {
        "template": data["template"],
        "id_column": data["id_column"].strip(),
        "label_column": data["label_column"].strip() or None,
        "score_column": data["score_column"].strip() or None,
        "group_columns": [c.strip() for c in data["group_columns"].split(",") if c.strip()],
        "outcome_column": data["outcome_column"].strip() or None,
        "profile": data["profile"] or None,
        "per_participant": data["per_participant"],
        "stratify_by": data["stratify_by"].strip() or None,
        "slug": data["slug"].strip() or None,
        "title": data["title"].strip() or None,
        "completion_code": data["completion_code"].strip() or None,
        "decision": data["decision"].strip() or None,
        "mix": [r.strip() for r in data["mix"].split(",") if r.strip()],
        "name": name,
    }


@login_required
@require_http_methods(["GET", "POST"])
def study_build_preview(request: HttpRequest, digest: str) -> HttpResponse:
    """The built study's summary (stored with the stash by ``research.study_build.build_and_stash``); "Save"
    loads it here when the file is small, and queues a load job (``researcher:study-load``) when it is larger
    than ``research.study_upload.INLINE_MAX_BYTES``."""
    try:
        stashed_bytes(user=request.user, digest=digest)  # still there, intact
        summary = stashed_preview(user=request.user, digest=digest, kind="build")
        if summary is None:
            raise StashedFileMissing(digest)
    except StashedFileMissing as exc:
        raise Http404("No such study: saved already, expired, or never built. Build it again.") from exc
    large = stash_is_large(user=request.user, digest=digest)
    if request.method == "POST" and not large and (loaded := load_stashed_and_redirect(request, digest)) is not None:
        return loaded
    context = {
        "summary": summary,
        "digest": digest,
        "load_url": reverse("researcher:study-load", args=[digest]) + "?from=build" if large else "",
    }
    return render(request, "researcher/build_preview.html", context)


@login_required
@require_GET
def study_build_download(request: HttpRequest, digest: str) -> HttpResponse:
    """The built study file, to edit and upload (or load with ``load_study``)."""
    try:
        raw = stashed_bytes(user=request.user, digest=digest)
    except StashedFileMissing as exc:
        raise Http404("No such study: saved already, expired, or never built.") from exc
    slug = json.loads(raw)["slug"]  # validated when stashed; the slug pattern is safe in a file name
    response = HttpResponse(raw, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{slug}.json"'
    return response
