"""The list of Prolific submissions to approve, return or reject (export_submissions and the
dashboard download), beside the bonus CSV."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from participation.models import Participant
from participation.services import participant_arrive, participant_consent, participant_withdraw
from research.submissions import submissions_table
from tests.surveys.prolific_helpers import answer_all_but_last, arrive, finish, load_variant

pytestmark = pytest.mark.django_db

EXPECTED = [
    "PROLIFIC_PID,SESSION_ID,action,reason,other_SESSION_IDs",
    "done,S-done,approve,completed,",
    "one-slip,S-one-slip,approve,completed,",
    "too-slow,S-too-slow,return,timed out,",  # by arrival within an action: these two arrived an hour ago
    "abandoned,S-abandoned,return,timed out,",
    "declined,S-declined,return,declined consent,",
    "inattentive,S-inattentive,reject,failed attention checks 2 of 3,",
]


@pytest.fixture
def crowd(demo_spec, researcher):
    """One participant per case, all from Prolific links unless said otherwise."""
    load_variant(demo_spec, researcher, time_limit={"max_minutes": 60})
    for pid, failed in (("done", 0), ("one-slip", 1), ("inattentive", 2)):
        browser = Client()
        finish(browser, arrive(browser, pid), failed_checks=failed)
    declined, _ = participant_arrive(study_slug="effort-demo", external_id="declined", prolific_session_id="S-declined")
    participant_consent(participant_id=declined.pk, accept=False)
    for pid in ("too-slow", "abandoned", "still-going", "withdrew"):
        arrive(Client(), pid)
    long_ago = timezone.now() - timedelta(minutes=61)
    Participant.objects.filter(external_id__in=["too-slow", "abandoned"]).update(arrived_at=long_ago)
    Participant.objects.filter(external_id="too-slow").update(status="timed_out")  # abandoned: not marked yet
    participant_withdraw(participant_id=Participant.objects.get(external_id="withdrew").pk)
    answer_all_but_last(consented_label("label-only"))  # another recruiter: not a Prolific submission
    pilot, _ = participant_arrive(
        study_slug="effort-demo", external_id="pilot-x", prolific_session_id="S-p", pilot=True
    )
    participant_consent(participant_id=pilot.pk, accept=False)


def consented_label(label: str) -> Participant:
    participant, _ = participant_arrive(study_slug="effort-demo", external_id=label)
    return participant_consent(participant_id=participant.pk, accept=True)


def test_submissions_list_the_action_and_reason_for_each_prolific_submission(crowd):
    table = submissions_table("effort-demo")
    assert table.to_csv(index=False).splitlines() == EXPECTED
    assert table.attrs == {"in_progress": 1, "withdrawn": 1}  # still-going; withdrew (ids deleted)
    with_pilot = submissions_table("effort-demo", include_pilot=True)
    assert with_pilot.to_csv(index=False).splitlines() == [
        *EXPECTED[:6],
        "pilot-x,S-p,return,declined consent,",
        *EXPECTED[6:],
    ]


def test_export_submissions_writes_the_csv_and_the_dashboard_serves_it(
    crowd, tmp_path, client, researcher, other_researcher
):
    out = StringIO()
    call_command("export_submissions", "effort-demo", out=str(tmp_path / "s.csv"), stdout=out)
    assert (tmp_path / "s.csv").read_text().splitlines() == EXPECTED
    assert "6 submissions written" in out.getvalue() and "2 to approve, 3 to return, 1 to reject" in out.getvalue()
    printed, notes = StringIO(), StringIO()
    call_command("export_submissions", "effort-demo", stdout=printed, stderr=notes)
    assert printed.getvalue().splitlines() == EXPECTED and "1 withdrew" in notes.getvalue()
    client.force_login(researcher)
    download = client.get("/researcher/studies/effort-demo/submissions.csv")
    assert download["Content-Type"].startswith("text/csv") and download.content.decode().splitlines() == EXPECTED
    assert 'filename="effort-demo-submissions.csv"' in download["Content-Disposition"]
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/effort-demo/submissions.csv").status_code == 404


def test_the_bonus_csv_stays_as_it_was(crowd, researcher):
    out = StringIO()
    call_command("export_bonuses", "effort-demo", kind="rationale", amount=1.0, top_fraction=1.0, stdout=out)
    lines = out.getvalue().splitlines()
    # Prolific's bulk-bonus format: "<PROLIFIC_PID>,<amount>", no header; completed, non-excluded only
    assert sorted(line.split(",")[0] for line in lines) == ["done", "one-slip"]
    assert all(line.endswith(",1.00") for line in lines)


def test_a_squatted_id_keeps_both_attempts_for_the_researcher(demo_spec, researcher):
    """Issue 22 #12: whoever arrives first with a Prolific id owns it; the real participant arriving
    with their own SESSION_ID gets the resume form, and that arrival is recorded, listed in the
    submissions (other_SESSION_IDs) and counted on the dashboard."""
    from participation.models import ConflictingArrival
    from participation.services import MAX_CONFLICTING_ARRIVALS

    load_variant(demo_spec, researcher)
    squatter = Client()
    finish(squatter, arrive(squatter, "real-pid", session="S-squatter"))
    real = Client()
    response = real.get("/s/effort-demo/", {"PROLIFIC_PID": "real-pid", "STUDY_ID": "ST1", "SESSION_ID": "S-real"})
    assert response.status_code == 200 and "code" in response.content.decode().lower()  # the resume form
    real.get("/s/effort-demo/", {"PROLIFIC_PID": "real-pid", "STUDY_ID": "ST1", "SESSION_ID": "S-real"})  # again
    squatter.get("/s/effort-demo/", {"PROLIFIC_PID": "real-pid", "SESSION_ID": "S-squatter"})  # the owner: no conflict
    conflict = ConflictingArrival.objects.get()
    assert conflict.session_id == "S-real" and conflict.participant.prolific_session_id == "S-squatter"
    assert submissions_table("effort-demo").to_csv(index=False).splitlines() == [
        "PROLIFIC_PID,SESSION_ID,action,reason,other_SESSION_IDs",
        "real-pid,S-squatter,approve,completed,S-real",
    ]
    for n in range(2 * MAX_CONFLICTING_ARRIVALS):  # made-up SESSION_IDs store a bounded number of rows
        Client().get("/s/effort-demo/", {"PROLIFIC_PID": "real-pid", "SESSION_ID": f"S-{n}"})
    assert ConflictingArrival.objects.count() == MAX_CONFLICTING_ARRIVALS
    browser = Client()
    browser.force_login(researcher)
    body = browser.get("/researcher/studies/effort-demo/").content.decode()
    assert "1 participant id arrived again with another Prolific SESSION_ID than its first arrival" in body
    participant_withdraw(participant_id=conflict.participant_id)
    assert not ConflictingArrival.objects.exists()  # their SESSION_IDs identify them too
