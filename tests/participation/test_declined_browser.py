"""A participant on a phone (390 px) who declines consent: from Prolific, the decline message, the
``declined`` code and the link back to Prolific; from a plain link, the message alone. With
``SCREENSHOT_DIR`` set, both pages are photographed at 1280 and 390 px."""

import pytest

from tests.participation.test_format2_browser import _disagreement_spec, _shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PROLIFIC = "https://app.prolific.com/submissions/complete?cc=NC4P8Z"


def test_declining_shows_the_declined_code_only_to_prolific_participants(browser, live_server, researcher):  # noqa: F811
    from studies import services
    from studies.study_file import validate_study

    spec = _disagreement_spec()
    spec["consent"]["decline_message"] = "Thank you. You chose not to take part.\nPlease return your submission."
    spec["prolific"] = {"completion_codes": {"declined": "NC4P8Z"}}
    study = services.study_load(spec=validate_study(spec), owner=researcher).study
    links = {"prolific": "PROLIFIC_PID=p1&STUDY_ID=ST1&SESSION_ID=S1", "plain": "participant_label=lab1"}
    for name, query in links.items():
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{live_server.url}/s/{study.slug}/?{query}")
        with page.expect_navigation():
            page.get_by_role("button", name="I do not agree").click()
        assert page.url.endswith(f"/s/{study.slug}/declined/")
        assert "Please return your submission." in page.locator("#outcome-message").inner_text()
        if name == "prolific":
            assert page.locator("#completion-code").inner_text() == "NC4P8Z"
            assert page.get_by_role("link", name="Go to Prolific").get_attribute("href") == PROLIFIC
        else:
            assert page.locator("#completion-code").count() == 0 and page.locator("#completion-link").count() == 0
        _shoot(page, f"declined-{name}")
