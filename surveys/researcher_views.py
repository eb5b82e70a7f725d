"""The researcher's pages: study list, dashboard and export downloads (login required; a
researcher sees only the studies they own or that are shared with them)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from surveys.dashboard import summarise
from surveys.export import TABLES, export_tables, table_to_csv, table_to_json
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
            "start_url": start_url,
            "prolific_url": start_url + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
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
