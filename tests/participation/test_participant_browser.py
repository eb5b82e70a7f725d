"""The fair-score page in Chromium at 390 px: "Accept the AI's score" disables and clears "Your risk score",
"Correct it" enables it again; the page fits the phone and loads no Plotly when its pool has no chart."""

import re

import pytest

from tests.participation.test_format2_browser import researcher_page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_accepting_the_ai_score_disables_and_clears_the_score_box_in_chromium(
    browser,  # noqa: F811
    live_server,
    researcher,
    format2_study,
):
    page = researcher_page(browser, live_server.url)
    page.goto(f"{live_server.url}/researcher/studies/{format2_study.slug}/v{format2_study.version}/preview/10/")
    box = page.get_by_label(re.compile(r"^Your risk score for \w+ A \(0-100\)$"))
    box.fill("55")
    page.get_by_label("Accept the AI's score").check()
    assert box.is_disabled() and box.input_value() == ""
    page.get_by_label("Correct it with my own score").check()
    assert box.is_enabled()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.evaluate("typeof window.Plotly") == "undefined"  # this pool has no chart: no Plotly loaded
