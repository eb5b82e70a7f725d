"""The audit report in headless Chromium under the site's Content-Security-Policy: no CSP
violation in the console, every figure drawn, no horizontal scroll at phone width. Set
``REPORT_SCREENSHOTS=DIR`` to keep desktop and 390 px screenshots."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from runs.audit_parameters import AuditParameters
from runs.audit_runs import audit_run_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_as_alice(page, live_server, path: str) -> None:
    """Log in as the ``researcher`` fixture (alice) and land on ``path``."""
    page.goto(f"{live_server.url}/accounts/login/?next={path}")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-pass-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()


def test_audit_report_renders_under_the_csp(browser, live_server, demo_answered_by_12, tmp_path, settings):  # noqa: F811
    """The audit report at desktop and phone width: every figure drawn, the sections' menu, no CSP violation or
    script error; at desktop width its figures download as PNG and SVG (``check_downloads``)."""
    settings.REPORTS_DIR = tmp_path / "reports"
    subjects = tmp_path / "subjects.csv"
    call_command("generate_demo_audit", condition="arrests", out=str(subjects))
    audit_run_create(
        slug="effort-demo",
        subjects_file=subjects,
        out_dir=tmp_path / "audit",
        parameters=AuditParameters(n_resamples=20),
    )
    figures = (tmp_path / "audit" / "report.html").read_text().count("data-figure=")
    assert figures >= 3
    for page, width, shots in each_width(browser, live_server, "/researcher/studies/effort-demo/audit/report.html"):
        assert page.url.endswith("/audit/report.html")
        check_drawn(page, width, figures)
        if width > 1000:
            check_downloads(page, tmp_path)
        if shots:
            page.screenshot(path=str(shots / f"audit-report-{width}.png"), full_page=width > 1000)
            page.evaluate("window.scrollTo(0, 0)")
            page.locator(".report-nav-menu summary").click()
            page.screenshot(path=str(shots / f"audit-report-sections-menu-{width}.png"))
            page.locator(".chart-figure").nth(1).screenshot(path=str(shots / f"audit-figure-{width}.png"))


def each_width(browser, live_server, path: str) -> Iterator[tuple[Any, int, Path | None]]:  # noqa: F811
    """The report at ``path`` opened as alice at desktop and then (loaded again at that width) phone width:
    (page, width, the screenshot folder ``REPORT_SCREENSHOTS`` or None); after each, no console message names a
    CSP violation or an error."""
    shots = Path(os.environ["REPORT_SCREENSHOTS"]) if os.environ.get("REPORT_SCREENSHOTS") else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    page.on("pageerror", lambda e: messages.append(str(e)))
    open_as_alice(page, live_server, path)
    for width, height in ((1280, 900), (390, 844)):
        if width != 1280:
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"{live_server.url}{path}")
        yield page, width, shots
        violations = [m for m in messages if "Content Security Policy" in m or "Refused to" in m]
        assert violations == [], violations
        assert not [m for m in messages if "Error" in m], messages
        messages.clear()
    context.close()


def check_drawn(page, width: int, figures: int) -> None:
    """Every one of the ``figures`` drawn, the sections' nav bar shown, no horizontal scroll."""
    page.locator(".report-chart .main-svg").nth(figures - 1).wait_for(timeout=30000)
    assert page.locator(".report-chart .main-svg").count() >= figures
    assert page.get_by_role("navigation", name="Sections of the report").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    check_section_menu(page)


def check_section_menu(page) -> None:
    """The nav bar is one line inside the window; its "Sections" menu opens a list of every section whose
    links all lie inside the window, and following one closes the menu and lands on that section."""
    nav = page.locator(".report-nav")
    assert nav.evaluate("n => n.scrollWidth <= n.clientWidth + 1 && n.getBoundingClientRect().height < 60")
    sections = page.locator("main section.report-section[id]").count()
    page.locator(".report-nav-menu summary").click()
    links = page.locator(".report-nav-menu ol a")
    assert links.count() == sections > 0 and links.last.is_visible()
    inside = "a => { const r = a.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth + 1; }"
    assert all(inside_ for inside_ in links.evaluate_all(f"links => links.map({inside})"))
    target = links.nth(sections - 1).get_attribute("href")
    links.nth(sections - 1).click()
    assert not page.locator(".report-nav-menu").evaluate("d => d.open")
    assert page.evaluate("location.hash") == target
    heading_top = page.locator(f"{target}").evaluate("e => e.getBoundingClientRect().top")
    assert heading_top >= nav.evaluate("n => n.getBoundingClientRect().bottom") - 1  # not under the bar


