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


# What a column of the subjects CSV is, as the builder's column picker offers it: role -> label
COLUMN_ROLES = {
    "hidden": "Kept hidden (not in the study)",
    "feature": "Shown as a feature",
    "group": "Group (shown)",
    "id": "Id",
    "label": "AI label (0/1, not shown)",
    "score": "AI score (0 to 1, not shown)",
    "outcome": "Outcome (0/1, not shown)",
    "model_label": "Another model's label (0/1, not shown; trade-off)",
}
_SINGLE_ROLES = {"id": "id_column", "label": "label_column", "score": "score_column", "outcome": "outcome_column"}


class StudyBuildForm(forms.Form):
    """The builder's options; with the CSV's ``header``, one ``role_<i>`` field per column (the column picker:
    :data:`COLUMN_ROLES`) and the stratify-by choices; the browser fills the picker from the file it is given."""

    subjects = forms.FileField(label="Subjects (CSV, one row per person)")
    template = forms.ChoiceField(
        choices=list(TEMPLATE_CHOICES.items()), widget=forms.RadioSelect, initial="disagreement"
    )
    profile = forms.CharField(
        label="Profile text",
        max_length=5000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="With {column} placeholders of features and groups, e.g. “A {sex} aged {age}.” Empty: a table "
        "of the features and groups.",
    )
    per_participant = forms.IntegerField(label="Items per participant", min_value=1, required=False)
    stratify_by = forms.ChoiceField(label="Stratify by column", required=False, choices=[("", "No strata")])
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
    allow_tie = forms.BooleanField(
        label="Allow a tie",
        required=False,
        help_text="Choice: an “Equally / cannot decide” answer beside the two people (analysed as Davidson ties)",
    )
    slug = forms.CharField(max_length=60, required=False, help_text="Default: from the file name and template")
    title = forms.CharField(max_length=200, required=False)
    completion_code = forms.CharField(max_length=64, required=False)

    def __init__(self, *args, header: list[str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.header = list(header or [])
        stratify = self.fields["stratify_by"]
        assert isinstance(stratify, forms.ChoiceField)
        stratify.choices = [("", "No strata"), *((c, c) for c in self.header)]
        for i, column in enumerate(self.header):
            self.fields[f"role_{i}"] = forms.ChoiceField(
                label=column, choices=list(COLUMN_ROLES.items()), required=False, initial="hidden"
            )

    def role_fields(self) -> list:
        """The column picker's bound fields, in the CSV's order."""
        return [self[f"role_{i}"] for i in range(len(self.header))]

    def other_fields(self) -> list:
        """Every bound field but the picker's."""
        return [field for field in self if not field.name.startswith("role_")]

    def clean(self) -> dict:
        data = super().clean() or {}
        if not self.header:
            return data
        if not any(self.data.get(f"role_{i}") for i in range(len(self.header))):
            raise forms.ValidationError(
                "Mark what each column is in the column picker (it lists the file's columns), then choose the file "
                "again and build."
            )
        roles = {column: data.get(f"role_{i}") or "hidden" for i, column in enumerate(self.header)}
        for role in _SINGLE_ROLES:
            named = [column for column, r in roles.items() if r == role]
            if len(named) > 1:
                self.add_error(
                    None, f"Only one column can be the {COLUMN_ROLES[role].split(' (')[0]}: {', '.join(named)}"
                )
        if "id" not in roles.values():
            self.add_error(None, "Mark one column as the Id")
        data["roles"] = roles
        return data


def build_params(data: dict, name: str) -> dict:
    """The builder form's cleaned data as ``BuildOptions`` fields (JSON, a job's params) plus the file's ``name``:
    the picker's roles become the column options (features and groups in the CSV's order)."""
    roles = data["roles"]
    single = {option: next((c for c, r in roles.items() if r == role), None) for role, option in _SINGLE_ROLES.items()}
    return {
        "template": data["template"],
        **single,
        "group_columns": [c for c, r in roles.items() if r == "group"],
        "model_label_columns": [c for c, r in roles.items() if r == "model_label"],
        "feature_columns": [c for c, r in roles.items() if r == "feature"],
        "profile": data["profile"] or None,
        "per_participant": data["per_participant"],
        "stratify_by": data["stratify_by"] or None,
        "slug": data["slug"].strip() or None,
        "title": data["title"].strip() or None,
        "completion_code": data["completion_code"].strip() or None,
        "decision": data["decision"].strip() or None,
        "mix": [r.strip() for r in data["mix"].split(",") if r.strip()],
        "allow_tie": bool(data.get("allow_tie")),
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
