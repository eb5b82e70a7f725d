"""A report a command writes opens from disk: ``audit_models`` writes report.html with its styles,
Plotly and figure script in ``report-assets/`` beside it, and prints the file and the report's
address on the dashboard. Opened via file:// in headless Chromium with the network closed, nothing
fails to load and the figures are drawn; on the web the same relative addresses lead to the static
files. ``REPORT_SCREENSHOTS=DIR`` keeps a screenshot of the report opened from disk."""

import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from runs.models import AuditRun
from runs.report_assets import REPORT_ASSETS
from tests.runs.audit_inputs import demo_subjects_csv


@pytest.fixture
def audited(answered_demo, tmp_path, settings) -> tuple[Path, str]:
    """The demo study (answered, ``answered_demo``) audited by the command: the report's folder and what the
    command printed."""
    settings.REPORTS_DIR = tmp_path / "reports"
    settings.SITE_URL = "https://fairness.example.org"
    subjects = demo_subjects_csv(tmp_path / "subjects.csv")
    out = StringIO()
    audit = tmp_path / "audit"  # 2 resamples: the report's files and figures, not its intervals, are checked
    call_command("audit_models", study="effort-demo", subjects=str(subjects), out=str(audit), resamples=2, stdout=out)
    return tmp_path / "audit", out.getvalue()


@pytest.mark.slow
def test_the_command_prints_the_file_and_the_dashboard_address(audited, researcher):
    folder, printed = audited
    run = AuditRun.objects.get()
    assert f"report: {folder / 'report.html'}\n" in printed
    assert f"on the dashboard: https://fairness.example.org/researcher/runs/audit/{run.pk}/report.html\n" in printed
    html = (folder / "report.html").read_text()
    assert '<script src="report-assets/vendor/plotly.min.js"></script>' in html and "/static/" not in html
    for name in REPORT_ASSETS:
        assert (folder / "report-assets" / name).stat().st_size > 0
    client = Client()
    client.force_login(researcher)
    base = f"/researcher/runs/audit/{run.pk}"
    assert client.get(f"{base}/report.html").status_code == 200
    for name in REPORT_ASSETS:  # the stored report's relative addresses on the web: the static files
        response = client.get(f"{base}/report-assets/{name}")
        assert response.status_code == 302 and response["Location"] == f"/static/{name}"
    assert client.get(f"{base}/report-assets/surveys/../../settings.py").status_code == 404
    assert client.get(f"{base}/report-assets/admin/css/base.css").status_code == 404  # only the report's files


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_written_report_opens_from_disk_offline(browser, audited):  # noqa: F811
    folder, _ = audited
    figures = (folder / "report.html").read_text().count("data-figure=")
    assert figures >= 3
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    context.route("http*://**", lambda route: route.abort())  # no network at all
    page = context.new_page()
    failed: list[str] = []
    errors: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / "report.html").as_uri())
    page.locator(".report-chart .main-svg").nth(figures - 1).wait_for(timeout=30000)
    assert failed == [] and errors == []
    assert page.locator(".report-chart .main-svg").count() >= figures
    # the styles applied: the section nav is the stylesheet's sticky bar, not an unstyled list
    assert page.locator("nav.report-nav").evaluate("e => getComputedStyle(e).position") == "sticky"
    shots = os.environ.get("REPORT_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / "report-from-disk-1280.png"))
        page.locator(".chart-figure").first.screenshot(path=str(Path(shots) / "report-from-disk-figure.png"))
    context.close()
