"""A study's lifecycle (``studies.lifecycle``): the states and who may start the study in each
(the study link, pilot links, simulated participants; a polite page, in the participant's language,
and nothing stored), participants already in it going on, ``manage.py study_status`` and
``load_study --status``, a study loaded from the web starting as a draft, the dashboard's buttons
(owner and collaborators, POST with CSRF, logged), the API, and ``recruitment.target`` closing the
study (its validation, and simultaneous completions on PostgreSQL)."""

import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.pilot import pilot_token
from participation.services import page_submit, participant_arrive, participant_consent
from participation.simulate import simulate_participants
from studies.lifecycle import StudyNotOpen, study_set_status
from studies.models import Study, StudyStatusChange
from studies.services import study_load
from studies.study_file import InvalidStudyFile, validate_study
from tests.participation.format2_helpers import example_spec
from tests.surveys.test_researcher_dashboard import upload

SLUG = "format2-example"


def one_page_spec(**extra) -> dict:
    """The format 2 example cut down to its instructions page: consent, one page, completed."""
    spec = {k: v for k, v in example_spec().items() if k not in ("screening", "quotas", "shuffle")}
    spec["blocks"] = [b for b in spec["blocks"] if b["key"] == "intro"]
    return {**spec, **extra}


def consented(name: str, *, pilot: bool = False) -> Participant:
    participant = participant_arrive(study_slug=SLUG, external_id=name, pilot=pilot)[0]
    return participant_consent(participant_id=participant.pk, accept=True)


def complete(participant: Participant) -> str:
    return page_submit(enrolment=enrolment_of(participant), page_key="intro", answers=[]).status


def status() -> str:
    return Study.objects.get(slug=SLUG).status


@pytest.mark.parametrize(
    ("state", "heading", "german"),
    [
        ("draft", "This study has not started yet", "Diese Studie hat noch nicht begonnen"),
        ("pilot", "This study has not started yet", "Diese Studie hat noch nicht begonnen"),
        ("paused", "This study is paused", "Diese Studie ist pausiert"),
        ("closed", "This study is closed", "Diese Studie ist abgeschlossen"),
    ],
)
def test_a_study_that_is_not_live_turns_new_participants_away_politely(db, researcher, state, heading, german):
    study_load(spec=one_page_spec(), owner=researcher, status=state)
    response = Client().get(f"/s/{SLUG}/", {"PROLIFIC_PID": "new-person", "STUDY_ID": "S", "SESSION_ID": "X"})
    html = response.content.decode()
    assert response.status_code == 403 and f"<h1>{heading}</h1>" in html and "nothing about you was recorded" in html
    assert not Participant.objects.exists()  # nothing stored
    response = Client().get(f"/s/{SLUG}/", {"participant_label": "p2", "lang": "de"})
    assert f"<h1>{german}</h1>" in response.content.decode() and response["Content-Language"] == "de"
    with pytest.raises(StudyNotOpen):
        participant_arrive(study_slug=SLUG, external_id="by-service")
    assert not Participant.objects.exists()


@pytest.mark.parametrize(("state", "pilots"), [("draft", True), ("pilot", True), ("live", True), ("paused", False)])
def test_pilot_links_work_in_draft_pilot_and_live(db, researcher, state, pilots):
    study_load(spec=one_page_spec(), owner=researcher, status=state)
    response = Client().get(f"/s/{SLUG}/", {"pilot": pilot_token(SLUG)})
    assert (response.status_code == 200) is pilots
    assert Participant.objects.filter(pilot=True).count() == int(pilots)
    assert Client().get(f"/s/{SLUG}/", {"pilot": "forged"}).status_code == 403


def test_participants_who_started_may_finish_when_the_study_is_paused_or_closed(db, researcher):
    study_load(spec=one_page_spec(), owner=researcher)
    early = Client()
    early.get(f"/s/{SLUG}/", {"participant_label": "early"})  # arrived (consent page) while live
    started = consented("started")
    study_set_status(slug=SLUG, status="paused")
    assert early.post(f"/s/{SLUG}/consent/", {"decision": "accept"}).status_code == 302
    study_set_status(slug=SLUG, status="closed")
    assert early.post(f"/s/{SLUG}/page/", {"page_key": "intro"})["Location"] == f"/s/{SLUG}/done/"
    assert complete(started) == "completed"
    assert Client().get(f"/s/{SLUG}/", {"participant_label": "late"}).status_code == 403
    assert Participant.objects.filter(status="completed").count() == 2


def test_study_status_command_changes_and_logs_the_state(db, researcher):
    study_load(spec=one_page_spec(), owner=researcher)
    call_command("study_status", SLUG, "paused", "--by", researcher.username)
    assert status() == "paused"
    change = StudyStatusChange.objects.first()
    assert (change.old_status, change.new_status, change.changed_by) == ("live", "paused", researcher)
    assert change.reason == "manage.py study_status"
    call_command("study_status", SLUG, "paused")  # no change, nothing logged
    assert StudyStatusChange.objects.filter(new_status="paused").count() == 1
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("study_status", "nope", "live")
    with pytest.raises(CommandError, match="invalid choice: 'open'"):
        call_command("study_status", SLUG, "open")


