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
    "PROLIFIC_PID,SESSION_ID,action,reason",
    "done,S-done,approve,completed",
    "one-slip,S-one-slip,approve,completed",
    "too-slow,S-too-slow,return,timed out",  # by arrival within an action: these two arrived an hour ago
    "abandoned,S-abandoned,return,timed out",
    "declined,S-declined,return,declined consent",
    "inattentive,S-inattentive,reject,failed attention checks 2 of 3",
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
        "pilot-x,S-p,return,declined consent",
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
