"""Pilot participants: made only by the researcher's signed pilot link, left out of the condition
balance, exports and analyses unless asked for, and removable (delete_pilot, dashboard button)."""

import html
import re
from io import StringIO

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client

from participation.models import Answer, Participant
from participation.pilot import pilot_token
from participation.simulate import simulate_participants
from research.export import export_tables
from tests.surveys.helpers import answer_pages, consented

pytestmark = pytest.mark.django_db


def _pilot_link(client: Client, researcher) -> str:
    """The pilot link as the owner's dashboard shows it (path and query)."""
    client.force_login(researcher)
    body = html.unescape(client.get("/researcher/studies/effort-demo/").content.decode())
    link = re.search(r'id="pilot-link">http://testserver(/s/effort-demo/\?pilot=[^<]+)<', body).group(1)
    client.logout()
    return link


def _pilot(researcher, pid: str = "") -> Participant:
    """A pilot participant who has answered every page, through the dashboard's link."""
    browser = Client()
    link = _pilot_link(browser, researcher) + (f"&participant_label={pid}" if pid else "")
    assert b'action="/s/effort-demo/consent/"' in browser.get(link).content  # the consent page
    browser.post("/s/effort-demo/consent/", {"decision": "accept"})
    return answer_pages(Participant.objects.filter(pilot=True).latest("pk"))


def test_the_dashboard_link_makes_pilot_participants(client, demo_study, researcher):
    pilot = _pilot(researcher)
    assert pilot.pilot and pilot.external_id.startswith("pilot-") and pilot.status == "completed"
    named = _pilot(researcher, "tester-anna")
    assert named.pilot and named.external_id == "tester-anna"
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "real-1"})
    assert not Participant.objects.get(external_id="real-1").pilot


@pytest.mark.parametrize(
    "token",
    ["", "forged", "x" * 27, "__OTHER__", "__UPPER__"],
)
def test_a_pilot_token_cannot_be_forged(client, demo_study, token):
    if token == "__OTHER__":
        token = pilot_token("another-study")  # a valid token, for another study
    if token == "__UPPER__":
        token = pilot_token("effort-demo").upper()
    response = client.get("/s/effort-demo/", {"pilot": token, "PROLIFIC_PID": "wants-to-be-a-pilot"})
    assert response.status_code == 403 and b"This pilot link is not valid" in response.content
    assert not Participant.objects.exists()


def test_pilots_are_left_out_of_exports_unless_asked_for(client, demo_study, researcher, tmp_path):
    real = answer_pages(consented("effort-demo", "real"))
    pilot = _pilot(researcher)
    default = export_tables("effort-demo")
    assert set(default.participants["participant_id"]) == {str(real.pseudonym)}
    assert (default.participants["pilot"] == 0).all()
    for frame in (default.pairs, default.disagreements, default.pages):
        assert str(pilot.pseudonym) not in set(frame["participant_id"])
    included = export_tables("effort-demo", include_pilot=True)
    rows = included.participants.set_index("participant_id")["pilot"]
    assert rows.to_dict() == {str(real.pseudonym): 0, str(pilot.pseudonym): 1}
    assert str(pilot.pseudonym) in set(included.pairs["participant_id"])
    # the command, the dashboard download and the API
    call_command("export_responses", "effort-demo", out=str(tmp_path / "a"), stdout=StringIO())
    call_command("export_responses", "effort-demo", out=str(tmp_path / "b"), include_pilot=True, stdout=StringIO())
    assert len(pd.read_csv(tmp_path / "a" / "participants.csv")) == 1
    assert len(pd.read_csv(tmp_path / "b" / "participants.csv")) == 2
    client.force_login(researcher)
    url = "/researcher/studies/effort-demo/export/participants.csv"
    assert client.get(url).content.count(b"\n") == 2 and client.get(url + "?include_pilot=1").content.count(b"\n") == 3
    api = "/api/studies/effort-demo/export/participants/"
    assert client.get(api).json()["count"] == 1 and client.get(api, {"include_pilot": "1"}).json()["count"] == 2
    assert client.get("/api/studies/effort-demo/participants/", {"include_pilot": "true"}).json()["count"] == 2


@pytest.mark.slow
def test_pilots_are_left_out_of_analyses_unless_asked_for(client, demo_study, researcher, monkeypatch, tmp_path):
    import runs.analysis_runs

    simulate_participants("effort-demo", n=4, seed=5)
    pilot = _pilot(researcher)
    analysed = []

    class Stop(Exception):
        pass

    def run_pipeline(pairs, participants, **options):
        analysed.append((set(pairs["participant_id"]), set(participants["participant_id"])))
        raise Stop

    monkeypatch.setattr(runs.analysis_runs, "run_pipeline", run_pipeline)
    for include in (False, True):
        with pytest.raises(Stop):
            call_command("analyze_study", "effort-demo", out=str(tmp_path), include_pilot=include, stderr=StringIO())
    (pairs_default, people_default), (pairs_included, people_included) = analysed
    assert str(pilot.pseudonym) not in pairs_default | people_default
    assert str(pilot.pseudonym) in pairs_included & people_included
    assert len(people_included) == len(people_default) + 1 == 5
    client.force_login(researcher)
    job = client.post("/api/studies/effort-demo/analyses/", {"include_pilot": True}, content_type="application/json")
    assert job.status_code == 202 and job.json()["params"]["include_pilot"] is True


def test_delete_pilot_removes_only_pilots(demo_study, researcher):
    simulate_participants("effort-demo", n=3, seed=6)
    real = answer_pages(consented("effort-demo", "real"))
    pilots = [_pilot(researcher) for _ in range(2)]
    kept = Answer.objects.exclude(participant__in=pilots).count()
    out = StringIO()
    call_command("delete_pilot", "effort-demo", stdout=out)
    assert "2 pilot participant(s) of effort-demo deleted" in out.getvalue()
    assert not Participant.objects.filter(pilot=True).exists()
    assert Participant.objects.count() == 4 and Participant.objects.filter(pk=real.pk).exists()
    assert Answer.objects.count() == kept


def test_only_the_owner_deletes_pilots_from_the_dashboard(client, demo_study, researcher, other_researcher):
    _pilot(researcher)
    demo_study.collaborators.add(other_researcher)
    url = "/researcher/studies/effort-demo/pilot/delete/"
    client.force_login(other_researcher)
    assert b"pilot/delete" not in client.get("/researcher/studies/effort-demo/").content  # no button
    assert client.post(url).status_code == 404 and Participant.objects.filter(pilot=True).count() == 1
    client.force_login(researcher)
    assert client.get(url).status_code == 405  # a GET never deletes
    page = client.post(url, follow=True)
    assert b"1 pilot participant(s) deleted with their answers." in page.content
    assert not Participant.objects.filter(pilot=True).exists()