def test_load_study_status_option_and_new_versions(db, researcher, tmp_path):
    import json

    path = tmp_path / "study.json"
    path.write_text(json.dumps(one_page_spec()))
    call_command("load_study", str(path))
    assert status() == "live"  # as before lifecycles
    consented("someone")
    call_command("study_status", SLUG, "closed")
    path.write_text(json.dumps(one_page_spec(title="Changed")))
    call_command("load_study", str(path))  # a new version keeps the study's state
    assert list(Study.objects.order_by("version").values_list("status", flat=True)) == ["closed", "closed"]
    call_command("load_study", str(path), "--status", "pilot")
    assert set(Study.objects.values_list("status", flat=True)) == {"pilot"}
    spec = {**one_page_spec(), "slug": "another"}
    path.write_text(json.dumps(spec))
    call_command("load_study", str(path), "--status", "draft")
    assert Study.objects.get(slug="another").status == "draft"


def test_a_study_loaded_from_the_web_starts_as_a_draft(db, researcher):
    client = Client()
    client.force_login(researcher)
    preview = upload(client, one_page_spec())["Location"]
    assert client.post(preview).status_code == 302
    assert status() == "draft"
    first = StudyStatusChange.objects.get()
    assert (first.old_status, first.new_status, first.changed_by) == ("", "draft", researcher)
    study_set_status(slug=SLUG, status="live")
    preview = upload(client, one_page_spec(title="Second"))["Location"]
    client.post(preview)
    assert status() == "live"  # a new file for a study keeps its state


def test_dashboard_buttons_post_with_csrf_for_owner_and_collaborators(db, researcher, other_researcher):
    study = study_load(spec=one_page_spec(), owner=researcher, status="draft").study
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    assert '<span class="state state-draft">draft</span>' in html
    assert 'value="live" class="primary">Go live</button>' in html and 'value="draft"' not in html
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    url = f"/researcher/studies/{SLUG}/status/"
    assert client.post(url, {"status": "pilot"}).status_code == 403  # no CSRF token
    assert client.post(url, {"status": "pilot", "csrfmiddlewaretoken": token}).status_code == 302
    assert status() == "pilot"
    stranger = Client()
    stranger.force_login(other_researcher)
    assert stranger.post(url, {"status": "live"}).status_code == 404 and status() == "pilot"
    study.collaborators.add(other_researcher)
    stranger.post(url, {"status": "live"})
    assert status() == "live"
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    assert f"<td>pilot → live</td><td>{other_researcher.username}</td><td>dashboard</td>" in html
    assert f"<td>draft → pilot</td><td>{researcher.username}</td>" in html
    response = client.post(url, {"status": "<b>open</b>", "csrfmiddlewaretoken": token}, follow=True)
    assert "Unknown state &#x27;&lt;b&gt;open&lt;/b&gt;&#x27;" in response.content.decode() and status() == "live"


def test_dashboard_says_who_may_still_finish(db, researcher):
    study_load(spec=one_page_spec(recruitment={"target": 5}), owner=researcher)
    consented("one")
    complete(consented("two"))
    study_set_status(slug=SLUG, status="paused")
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    assert "Recruitment target: <strong>1 of 5</strong>" in html
    assert "1 participant who started before the study was paused may still finish" in html


def test_api_reads_and_changes_the_state(db, researcher, other_researcher):
    study_load(spec=one_page_spec(), owner=researcher, status="draft")
    api = APIClient()
    api.force_authenticate(researcher)
    url = f"/api/studies/{SLUG}/status/"
    assert api.get(url).json()["status"] == "draft"
    assert api.get(f"/api/studies/{SLUG}/").json()["status"] == "draft"
    body = api.post(url, {"status": "live"}, format="json").json()
    assert body["status"] == "live" and body["history"][0] | {"changed_at": None} == {
        "old_status": "draft",
        "new_status": "live",
        "changed_by": researcher.username,
        "changed_at": None,
        "reason": "API",
    }
    assert api.post(url, {"status": "open"}, format="json").status_code == 400 and status() == "live"
    other = APIClient()
    other.force_authenticate(other_researcher)
    assert other.post(url, {"status": "closed"}, format="json").status_code == 404 and status() == "live"


@pytest.mark.parametrize(
    ("recruitment", "caps", "rule"),
    [
        ({"target": 0}, None, "recruitment.target: must be >= 1 (got 0)"),
        ({}, None, "recruitment: 'target' is required"),
        ({"target": 5, "goal": 1}, None, "recruitment: Additional properties are not allowed ('goal' was unexpected)"),
        ({"target": 502}, [500, 1], "recruitment.target: 502 is more than the conditions' caps allow (501)"),
    ],
)
def test_recruitment_target_validation_names_path_and_rule(recruitment, caps, rule):
    spec = one_page_spec(recruitment=recruitment)
    for condition, cap in zip(spec["conditions"], caps or [], strict=False):
        condition["cap"] = cap
    with pytest.raises(InvalidStudyFile) as error:
        validate_study(spec)
    assert rule in str(error.value)
    validate_study(one_page_spec(recruitment={"target": 501}))  # a condition without a cap: any target


