"""A participant on a phone (390 px) whose age group is full is screened out with the quota's own
message (escaped, in the outcome region) and the screened-out Prolific code. With ``SCREENSHOT_DIR``
set, the page is photographed at 1280 and 390 px."""

import pytest

from participation.models import Participant
from tests.participation.test_format2_browser import _disagreement_spec, _next, _shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
MESSAGE = "Thank you! We already have <enough> people aged 30-44.\nPlease return your submission on Prolific."


def test_a_full_age_group_is_screened_out_with_the_quotas_message(browser, live_server, researcher):  # noqa: F811
    from studies import services
    from studies.study_file import validate_study

    spec = _disagreement_spec()
    bins = {"18-29": [18, 29], "30-44": [30, 44], "45+": [45, None]}
    spec["quotas"] = [{"question": "age", "bins": bins, "max": {"30-44": 1}, "message": MESSAGE}]
    spec["prolific"] = {"completion_codes": {"screened_out": "AGEFULL"}}
    study = services.study_load(spec=validate_study(spec), owner=researcher).study
    codes = []
    for name in ("first", "second"):
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={name}&STUDY_ID=s1&SESSION_ID={name}")
        with page.expect_navigation():
            page.get_by_role("button", name="I agree to take part").click()
        _next(page)
        page.get_by_label("Works in criminal justice").check()
        page.get_by_label("Your age in years").fill("35")
        page.get_by_role("group", name="I trust computer predictions.").get_by_label("Agree", exact=True).check()
        _next(page)
        codes.append(page.locator("#completion-code").all_inner_texts())
    assert codes == [[], ["AGEFULL"]]  # the first goes on to the task pages; the second is screened out
    message = page.locator("#outcome-message")
    assert "We already have <enough> people aged 30-44." in message.inner_text()
    assert "Please return your submission on Prolific." in message.inner_text()
    assert page.get_by_role("heading", level=1).inner_text() == "Thank you for your time"
    assert Participant.objects.get(external_id="second").quota_screened_out == "age = 30-44"
    _shoot(page, "quota-screened-out")
