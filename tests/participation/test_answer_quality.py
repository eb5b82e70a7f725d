"""Answer quality measured with scripted clients (README "Answer quality"): bots that answer at machine
speed over HTTP (no JavaScript: their signals are unknown) or in a browser that fills text without typing
and pastes generated text, and careful human-like browser participants (Playwright, human typing delays,
a few seconds per page). At least 95% of the bots and at most 2% of the human-like participants are
flagged; the signals stored for a human-like page match what was typed."""

import pytest

from participation.loadclient import HTTPParticipant
from participation.models import PageVisit, Participant
from research.export import export_tables
from tests.participation.test_format2_browser import _disagreement_spec
from tests.surveys.test_e2e_browser import browser  # noqa: F401 (the fixture)

COMMENT = "I think the decision should depend on the facts of the case."
PASTED = "As an AI language model, I believe fairness requires careful consideration. " * 4
CHECKS = {"check": "Blue"}


@pytest.fixture
def mini_study(db, researcher):
    from studies import services
    from studies.study_file import validate_study

    return services.study_load(spec=validate_study(_disagreement_spec()), owner=researcher).study


def _flagged(slug: str) -> dict[str, set[str]]:
    people = export_tables(slug).participants
    return {row.participant_id: set(filter(None, row.quality_flags.split(";"))) for row in people.itertuples()}


@pytest.mark.django_db
def test_bots_answering_at_machine_speed_are_flagged(client, mini_study, settings):
    bots = 40
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = bots  # one address for every bot here
    for number in range(bots):
        client.cookies.clear()
        client.get(f"/s/{mini_study.slug}/?participant_label=bot-{number}")
        client.post(f"/s/{mini_study.slug}/consent/", {"decision": "accept"})
        bot = HTTPParticipant(0, f"bot-{number}", CHECKS)
        participant = Participant.objects.get(external_id=f"bot-{number}")
        while participant.status == Participant.Status.ACTIVE:
            html = client.get(f"/s/{mini_study.slug}/page/").content.decode()
            client.post(f"/s/{mini_study.slug}/page/", bot.answer(participant.plan[participant.position]["key"], html))
            participant.refresh_from_db()
        assert participant.status == Participant.Status.COMPLETED
    flags = _flagged(mini_study.slug)
    assert sum("fast" in f for f in flags.values()) >= 0.95 * bots
    quality = export_tables(mini_study.slug).quality
    assert quality[quality["rule"] == "pasted"]["flagged"].isna().all()  # no JavaScript: unknown, not suspicious


def _answer(page, *, human: bool, paste: bool = False) -> None:
    """Answer the current page of the mini study; a human-like participant reads for a few seconds and
    types with delays, a browser bot fills the fields at once (and pastes its text with ``paste``)."""
    if human:
        page.wait_for_timeout(2300)
    if page.get_by_label("Anything else?").count():
        page.get_by_label("Works in criminal justice").check()
        page.get_by_role("group", name="I trust computer predictions.").get_by_label("Agree", exact=True).check()
        comment = page.get_by_label("Anything else?")
        if human:
            page.get_by_label("Your age in years").click()
            page.keyboard.type("44", delay=90)
            comment.click()
            page.keyboard.type(COMMENT, delay=25)
        else:
            page.get_by_label("Your age in years").fill("44")
            comment.fill(PASTED)
        if paste:
            comment.evaluate(
                """(el, text) => { const data = new DataTransfer(); data.setData("text/plain", text);
                el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true})); }""",
                PASTED,
            )
    elif page.get_by_label("Yes, I agree").count():
        page.get_by_label("Yes, I agree").check()
        page.get_by_role("group", name="How confident are you?").get_by_label("Very").check()
        page.get_by_label("What percentage of other participants").fill("65")
    elif page.get_by_label("Blue").count():
        page.get_by_label("Blue").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Next").or_(page.get_by_role("button", name="Start")).click()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_human_like_participants_pass_and_browser_bots_are_flagged(browser, live_server, mini_study):  # noqa: F811
    people = {"human-1": True, "human-2": True, "human-3": True, "bot-paster": False, "bot-filler": False}
    for label, human in people.items():
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{live_server.url}/s/{mini_study.slug}/?participant_label={label}")
        assert page.locator("#signals-notice").is_visible()  # the consent page says what is recorded
        with page.expect_navigation():
            page.get_by_role("button", name="I agree to take part").click()
        while "/done/" not in page.url:
            _answer(page, human=human, paste=label == "bot-paster")
        page.context.close()
    pseudonyms = {str(p.pseudonym): p.external_id for p in Participant.objects.filter(study=mini_study)}
    flags = {pseudonyms[pid]: found for pid, found in _flagged(mini_study.slug).items()}
    assert all(not flags[label] for label, human in people.items() if human), flags
    assert flags["bot-paster"] == {"fast", "pasted"} and flags["bot-filler"] == {"fast", "untyped"}, flags

    about = PageVisit.objects.get(participant__external_id="human-1", page="about")
    assert about.text_chars == len(COMMENT) and about.keystrokes >= len(COMMENT) and about.pastes == 0
    assert about.typing_ms > 0 and about.time_on_page_ms >= 2300 and about.focus_losses == 0
    pasted = PageVisit.objects.get(participant__external_id="bot-paster", page="about")
    assert pasted.pastes == 1 and pasted.pasted_chars == len(PASTED) and pasted.keystrokes == 0
