"""The researcher's pages: study list, dashboard and export downloads (login required; a
researcher sees only the studies they own or that are shared with them)."""

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from surveys.dashboard import summarise
from surveys.export import TABLES, export_tables, table_to_csv, table_to_json
from surveys.models import AnalysisRun, AuditRun, Calibration
from surveys.selectors import can_view, latest_versions, studies_visible_to


@login_required
def study_list(request: HttpRequest) -> HttpResponse:
    return render(request, "researcher/study_list.html", {"studies": latest_versions(request.user)})


def _visible_versions(request: HttpRequest, slug: str):
    versions = list(studies_visible_to(request.user).filter(slug=slug).order_by("-version"))
    if not versions:
        raise Http404("No such study among yours.")
    return versions


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    versions = _visible_versions(request, slug)
    tables = export_tables(slug)
    summary = summarise(tables.participants)
    start_url = request.build_absolute_uri(reverse("surveys:start", args=[slug]))
    return render(
        request,
        "researcher/dashboard.html",
        {
            "study": versions[0],
            "versions": versions,
            "summary": summary,
            "status_table": summary.by_condition_status,
            "tables": TABLES,
            "latest_run": AnalysisRun.objects.filter(study__in=versions).first(),
            "latest_audit": AuditRun.objects.filter(study__in=versions).first(),
            "calibrations": Calibration.objects.filter(study__in=versions).order_by("kind", "condition", "-version"),
            "start_url": start_url,
            "prolific_url": start_url
            + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        },
    )


@login_required
def export_download(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    if table not in TABLES or fmt not in ("csv", "json") or not can_view(request.user, slug):
        raise Http404("No such export.")
    frame = getattr(export_tables(slug), table)
    body = table_to_csv(frame) if fmt == "csv" else table_to_json(frame)
    response = HttpResponse(body, content_type="text/csv; charset=utf-8" if fmt == "csv" else "application/json")
    response["Content-Disposition"] = f'attachment; filename="{slug}-{table}.{fmt}"'
    return response


# Reports load Plotly from the project's static files (vendor/plotly.min.js), not from their folder.
REPORT_FILES = {"report.html": "text/html; charset=utf-8", "results.json": "application/json"}


def _serve_run_file(run, filename: str) -> FileResponse:
    if run is None or filename not in REPORT_FILES and not filename.endswith(".csv"):
        raise Http404("No such report file.")
    path = Path(run.out_dir) / Path(filename).name
    if not path.is_file():
        raise Http404("The report file is missing on disk; run the command again.")
    return FileResponse(path.open("rb"), content_type=REPORT_FILES.get(filename, "text/csv"))


@login_required
def latest_report_file(request: HttpRequest, slug: str, filename: str) -> HttpResponse:
    """Files of the latest analysis report (report.html, results.json, CSV tables)."""
    versions = _visible_versions(request, slug)
    return _serve_run_file(AnalysisRun.objects.filter(study__in=versions).order_by("-created_at").first(), filename)


@login_required
def latest_audit_file(request: HttpRequest, slug: str, filename: str) -> HttpResponse:
    """Files of the latest model-audit report."""
    versions = _visible_versions(request, slug)
    return _serve_run_file(AuditRun.objects.filter(study__in=versions).order_by("-created_at").first(), filename)
