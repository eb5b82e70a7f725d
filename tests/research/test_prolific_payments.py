"""Prolific's review and bonuses over one simulated crowd: 30 simulated participants of the demo (the honesty
bonus needs 10 eligible respondents per question across the demo's conditions), simulated once for the module
(about 5 CPU seconds) and read by every test, each test with its own fake Prolific server and publication
(rolled back with the test); approvals, bonuses paid once, a crash between storing and paying, the dashboard
panel."""

import json
from dataclasses import dataclass
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from participation.models import Participant
from research.export import export_tables
from research.models import ProlificBonus, ProlificStudy
from research.prolific_client import ProlificClient
from studies.models import Study
from studies.services import study_load
from tests.conftest import DEMO_FILE
from tests.research.conftest import TOKEN
from tests.research.test_prolific_api import SLUG, Crash, _published, command, logged_in
from tests.surveys.prolific_helpers import arrive


@dataclass(frozen=True)
class Crowd:
    """The demo study, its owner and its simulated participants (shared: tests must not change them
    outside their own transaction)."""

    owner: object
    study: Study
    people: list[Participant]


# every test reads the crowd (30 participants simulated once, about 5 CPU s): all are slow
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crowd(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        owner = get_user_model().objects.create_user("prolific-owner", password="owner-pass-123")
        study = study_load(spec=json.loads(DEMO_FILE.read_text()), owner=owner).study
        call_command("simulate_participants", SLUG, n=30, seed=1, stdout=StringIO())
        yield Crowd(owner, study, list(Participant.objects.filter(study__slug=SLUG).order_by("pk")))
        Participant.objects.filter(study__slug=SLUG).delete()
        Study.objects.filter(slug=SLUG).delete()
        owner.delete()


def on_prolific(fake, record: ProlificStudy, crowd: Crowd) -> list[Participant]:
    """The crowd's submissions on this test's fake Prolific, awaiting review."""
    for p in crowd.people:
        fake.add_submission(record.prolific_id, p.external_id, status="AWAITING REVIEW")
    return list(crowd.people)


@pytest.mark.django_db
def test_review_approves_completed_unexcluded_and_never_rejects(fake, crowd):
    record = _published(fake)
    people = on_prolific(fake, record, crowd)
    submission_id = fake.add_submission(record.prolific_id, "pid-unfinished", status="AWAITING REVIEW")
    people.append(arrive(Client(), "pid-unfinished", session=submission_id))  # consented, never finished
    table = export_tables(SLUG).participants.set_index("participant_id")
    eligible = {
        p.external_id for p in people if p.status == "completed" and not table.loc[str(p.pseudonym), "excluded"]
    }
    assert eligible and len(eligible) < len(people)  # both kinds: the review must tell them apart
    dry = command("prolific_review", SLUG, dry_run=True)
    assert f"would approve {len(eligible)}" in dry
    assert {s["status"] for s in fake.submissions.values()} == {"AWAITING REVIEW"}
    out = command("prolific_review", SLUG)
    approved = {s["participant_id"] for s in fake.submissions.values() if s["status"] == "APPROVED"}
    assert approved == eligible and f"approved {len(eligible)}" in out
    assert not any(s["status"] == "REJECTED" for s in fake.submissions.values())
    left = {s["participant_id"] for s in fake.submissions.values() if s["status"] == "AWAITING REVIEW"}
    assert left == {p.external_id for p in people} - eligible
    assert all(f"({pid})" in out for pid in left)  # listed for the researcher, with the evidence


@pytest.mark.django_db
def test_bonuses_dry_run_then_paid_exactly_once(fake, crowd):
    record = _published(fake)
    on_prolific(fake, record, crowd)
    dry = command("prolific_pay_bonuses", SLUG, kind="honesty", amount=0.5, dry_run=True)
    [bulk] = fake.bulks.values()
    lines = [line for line in dry.splitlines() if line.endswith(",0.50")]
    assert lines and len(lines) * 50 == bulk["amount"]
    assert f"total with fees {bulk['total_amount'] / 100:.2f}" in dry and not fake.payments
    assert ProlificBonus.objects.get().state == "prepared"
    command("prolific_pay_bonuses", SLUG, kind="honesty", amount=0.5)
    assert fake.payments == {bulk["id"]: 1} and len(fake.bulks) == 1  # the dry run's bulk, set up once
    with pytest.raises(CommandError, match="is paid .* never paid again"):
        command("prolific_pay_bonuses", SLUG, kind="honesty", amount=0.5)
    assert fake.payments == {bulk["id"]: 1} and ProlificBonus.objects.get().state == "paid"


@pytest.mark.django_db
@pytest.mark.parametrize("crash_after_paying", [False, True])
def test_a_crash_between_storing_and_paying_never_pays_twice(fake, crowd, monkeypatch, crash_after_paying):
    record = _published(fake)
    on_prolific(fake, record, crowd)
    real_pay = ProlificClient.pay_bonus

    def dying(self, bulk_id):
        assert ProlificBonus.objects.get(bulk_id=bulk_id).state == "paying"  # stored before the call
        if crash_after_paying:
            real_pay(self, bulk_id)
        raise Crash

    monkeypatch.setattr(ProlificClient, "pay_bonus", dying)
    with pytest.raises(Crash):
        command("prolific_pay_bonuses", SLUG, kind="honesty", amount=0.5)
    monkeypatch.setattr(ProlificClient, "pay_bonus", real_pay)
    with pytest.raises(CommandError, match="paying.*check the payment on Prolific"):
        command("prolific_pay_bonuses", SLUG, kind="honesty", amount=0.5)
    assert sum(fake.payments.values()) == int(crash_after_paying)
    assert ProlificBonus.objects.get().state == "paying"


@pytest.mark.django_db
def test_dashboard_panel_publishes_reviews_and_shows_the_dry_run_total_before_paying(fake, crowd):
    client = logged_in(crowd.owner)
    url = f"/researcher/studies/{SLUG}/prolific/"
    refused = client.post(url, {"action": "publish", "places": "30"}, follow=True)
    assert "reward: publish needs reward" in refused.content.decode() and not fake.studies
    client.post(url, {"action": "publish", "places": "30", "reward": "150", "minutes": "12"})
    record = ProlificStudy.objects.get()
    assert record.status == "ACTIVE" and "created Prolific study" in record.note
    on_prolific(fake, record, crowd)
    client.post(url, {"action": "review"})
    client.post(url, {"action": "bonus_dry_run", "kind": "honesty", "amount": "0.50"})
    page = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    bonus = ProlificBonus.objects.get()
    assert f"Prolific's total with fees <strong>{bonus.total}</strong>" in page and "Pay " in page
    assert "APPROVED" in page and TOKEN not in page and not fake.payments
    client.post(url, {"action": "bonus_pay", "kind": "honesty"})
    assert fake.payments == {bonus.bulk_id: 1}
    client.post(url, {"action": "bonus_pay", "kind": "honesty"})  # a second click
    assert fake.payments == {bonus.bulk_id: 1} and "never paid again" in ProlificStudy.objects.get().note
