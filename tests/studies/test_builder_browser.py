"""The study builder in Chromium: log in, build from a CSV with a mistake (its problem is listed), then a
good build and its preview, at 1280 px and 390 px: no horizontal scroll, no console or CSP error. Set
``BUILDER_SCREENSHOTS=DIR`` to keep the screenshots."""

import os
from pathlib import Path

import pytest

from studies.synthetic_defendants import PROFILE
from tests.conftest import ROOT
from tests.surveys.test_e2e_browser import browser  # noqa: F401 - the Chromium fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CSV = ROOT / "studies" / "bundled" / "synthetic_defendants.csv"


@pytest.mark.parametrize("width", [1280, 390])
def test_build_a_study_in_the_browser(browser, live_server, researcher, width):  # noqa: F811
    shots = os.environ.get("BUILDER_SCREENSHOTS")
    messages: list[str] = []
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.on("console", lambda m: messages.append(m.text))
    page.on("pageerror", lambda e: messages.append(str(e)))

    def check(name: str) -> None:
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"{name}-{width}.png"), full_page=True)

    page.goto(f"{live_server.url}/accounts/login/?next=/researcher/build/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-pass-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.set_input_files("#id_subjects", str(CSV))
    page.check("input[name=template][value=disagreement]")
    page.fill("#id_id_column", "id")
    page.fill("#id_label_column", "ai_label")
    page.fill("#id_group_columns", "race, sex")
    page.fill("#id_profile", PROFILE.replace("{age}", "{agee}"))
    page.fill("#id_per_participant", "20")
    page.fill("#id_stratify_by", "race")
    with page.expect_navigation():
        page.get_by_role("button", name="Build and preview").click()
    assert "placeholder {agee} is not a column of the CSV" in page.locator(".problems").inner_text()
    check("builder-errors")

    page.set_input_files("#id_subjects", str(CSV))
    page.fill("#id_profile", PROFILE)
    with page.expect_navigation():
        page.get_by_role("button", name="Build and preview").click()
    assert page.get_by_role("heading", name="Preview: Disagreement study: synthetic defendants").is_visible()
    assert "The defendant is a male aged 26." in page.locator(".card").inner_text()
    check("builder-preview")
    assert not [m for m in messages if "Content Security Policy" in m or "Error" in m], messages
