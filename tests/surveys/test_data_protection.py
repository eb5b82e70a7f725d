import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.test import Client

from surveys.export import export_tables
from surveys.models import Answer, PageVisit, Participant
from surveys.simulate import simulate_participants
from tests.surveys.helpers import answer_pages, consented

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
    assert not Answer.objects.filter(participant=participant).exists()
    assert not PageVisit.objects.filter(participant=participant).exists()
    assert client.get("/s/effort-demo/page/")["Location"] == "/s/effort-demo/withdrawn/"
    # The session no longer names the participant; only the withdrawn page is left to it.
    assert "participant:effort-demo" not in client.session and participant.pk not in client.session.values()
    assert client.get("/s/effort-demo/withdrawn/").status_code == 200


def test_withdraw_command_and_analyses_of_the_rest_still_run(demo_study, tmp_path):
    simulate_participants("effort-demo", n=12, seed=2)
    victim = Participant.objects.filter(status="completed").first()
    call_command("withdraw_participant", "effort-demo", str(victim.pseudonym))
    tables = export_tables("effort-demo")
    assert str(victim.pseudonym) not in set(tables.pairs["participant_id"])
    assert tables.participants.set_index("participant_id").loc[str(victim.pseudonym), "status"] == "withdrawn"
    call_command("analyze_study", "effort-demo", out=str(tmp_path / "a"), resamples=50)
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

    monkeypatch.setattr("surveys.views.page_submit", down)
    response = client.post("/s/effort-demo/page/", {"page_key": "instructions"})
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert b"Please try again in a moment" in response.content
    participant = Participant.objects.get()
    assert participant.position == 0 and not Answer.objects.filter(participant=participant).exists()


def test_api_outage_is_json_503(demo_study, researcher, monkeypatch):
    client = Client()
    client.force_login(researcher)

    def down(*args, **kwargs):
        raise OperationalError("gone")

    monkeypatch.setattr("surveys.api.views.export_tables", down)
    response = client.get("/api/studies/effort-demo/participants/")
    assert response.status_code == 503 and "briefly unavailable" in response.json()["detail"]
