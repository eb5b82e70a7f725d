"""Participants take format 2 studies in Chromium at phone width (390 px), with the plans the real
assignment draws (tickets, sampled and stratified items, randomised order): a small disagreement study
(consent, instructions, a stakeholder questionnaire with an out-of-range age refused, agree pages with a
profile card, confidence and the BTS follow-up, an attention check, the completion code) and the
bundled disagreement template (20 of 200 defendants, 10 per race). Then a researcher opens the preview
of the other task pages. With ``SCREENSHOT_DIR`` set, every page kind is also photographed at 1280
and 390 px."""

import json
import os
from pathlib import Path

import pytest

from participation.models import Answer, Participant
from tests.participation.format2_helpers import EXAMPLE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("SCREENSHOT_DIR")


def _disagreement_spec() -> dict:
    spec = json.loads(EXAMPLE.read_text())
    spec["slug"] = "disagreement-mini"
    spec["pools"][0]["subjects"] = spec["pools"][0]["subjects"][:2]
    keep = ("intro", "about", "judge", "check")
    spec["blocks"] = [b for b in spec["blocks"] if b["key"] in keep]
    del spec["blocks"][2]["assignment"]
    return spec


@pytest.fixture
def mini_study(db, researcher):
    from studies import services
    from studies.study_file import validate_study

    return services.study_load(spec=validate_study(_disagreement_spec()), owner=researcher).study


def _shoot(page, name: str) -> None:
    if not SHOTS:
        return
    width = page.viewport_size["width"]
    for shot_width in (1280, 390):
        page.set_viewport_size({"width": shot_width, "height": 900})
        page.screenshot(path=str(Path(SHOTS) / f"{name}-{shot_width}.png"), full_page=True)
    page.set_viewport_size({"width": width, "height": 844})


def _next(page) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name="Next").or_(page.get_by_role("button", name="Start")).click()


def test_participant_takes_a_format2_disagreement_study_on_a_phone(browser, live_server, mini_study):  # noqa: F811
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{live_server.url}/s/{mini_study.slug}/?participant_label=phone-person")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    assert "read short profiles" in page.content()
    _next(page)

    # questionnaire: labels, fieldsets, a specific error for an out-of-range age
    _shoot(page, "questionnaire")
    page.get_by_label("Works in criminal justice").check()
    page.get_by_label("Your age in years").fill("12")
    page.get_by_role("group", name="I trust computer predictions.").get_by_label("Agree", exact=True).check()
    _next(page)
    assert page.get_by_role("alert").filter(has_text="Enter a whole number between 18 and 100.").count() == 1
    assert page.get_by_label("Works in criminal justice").is_checked()  # other answers are kept
    page.get_by_label("Your age in years").fill("44")
    page.get_by_label("Newspapers").check()
    _next(page)

    # agree pages (in this participant's drawn order): the profile card, the question, confidence, BTS
    subjects = mini_study.spec["pools"][0]["subjects"]
    for number in range(len(subjects)):
        text = page.locator(".profile-text").inner_text()
        assert any(text.startswith(_profile_start(subject)) for subject in subjects), text
        assert page.locator(".profile-table").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        if number == 0:
            _shoot(page, "agree")
        page.get_by_label("Yes, I agree").check()
        page.get_by_role("group", name="How confident are you?").get_by_label("Very").check()
        page.get_by_label("What percentage of other participants").fill("65")
        _next(page)

    # attention check, then the completion code
    _shoot(page, "attention")
    page.get_by_label("Blue").check()
    _next(page)
    assert page.locator("#completion-code").inner_text() == "C0DE2"
    _shoot(page, "done")

    participant = Participant.objects.get(external_id="phone-person")
    assert participant.status == Participant.Status.COMPLETED and participant.ticket == 0
    stored = {(a.question, a.number, a.text) for a in Answer.objects.filter(participant=participant)}
    assert ("about/age", 44.0, "") in stored and ("about/news", None, '["Newspapers"]') in stored
    assert {
        ("judge/d01/agree", 1, ""),
        ("judge/d02/confidence", 4, ""),
        ("judge/d02/prediction", 65, ""),
        ("attention/check", 1, "Blue"),
    } <= stored


def _profile_start(subject: dict) -> str:
    columns = {**subject["features"], **subject["groups"]}
    return f"The defendant is a {columns['sex']} aged {columns['age']}."