def test_recruitment_target_closes_the_study(db, researcher):
    study_load(spec=one_page_spec(recruitment={"target": 2}), owner=researcher)
    first, second, third = consented("a"), consented("b"), consented("c")
    complete(consented("pilot", pilot=True))  # pilots do not count
    complete(first)
    assert status() == "live"
    complete(second)
    assert status() == "closed"
    closing = StudyStatusChange.objects.first()
    assert closing.changed_by is None and closing.reason == "recruitment target of 2 completed participants reached"
    assert complete(third) == "completed"  # who started may finish
    assert StudyStatusChange.objects.filter(new_status="closed").count() == 1
    with pytest.raises(StudyNotOpen):
        consented("d")


def test_simulated_participants_stop_when_the_target_closes_the_study(db, researcher):
    study_load(spec=one_page_spec(recruitment={"target": 3}), owner=researcher)
    report = simulate_participants(SLUG, n=10, seed=1, decline_rate=0)
    assert (report.created, report.completed, status()) == (3, 3, "closed")
    assert "closed" in report.stopped
    with pytest.raises(ValueError, match="only a live study takes new participants"):
        simulate_participants(SLUG, n=1, seed=2)


@pytest.mark.parametrize("state", ["draft", "pilot"])
def test_simulated_pilots_take_a_draft_or_pilot_study_and_stay_out_of_the_exports(db, researcher, state):
    from research.export import export_tables

    study_load(spec=one_page_spec(), owner=researcher, status=state)
    with pytest.raises(ValueError, match="only a live study takes new participants"):
        simulate_participants(SLUG, n=1, seed=2)
    report = simulate_participants(SLUG, n=4, seed=1, decline_rate=0, pilot=True)
    assert (report.created, report.completed, sum(report.by_condition.values())) == (4, 4, 4)
    pilots = Participant.objects.filter(study__slug=SLUG)
    assert pilots.count() == pilots.filter(pilot=True, status="completed").count() == 4
    assert export_tables(SLUG).participants.empty and len(export_tables(SLUG, include_pilot=True).participants) == 4
    call_command("study_status", SLUG, "paused")
    with pytest.raises(ValueError, match="the pilot link starts only a draft, pilot or live study"):
        simulate_participants(SLUG, n=1, seed=3, pilot=True)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_completions_close_the_study_at_its_target(researcher):
    """Twelve participants complete at once (threads released together) with a target of 12: the
    study closes exactly once. Without the lock each completion could see fewer than 12 committed
    and the study would stay open."""
    from tests.surveys.test_concurrency import _postgres_only, run_together

    _postgres_only()
    study_load(spec=one_page_spec(recruitment={"target": 12}), owner=researcher)
    people = [consented(f"rush-{i}") for i in range(12)]
    assert run_together([lambda p=p: complete(p) for p in people]) == ["completed"] * 12
    assert Participant.objects.filter(status="completed").count() == 12
    assert status() == "closed"
    assert StudyStatusChange.objects.filter(new_status="closed").count() == 1
    with pytest.raises(StudyNotOpen):
        participant_arrive(study_slug=SLUG, external_id="too-late")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_buttons_and_not_open_page_in_chromium(browser, live_server, researcher, tmp_path):  # noqa: F811
    """The dashboard's status buttons change the state in a real browser, and the study link then shows
    the 'not open' page; neither page scrolls sideways at 390 px. ``LIFECYCLE_SCREENSHOTS=DIR`` keeps
    1280 px and 390 px screenshots of both."""
    import os
    from pathlib import Path

    shots = Path(os.environ.get("LIFECYCLE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    researcher.set_password("pw-lifecycle-1")
    researcher.save()
    study_load(spec=one_page_spec(recruitment={"target": 40}), owner=researcher, status="draft")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next=/researcher/studies/{SLUG}/")
    page.fill("#id_username", researcher.username)
    page.fill("#id_password", "pw-lifecycle-1")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    for button in ("Go live", "Pause"):
        with page.expect_navigation():
            page.get_by_role("button", name=button).click()
    assert page.locator("#lifecycle-title").inner_text() == "Status: paused" and status() == "paused"
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.reload()  # the arrivals chart is laid out for the width it loads at
        page.locator(".lifecycle details summary").click()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.locator(".lifecycle").screenshot(path=str(shots / f"lifecycle-dashboard-{width}.png"))
        visitor = browser.new_page(viewport={"width": width, "height": 700})
        visitor.goto(f"{live_server.url}/s/{SLUG}/?PROLIFIC_PID=someone&STUDY_ID=S&SESSION_ID=X")
        assert visitor.get_by_role("heading", name="This study is paused").is_visible()
        assert visitor.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        visitor.screenshot(path=str(shots / f"lifecycle-not-open-{width}.png"), full_page=True)
        visitor.close()
    assert not Participant.objects.exists()
