"""A researcher runs a study from the browser (headless Chromium, Playwright): log in, upload a
study file (first a broken one: its problems are listed), see the preview, load it, start an
analysis, follow its job page until it is done, open the report; then every researcher page has
no horizontal scroll at phone width and no CSP violation. Set ``DASHBOARD_SCREENSHOTS=DIR`` to keep
1280 px and 390 px screenshots (`make screenshots` keeps the docs' here)."""

import json
import os
from pathlib import Path

import pytest

from participation.simulate import simulate_participants
from runs.models import Job
from studies.models import Study
from tests.conftest import DEMO_FILE, run_jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_runs_a_study_from_the_browser(browser, live_server, researcher, tmp_path):  # noqa: F811
    spec = json.loads(DEMO_FILE.read_text())
    spec.update(slug="wave-one", title="Wave one: effort and fairness")
    good = tmp_path / "wave-one.json"
    good.write_text(json.dumps(spec, indent=2))
    broken = tmp_path / "broken.json"
    spec_broken = json.loads(good.read_text())
    spec_broken["conditions"][0]["subjects"][3]["risk_score"] = 1.5
    broken.write_text(json.dumps(spec_broken))
    shots = os.environ.get("DASHBOARD_SCREENSHOTS")
    messages: list[str] = []

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("console", lambda m: messages.append(m.text))
    page.on("pageerror", lambda e: messages.append(str(e)))

    def shoot(name: str) -> None:
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"{name}-1280.png"), full_page=True)

    page.goto(f"{live_server.url}/accounts/login/?next=/researcher/upload/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-pass-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()

    page.set_input_files("#id_file", str(broken))
    with page.expect_navigation():
        page.get_by_role("button", name="Check and preview").click()
    assert "conditions[0].subjects[3].risk_score: must be <= 1 (got 1.5)" in page.locator(".problems").inner_text()
    assert not Study.objects.exists()
    shoot("upload-errors")

    page.set_input_files("#id_file", str(good))
    with page.expect_navigation():
        page.get_by_role("button", name="Check and preview").click()
    assert page.get_by_role("heading", name="Preview: Wave one: effort and fairness").is_visible()
    assert "No study has this slug yet" in page.content()
    shoot("upload-preview")
    with page.expect_navigation():
        page.get_by_role("button", name="Load as new study").click()
    assert page.url.endswith("/researcher/studies/wave-one/")
    assert "wave-one v1: created as a new study, owned by you." in page.locator(".messages").inner_text()
    assert Study.objects.get(slug="wave-one").owner == researcher
    assert Study.objects.get(slug="wave-one").status == "draft"  # a study loaded from the web starts as a draft
    with page.expect_navigation():
        page.get_by_role("button", name="Go live").click()
    assert page.locator("#lifecycle-title").inner_text() == "Status: live"

    simulate_participants("wave-one", n=10, seed=4)  # participants take the study meanwhile
    page.reload()
    assert page.locator(".stat b").first.inner_text() == "10"
    page.locator(".chart .main-svg").first.wait_for(timeout=20000)
    shoot("dashboard")

    with page.expect_navigation():
        page.get_by_role("link", name="Start an analysis or audit").click()
    page.fill("#analysis-resamples", "100")  # the least the form takes
    with page.expect_navigation():
        page.get_by_role("button", name="Start the analysis").click()
    assert page.locator("#job-status").inner_text() == "queued"
    job = Job.objects.get()
    assert (job.params["seed"], job.params["n_resamples"], job.params["include_pilot"]) == (1, 100, False)

    run_jobs()  # the worker runs the job; the page's script notices and shows the result
    job.refresh_from_db()
    page.get_by_role("link", name="Open the report").wait_for(timeout=20000)
    assert page.locator("#job-status").inner_text() == "succeeded"
    assert "analysis run" in page.locator("#job-log").inner_text()
    shoot("job")
    with page.expect_navigation():
        page.get_by_role("link", name="Open the report").click()
    assert "Wave one: effort and fairness: analysis (seed 1)" in page.title()
    page.locator(".report-chart .main-svg").first.wait_for(timeout=20000)

    page.goto(f"{live_server.url}/researcher/studies/wave-one/runs/")
    assert page.get_by_role("link", name=f"Analysis {job.result['analysis_run']}", exact=True).is_visible()
    assert page.locator("text=results.json").count() == 1
    shoot("runs")

    pages = [
        "/researcher/upload/",
        "/researcher/studies/wave-one/",
        "/researcher/studies/wave-one/start/",
        f"/researcher/jobs/{job.pk}/",
        "/researcher/studies/wave-one/runs/",
    ]
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    phone_page = phone.new_page()
    phone_page.on("console", lambda m: messages.append(m.text))
    phone_page.context.add_cookies(context.cookies())
    for i, path in enumerate(pages):
        phone_page.goto(f"{live_server.url}{path}")
        assert phone_page.evaluate("document.documentElement.scrollWidth") <= 391, path
        if shots:
            phone_page.screenshot(path=str(Path(shots) / f"phone-{i}-390.png"), full_page=True)
    violations = [m for m in messages if "Content Security Policy" in m or "Refused to" in m]
    assert violations == [], violations
    assert not [m for m in messages if "Error" in m], messages
    phone.close()
    context.close()