def test_participant_takes_the_bundled_disagreement_template_on_a_phone(browser, live_server, researcher):  # noqa: F811
    """The template's real plan: 20 sampled defendants (10 per race), each page's profile card matching the
    subject the plan names, answers stored under that subject."""
    from studies.services import study_load

    bundled = Path(__file__).resolve().parents[2] / "studies" / "bundled" / "disagreement_synthetic.json"
    study = study_load(spec=json.loads(bundled.read_text()), owner=researcher).study
    subjects = {s["id"]: s for s in study.spec["pools"][0]["subjects"]}
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=template-phone&STUDY_ID=s&SESSION_ID=t")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    participant = Participant.objects.get(external_id="template-phone")
    judged = [p["item"] for p in participant.plan if p.get("block") == "agree"]
    assert (
        len(judged) == 20 and sorted(subjects[i]["groups"]["race"] for i in judged) == ["Black"] * 10 + ["White"] * 10
    )
    _next(page)  # instructions
    page.get_by_label("Member of the public").check()
    page.get_by_label("35-44").check()
    page.get_by_label("Woman").check()
    _next(page)  # education is optional
    checks = {"attention_1": "Somewhat", "attention_2": "Blue"}
    for step in participant.plan[2:]:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, step["key"]
        if step["kind"] == "attention":
            page.get_by_label(checks[step["key"]], exact=True).check()
        else:
            assert page.locator(".profile-text").inner_text().startswith(_profile_start(subjects[step["item"]]))
            page.get_by_label("No, I disagree").check()
            page.get_by_role("group", name="How confident are you?").get_by_label("Moderately").check()
            page.get_by_label("What percentage of other participants").fill("40")
        _next(page)
    assert page.locator("#completion-code").inner_text() == "DISAGREE-DEMO"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    agreed = Answer.objects.filter(participant=participant, measure="agree")
    assert sorted(agreed.values_list("subject_key", flat=True)) == sorted(judged)
    assert set(agreed.values_list("number", flat=True)) == {0.0}


def researcher_page(browser, base_url: str):  # noqa: F811
    """A 390 px page logged in as the ``researcher`` fixture (alice)."""
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-pass-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    return page


def test_researcher_previews_the_other_task_pages(browser, live_server, researcher, format2_study):  # noqa: F811
    page = researcher_page(browser, live_server.url)
    base = f"{live_server.url}/researcher/studies/{format2_study.slug}/v{format2_study.version}/preview/"
    for number, name in ((5, "rate"), (6, "pair_comparable"), (9, "pair_distance"), (10, "fair_score")):
        page.goto(f"{base}{number}/")
        assert "Nothing entered here is stored." in page.content()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
        _shoot(page, name)


# The choose, triplet and feature_fairness task blocks (the bundled disagreement study's pages around each):
# the block's key and the measure every one of its pages stores.
NEW_KINDS = {"choose": ("loan", "choice"), "triplet": ("alike", "closer"), "feature_fairness": ("uses", "fair_use")}


def _answer_every_question(page) -> None:
    """Answer a page as a person would: the first option of every choice (radio group) and a mid-range
    number in every number field, through the page's own controls."""
    names = page.eval_on_selector_all(
        "input[type=radio]", "els => [...new Set(els.filter(e => !e.disabled).map(e => e.name))]"
    )
    for name in names:
        page.locator(f'input[type=radio][name="{name}"]').first.check()
    for field in page.locator("input[type=number]").all():
        low, high = field.get_attribute("min") or "0", field.get_attribute("max") or "100"
        field.fill(str((int(float(low)) + int(float(high))) // 2))


@pytest.mark.parametrize("kind", sorted(NEW_KINDS))
def test_participant_takes_each_new_page_kind_on_a_phone(browser, live_server, researcher, kind):  # noqa: F811
    """Issue 21's page kinds in Chromium at 390 px: every page of a study with a choose, triplet or
    feature_fairness block fits the phone, takes its answers and stores one per item of the block."""
    from studies.services import study_load
    from tests.tasks.test_choose import choice_spec
    from tests.tasks.test_feature_fairness import feature_spec
    from tests.tasks.test_triplet import triplet_spec

    spec = {"choose": choice_spec, "triplet": triplet_spec, "feature_fairness": feature_spec}[kind]()
    study = study_load(spec=spec, owner=researcher).study
    block, measure = NEW_KINDS[kind]
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=phone-{kind}&STUDY_ID=s&SESSION_ID=t")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    participant = Participant.objects.get(external_id=f"phone-{kind}")
    items = [p for p in participant.plan if p.get("block") == block]
    assert items, "the plan has pages of the block"
    for step in participant.plan:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, step["key"]
        if step.get("block") == block and step is items[0]:
            _shoot(page, kind)
        _answer_every_question(page)
        _next(page)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    stored = Answer.objects.filter(participant=participant, measure=measure)
    assert stored.count() == len(items) and all(a.number is not None for a in stored)
