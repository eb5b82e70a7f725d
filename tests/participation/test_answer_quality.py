"""Answer quality measured with scripted clients (README "Answer quality"): bots that answer at machine
speed over HTTP (no JavaScript: their signals are unknown) or in a browser that fills text without typing
and pastes generated text, and careful human-like browser participants (Playwright, human typing delays,
a few seconds per page). At least 95% of the bots and at most 2% of the human-like participants are
flagged; the signals stored for a human-like page match what was typed."""

import pytest

from participation.models import PageVisit, Participant
from participation.page_bot import page_answers
from research.export import export_tables
from tests.participation.test_format2_browser import _disagreement_spec

COMMENT = "I think the decision should depend on the facts of the case."
PASTED = "As an AI language model, I believe fairness requires careful consideration. " * 4


@pytest.fixture
def mini_study(db, researcher):
    from studies import services
    from studies.study_file import validate_study

    return services.study_load(spec=validate_study(_disagreement_spec()), owner=researcher).study


def _flagged(slug: str) -> dict[str, set[str]]:
    people = export_tables(slug).participants
    return {row.participant_id: set(filter(None, row.quality_flags.split(";"))) for row in people.itertuples()}


@pytest.mark.slow
@pytest.mark.django_db
def test_bots_answering_at_machine_speed_are_flagged(client, mini_study, settings):
    bots = 40
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = bots  # one address for every bot here
    for number in range(bots):
        client.cookies.clear()
        client.get(f"/s/{mini_study.slug}/?participant_label=bot-{number}")
        client.post(f"/s/{mini_study.slug}/consent/", {"decision": "accept"})
        participant = Participant.objects.get(external_id=f"bot-{number}")
        while participant.status == Participant.Status.ACTIVE:
            client.get(f"/s/{mini_study.slug}/page/")
            client.post(f"/s/{mini_study.slug}/page/", page_answers(participant.pk))
            participant.refresh_from_db()
        assert participant.status == Participant.Status.COMPLETED
    flags = _flagged(mini_study.slug)
    assert sum("fast" in f for f in flags.values()) >= 0.95 * bots
    quality = export_tables(mini_study.slug).quality
    assert quality[quality["rule"] == "pasted"]["flagged"].isna().all()  # no JavaScript: unknown, not suspicious


def _answer(page, *, human: bool, paste: bool = False, text: str = COMMENT) -> None:
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
            page.keyboard.type(text, delay=25)
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
def test_human_like_participants_pass_and_browser_bots_are_flagged(browser, live_server, researcher):  # noqa: F811
    """The people here read for only 2.3 s a page (a real one would take longer: the default load of these
    pages is 4-11 s), so the study lowers ``hurried``'s load to what they spend, and they all come from this
    machine, so it counts no ``burst``; each writes their own comment, the bots one stock text
    (``duplicate_text``)."""
    from studies import services
    from studies.study_file import validate_study

    spec = _disagreement_spec() | {"quality": {"skim_wpm": 3000, "seconds_per_input": 0.1, "burst_size": 100}}
    study = services.study_load(spec=validate_study(spec), owner=researcher).study
    people = {"human-1": True, "human-2": True, "human-3": True, "bot-paster": False, "bot-filler": False}
    texts = {"human-2": "Past arrests say little about who someone is today.", "human-3": "Ask the person first."}
    for label, human in people.items():
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{live_server.url}/s/{study.slug}/?participant_label={label}")
        assert page.locator("#signals-notice").is_visible()  # the consent page says what is recorded
        with page.expect_navigation():
            page.get_by_role("button", name="I agree to take part").click()
        while "/done/" not in page.url:
            _answer(page, human=human, paste=label == "bot-paster", text=texts.get(label, COMMENT))
        page.context.close()
    pseudonyms = {str(p.pseudonym): p.external_id for p in Participant.objects.filter(study=study)}
    flags = {pseudonyms[pid]: found for pid, found in _flagged(study.slug).items()}
    assert all(not flags[label] for label, human in people.items() if human), flags
    server = {"fast", "duplicate_text"}
    assert flags["bot-paster"] - {"hurried"} == server | {"pasted"}, flags
    assert flags["bot-filler"] - {"hurried"} == server | {"untyped"}, flags

    about = PageVisit.objects.get(participant__external_id="human-1", page="about")
    assert about.text_chars == len(COMMENT) and about.keystrokes >= len(COMMENT) and about.pastes == 0
    assert about.typing_ms > 0 and about.time_on_page_ms >= 2300 and about.focus_losses == 0
    pasted = PageVisit.objects.get(participant__external_id="bot-paster", page="about")
    assert pasted.pastes == 1 and pasted.pasted_chars == len(PASTED) and pasted.keystrokes == 0