def check_downloads(page, folder: Path) -> None:
    """A figure is drawn, and its PNG and SVG buttons (wired by figures.js, no inline handler) each start a download
    of an image file named after the report and the figure; the modebar carries the added SVG button."""
    figure = page.locator(".chart-figure").first
    figure.locator(".main-svg").first.wait_for(timeout=20000)
    assert page.locator(".provenance").get_by_text("Calibration used").is_visible()
    for fmt, head in (("png", b"\x89PNG"), ("svg", b"<svg")):
        with page.expect_download(timeout=20000) as info:
            figure.locator(f"button[data-download={fmt}]").click()
        download = info.value
        assert download.suggested_filename.endswith(f"-figure.{fmt}"), download.suggested_filename
        assert download.suggested_filename.startswith("how-similar-are-these-people")
        target = folder / download.suggested_filename
        download.save_as(target)
        assert target.read_bytes()[:64].lstrip().startswith(head) or head in target.read_bytes()[:200]
    # the modebar carries the added SVG button beside Plotly's PNG camera
    figure.hover()
    titles = figure.locator(".modebar-btn").evaluate_all("buttons => buttons.map(b => b.dataset.title)")
    assert "Download plot as SVG" in titles and any(t.startswith("Download plot as a") for t in titles), titles


def test_in_group_figure_of_a_format_2_analysis(browser, live_server, researcher, tmp_path, settings):  # noqa: F811
    """The rater group x subject group figure (``in_group_rates``) of an agree and a rate block is drawn at desktop
    and phone width without horizontal scroll (``REPORT_SCREENSHOTS=DIR`` keeps it)."""
    from tests.runs.test_design_analysis_runs import load_design_study

    settings.REPORTS_DIR = tmp_path / "reports"
    load_design_study(researcher)
    call_command("analyze_study", "design", out=str(tmp_path / "design"), resamples=20, by=["role"])  # figure: means
    heading = "Block judge (agree): rater group x subject group: each rater group's mean per subject group"
    assert heading in (tmp_path / "design" / "report.html").read_text().replace("&#x27;", "'")
    shots = os.environ.get("REPORT_SCREENSHOTS")
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        open_as_alice(page, live_server, "/researcher/studies/design/report/report.html")
        for block in ("judge (agree)", "score (rate)"):
            name = f"Block {block}: rater group x subject group: each rater group's mean per subject group"
            section = page.locator("section", has=page.get_by_role("heading", name=name, exact=True)).first
            section.locator(".main-svg").first.wait_for(timeout=20000)
            section.scroll_into_view_if_needed()
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                section.screenshot(path=str(Path(shots) / f"in-group-{block.split()[0]}-{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        assert errors == [], errors
        context.close()


def test_the_analysis_report_of_a_converted_study(browser, live_server, demo_answered_by_12, tmp_path, settings):  # noqa: F811
    """The demo (a format 1 file, stored as its conversion) analysed without --by: its report, linked from the
    dashboard, draws the effort analysis's three figures first, fits a phone's width and breaks no CSP rule."""
    from runs.analysis_runs import analysis_run_create

    settings.REPORTS_DIR = tmp_path / "reports"
    analysis_run_create(slug="effort-demo", out_dir=tmp_path / "analysis", seed=1, n_resamples=20)
    figures = (tmp_path / "analysis" / "report.html").read_text().count("data-figure=")
    assert figures >= 3
    for page, width, shots in each_width(browser, live_server, "/researcher/studies/effort-demo/report/report.html"):
        check_drawn(page, width, figures)
        headings = page.locator("main h2").all_inner_texts()
        assert headings[1].startswith("Calibration (alpha") and "Likert ratings per condition" in headings
        if shots:
            page.screenshot(path=str(shots / f"analysis-report-{width}.png"), full_page=width > 1000)
