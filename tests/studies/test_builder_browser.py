"""The study builder in Chromium: log in, choose a CSV (the column picker lists its header), mark each
column, build with a mistake (its problem is listed, the choices kept), then a good build and its preview,
at 1280 px and 390 px: no horizontal scroll, no console or CSP error. Set ``BUILDER_SCREENSHOTS=DIR`` to
keep the screenshots."""

import os
from pathlib import Path

import pytest

from studies.synthetic_defendants import PROFILE
from tests.conftest import ROOT

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
    # the column picker lists the CSV's header; id is marked as the id, the rest start hidden
    labels = page.locator("#column-picker-table tbody th").all_inner_texts()
    assert labels == CSV.read_text().splitlines()[0].split(",")
    assert page.input_value("#id_role_0") == "id" and page.input_value("#id_role_1") == "hidden"
    roles = {"sex": "group", "race": "group", "ai_score": "score", "ai_label": "label"}
    for i, column in enumerate(labels[1:], start=1):
        page.select_option(f"#id_role_{i}", roles.get(column, "feature"))
    page.check("input[name=template][value=disagreement]")
    page.fill("#id_profile", PROFILE.replace("{age}", "{agee}"))
    page.fill("#id_per_participant", "20")
    page.select_option("#id_stratify_by", "race")
    with page.expect_navigation():
        page.get_by_role("button", name="Build and preview").click()
    assert "placeholder {agee} is not a column of the CSV" in page.locator(".problems").inner_text()
    check("builder-errors")

    assert page.input_value("#id_role_9") == "score"  # the choices are listed again after a failed build
    page.set_input_files("#id_subjects", str(CSV))
    assert page.input_value("#id_role_9") == "score"  # and kept when the file is chosen again
    page.fill("#id_profile", PROFILE)
    with page.expect_navigation():
        page.get_by_role("button", name="Build and preview").click()
    assert page.get_by_role("heading", name="Preview: Disagreement study: synthetic defendants").is_visible()
    assert "The defendant is a male aged 26." in page.locator(".card").inner_text()
    check("builder-preview")
    assert not [m for m in messages if "Content Security Policy" in m or "Error" in m], messages