def _walk_paced(client, slug: str, label: str, seconds: float, signals: str, clock: list) -> Participant:
    """Take the mini study over HTTP on a virtual clock, ``seconds`` on every page, sending ``signals``."""
    from datetime import timedelta

    client.get(f"/s/{slug}/?participant_label={label}")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    while participant.status == Participant.Status.ACTIVE:
        client.get(f"/s/{slug}/page/")
        clock[0] += timedelta(seconds=seconds)
        data = page_answers(participant.pk)
        client.post(f"/s/{slug}/page/", {**data, "signals": signals})
        participant.refresh_from_db()
    return participant


@pytest.mark.django_db
def test_a_careful_http_bot_that_forges_its_signals_is_flagged_by_the_server(client, mini_study):
    """3 s a page passes the 2 s floor, and forged human signals pass the client-reported rules; the page's
    load (words shown, questions asked) and the server's clock do not."""
    from unittest import mock

    from django.utils import timezone

    clock = [timezone.now()]
    with mock.patch("django.utils.timezone.now", lambda: clock[0]):
        _walk_paced(client, mini_study.slug, "careful-bot", 3.0, "v1:25000,0,0,0,40,9000,40", clock)
        client.cookies.clear()
        _walk_paced(client, mini_study.slug, "reader", 40.0, "v1:39500,0,0,0,40,9000,40", clock)
    flags = {
        Participant.objects.get(pseudonym=pid).external_id: found for pid, found in _flagged(mini_study.slug).items()
    }
    assert flags["careful-bot"] >= {"hurried", "clock"} and "fast" not in flags["careful-bot"]
    assert not flags["careful-bot"] & {"pasted", "away", "untyped"}  # what the client wrote looks human
    assert flags["reader"] == set()
    pages = export_tables(mini_study.slug).pages
    assert (pages["words_shown"] > 0).all() and pages["inputs_shown"].notna().all()


@pytest.mark.django_db
def test_a_client_reported_flag_alone_excludes_no_one(client, researcher):
    """A study excluding by `pasted`: a participant at a reading pace who pasted into a text field is
    flagged, not excluded; the quality table says the rule is client-reported."""
    from unittest import mock

    from django.utils import timezone

    from studies import services
    from studies.study_file import validate_study
    from tests.participation.test_format2_browser import _disagreement_spec

    spec = _disagreement_spec() | {"quality": {"exclude_if": ["pasted", "hurried"]}}
    study = services.study_load(spec=validate_study(spec), owner=researcher).study
    clock = [timezone.now()]
    with mock.patch("django.utils.timezone.now", lambda: clock[0]):
        _walk_paced(client, study.slug, "paster", 40.0, "v1:39500,0,1,300,0,0,300", clock)
    tables = export_tables(study.slug)
    person = tables.participants.iloc[0]
    assert person["quality_flags"] == "pasted" and person["excluded"] == 0
    rows = tables.quality.set_index("rule")
    assert rows.loc["pasted", "source"] == "client" and rows.loc["hurried", "source"] == "server"


@pytest.mark.django_db
def test_arrivals_from_one_address_range_in_a_burst_are_flagged(mini_study, settings):
    from django.test import Client

    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 0
    for i in range(5):
        Client(REMOTE_ADDR=f"198.51.100.{i + 1}").get(f"/s/{mini_study.slug}/?participant_label=farm-{i}")
    Client(REMOTE_ADDR="198.51.101.1").get(f"/s/{mini_study.slug}/?participant_label=next-door")
    Client(REMOTE_ADDR="2001:db8:1:2::1").get(f"/s/{mini_study.slug}/?participant_label=v6-a")
    Client(REMOTE_ADDR="2001:db8:1:ff::9").get(f"/s/{mini_study.slug}/?participant_label=v6-b")  # the same /48
    ranges = dict(Participant.objects.values_list("external_id", "address_range"))
    assert len({ranges[f"farm-{i}"] for i in range(5)}) == 1 and ranges["farm-0"] != ranges["next-door"]
    assert ranges["v6-a"] == ranges["v6-b"] != "" and "198" not in ranges["farm-0"]  # a keyed hash, no address
    quality = export_tables(mini_study.slug).quality.set_index(["participant_id", "rule"])["measured"]
    who = {str(p.pseudonym): p.external_id for p in Participant.objects.all()}
    burst = {who[pid]: value for (pid, rule), value in quality.items() if rule == "burst"}
    assert burst["farm-3"] == 5 and burst["next-door"] == 1 and burst["v6-a"] == 2
    flags = _flagged(mini_study.slug)
    assert sum("burst" in flags[pid] for pid in who if who[pid].startswith("farm")) == 5
