import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.test import Client

from participation.models import Answer, PageVisit, Participant
from research.export import export_tables
from tests.surveys.helpers import answer_pages, consented, output_page, participant_session

pytestmark = pytest.mark.django_db


def test_participant_withdraws_from_the_page_and_answers_are_deleted(client, demo_study):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "leaver"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    participant = Participant.objects.get()
    answer_pages(participant, 6)
    assert "Withdraw from the study" in client.get("/s/effort-demo/page/").content.decode()
    assert client.get("/s/effort-demo/withdraw/").status_code == 200
    response = client.post("/s/effort-demo/withdraw/", {"confirm": "withdraw"}, follow=True)
    assert b"Your answers have been deleted" in response.content
    participant.refresh_from_db()
    assert participant.status == "withdrawn" and participant.external_id.startswith("withdrawn-")
    assert participant.resume_code_hash == "" and participant.prolific_session_id == ""
    assert not Answer.objects.filter(participant=participant).exists()
    assert not PageVisit.objects.filter(participant=participant).exists()
    assert client.get("/s/effort-demo/page/")["Location"] == "/s/effort-demo/withdrawn/"
    # The session no longer names the participant; only the withdrawn page is left to it.
    assert (
        "participant:effort-demo" not in participant_session(client)
        and participant.pk not in participant_session(client).values()
    )
    assert client.get("/s/effort-demo/withdrawn/").status_code == 200


@pytest.mark.slow
def test_withdraw_command_and_analyses_of_the_rest_still_run(demo_answered_by_12, tmp_path, no_mixed_models):
    """A withdrawn participant's answers leave the exports, and the analysis of the others runs (without its
    mixed models, which ``tests/analysis/test_pipeline.py`` checks)."""
    victim = Participant.objects.filter(status="completed").first()
    call_command("withdraw_participant", "effort-demo", str(victim.pseudonym))
    tables = export_tables("effort-demo")
    assert str(victim.pseudonym) not in set(tables.pairs["participant_id"])
    assert tables.participants.set_index("participant_id").loc[str(victim.pseudonym), "status"] == "withdrawn"
    call_command("analyze_study", "effort-demo", out=str(tmp_path / "a"), resamples=20)  # the claim: the analysis runs
    assert (tmp_path / "a" / "report.html").exists()


def test_exports_are_pseudonymous(demo_study):
    participant = consented("effort-demo", "PROLIFIC-RAW-ID-123")
    answer_pages(participant)
    tables = export_tables("effort-demo")
    for _, frame in tables.items():
        assert "PROLIFIC-RAW-ID-123" not in frame.to_csv()


def test_database_outage_gives_a_retry_page_and_writes_nothing(client, demo_study, monkeypatch):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "outage"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("participation.views.page_submit", down)
    response = client.post("/s/effort-demo/page/", {"page_key": "instructions"})
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert b"Please try again in a moment" in response.content
    participant = Participant.objects.get()
    assert participant.position == 0 and not Answer.objects.filter(participant=participant).exists()


@pytest.mark.parametrize("message", ["no such table: surveys_participant", "no such column: surveys_participant.pilot"])
def test_schema_error_is_not_reported_as_an_outage(demo_study, monkeypatch, message):
    """Missing migrations are not "briefly unavailable": the real error reaches Django's handling."""

    def broken(**kwargs):
        raise OperationalError(message)

    monkeypatch.setattr("participation.views.participant_arrive", broken)
    client = Client(raise_request_exception=False)
    response = client.get("/s/effort-demo/", {"PROLIFIC_PID": "schema"})
    assert response.status_code == 500 and not response.has_header("Retry-After")


def test_api_outage_is_json_503(demo_study, researcher, monkeypatch):
    client = Client()
    client.force_login(researcher)

    def down(*args, **kwargs):
        raise OperationalError("gone")

    monkeypatch.setattr("research.export.cached_export", down)
    response = client.get("/api/studies/effort-demo/participants/")
    assert response.status_code == 503 and "briefly unavailable" in response.json()["detail"]


def test_outage_on_a_page_post_keeps_what_the_participant_typed(demo_study, monkeypatch):
    """The 503 page for a participant's POST re-sends the posted fields (escaped, with a fresh CSRF
    token) with a "Try again" button, and does not reload itself (a reload would drop them)."""
    import html
    import re

    from participation.services import page_submit as real_page_submit

    client = Client(enforce_csrf_checks=True)
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "typist"})
    client.get("/s/effort-demo/consent/")
    token = client.cookies["csrftoken"].value
    client.post("/s/effort-demo/consent/", {"decision": "accept", "csrfmiddlewaretoken": token})
    participant = Participant.objects.get()
    answer_pages(participant, next(i for i, p in enumerate(participant.plan) if p["key"].startswith("output/")))
    page = output_page(participant)
    rationale = '"><script>alert(1)</script> & a long, careful answer ' + "x" * 3900
    data = {"page_key": page["key"], "k_decision": "accept", "csrfmiddlewaretoken": token}
    for x in page["subjects"]:
        data[f"score_{x}"] = "45"
        data[f"rationale_{x}"] = rationale

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("participation.views.page_submit", down)
    response = client.post("/s/effort-demo/page/", data)
    body = response.content.decode()
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert 'http-equiv="refresh"' not in body and "Try again" in body
    assert "<script>alert(1)</script>" not in body and response["Cache-Control"] == "no-store"
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', body)
    resent = {name: html.unescape(value) for name, value in fields}
    assert [name for name, _ in fields].count("csrfmiddlewaretoken") == 1
    assert {k: v for k, v in resent.items() if k != "csrfmiddlewaretoken"} == {
        k: v for k, v in data.items() if k != "csrfmiddlewaretoken"
    }
    assert 'action="/s/effort-demo/page/"' in body
    assert not Answer.objects.filter(participant=participant, page=page["key"]).exists()
    # The database is back: "Try again" sends the same answers and they are saved.
    monkeypatch.setattr("participation.views.page_submit", real_page_submit)
    again = client.post("/s/effort-demo/page/", resent)
    assert again.status_code == 200
    saved = Answer.objects.filter(participant=participant, page=page["key"], measure="rationale")
    assert saved.count() == len(page["subjects"]) and {a.text for a in saved} == {rationale}


def test_outage_on_a_get_still_reloads_itself(client, demo_study, monkeypatch):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "reader"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("participation.views.page_shown", down)
    response = client.get("/s/effort-demo/page/")
    assert response.status_code == 503 and b'http-equiv="refresh"' in response.content
    assert b"Try again" not in response.content
