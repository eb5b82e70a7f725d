"""Prolific through its API, against a local fake Prolific server (``tests/prolific_fake.py``, a real HTTP
server on 127.0.0.1:8700-8799 that answers and refuses as Prolific's documentation describes): publishing (a
code per outcome; one draft across a crash between creating it and storing its id), webhook events with good,
bad, stale and replayed signatures, reconciliation, approvals, a rejection refused without its message, and
bonuses paid once across two runs and across a crash between storing and paying."""

import json
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from participation.models import Participant
from research.models import ProlificEvent, ProlificPendingDraft, ProlificStudy, ProlificSubmission
from research.prolific_client import ProlificClient, ProlificError
from research.prolific_hooks import signature
from research.prolific_tasks import prolific_sync_task
from tests.prolific_fake import PLACEHOLDERS
from tests.research.conftest import SECRET, TOKEN
from tests.surveys.prolific_helpers import CODES, arrive, load_variant

SLUG = "effort-demo"


class Crash(BaseException):
    """The process dies (a BaseException: no handler in the command catches it)."""


def command(*args, **options) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO(), **options)
    return out.getvalue()


def publish(**options) -> str:
    return command("prolific_publish", SLUG, places=30, reward=150, minutes=12, **options)


@pytest.mark.django_db
def test_publish_creates_the_study_from_the_file_then_changes_nothing(
    fake, demo_study, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        out = publish()
    [study] = fake.studies.values()
    assert study["name"] == demo_study.spec["title"] and study["status"] == "ACTIVE"
    assert study["external_study_url"].startswith(
        "http://127.0.0.1:8000/s/effort-demo/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
    )
    assert (study["reward"], study["total_available_places"], study["estimated_completion_time"]) == (150, 30, 12)
    assert [c["code"] for c in study["completion_codes"]] == [demo_study.spec["completion"]["code"]]
    assert study["completion_codes"][0]["code_type"] == "COMPLETED"
    record = ProlificStudy.objects.get(slug=SLUG)
    assert (record.prolific_id, record.status) == (study["id"], "ACTIVE")
    assert "published" in out
    again = publish()
    assert "nothing changed" in again and len(fake.studies) == 1
    assert [c[1] for c in fake.calls].count("/api/v1/studies/") == 1


@pytest.mark.django_db
def test_draft_then_publish_uses_the_same_prolific_study(
    fake, demo_study, tmp_path, django_capture_on_commit_callbacks
):
    filters = tmp_path / "filters.json"
    filters.write_text(json.dumps([{"filter_id": "current-country-of-residence", "selected_values": ["1"]}]))
    out = publish(draft=True, filters=str(filters))
    [study] = fake.studies.values()
    assert study["status"] == "UNPUBLISHED" and study["filters"][0]["filter_id"] == "current-country-of-residence"
    assert "left as a draft" in out
    with django_capture_on_commit_callbacks(execute=True):
        publish()
    assert len(fake.studies) == 1 and study["status"] == "ACTIVE"


@pytest.mark.django_db
def test_refusals_are_clear_and_never_show_the_token(fake, demo_study, settings, tmp_path):
    settings.PROLIFIC_API_TOKEN = "wrong-token-0000"
    with pytest.raises(CommandError) as refused:
        publish()
    assert "401" in str(refused.value) and "wrong-token-0000" not in str(refused.value)
    assert "wrong-token" not in repr(ProlificClient())
    settings.PROLIFIC_API_TOKEN = ""
    with pytest.raises(CommandError, match="set PROLIFIC_API_TOKEN"):
        publish()
    bad = tmp_path / "filters.json"
    bad.write_text('{"not": "a list"}')
    settings.PROLIFIC_API_TOKEN = TOKEN
    with pytest.raises(CommandError, match="a JSON list"):
        publish(filters=str(bad))
    assert not ProlificStudy.objects.exists() and not fake.studies


@pytest.mark.django_db
def test_every_outcome_with_a_code_goes_to_prolific_with_its_code_type(fake, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    publish()
    [study] = fake.studies.values()
    sent = {c["code"]: (c["code_type"], [a["action"] for a in c["actions"]]) for c in study["completion_codes"]}
    assert sent == {
        "COMP1": ("COMPLETED", ["MANUALLY_REVIEW"]),
        "FAIL1": ("FAILED_ATTENTION_CHECK", ["REQUEST_RETURN"]),
        "SCRN1": ("OTHER", ["REQUEST_RETURN"]),
        "DECL1": ("NO_CONSENT", ["REQUEST_RETURN"]),
    }


@pytest.mark.django_db
def test_the_fake_refuses_a_code_type_prolific_does_not_document(fake):
    body = {
        "name": "x",
        "description": "x",
        "external_study_url": "https://example.org/?" + "&".join(PLACEHOLDERS),
        "estimated_completion_time": 5,
        "reward": 100,
        "total_available_places": 10,
        "completion_codes": [{"code": "D1", "code_type": "DECLINED", "actions": [{"action": "REQUEST_RETURN"}]}],
    }
    with pytest.raises(ProlificError, match="unknown code_type 'DECLINED'"):
        ProlificClient().create_study(body)
    body["completion_codes"][0]["code_type"] = "NO_CONSENT"
    assert ProlificClient().create_study(body)["status"] == "UNPUBLISHED"


@pytest.mark.django_db
@pytest.mark.parametrize("crash", [Crash, ProlificError], ids=["process dies", "answer lost"])
def test_a_crash_between_creating_and_storing_the_draft_never_creates_a_second(fake, demo_study, monkeypatch, crash):
    for n in range(4):  # other studies of the account: the lookup pages through them (three per page)
        fake.studies[f"other{n}"] = {"id": f"other{n}", "internal_name": f"other {n}", "status": "ACTIVE"}
    real_create = ProlificClient.create_study

    def dying(self, body):
        real_create(self, body)  # Prolific created the draft; its id never reaches the database
        raise crash("the process died")

    monkeypatch.setattr(ProlificClient, "create_study", dying)
    with pytest.raises((Crash, CommandError)):
        publish()
    assert not ProlificStudy.objects.exists() and len(fake.studies) == 5
    monkeypatch.setattr(ProlificClient, "create_study", real_create)
    out = publish()
    [draft] = [s for s in fake.studies.values() if not s["id"].startswith("other")]
    record = ProlificStudy.objects.get()
    assert len(fake.studies) == 5 and (record.prolific_id, record.status) == (draft["id"], "ACTIVE")
    assert f"Prolific study {draft['id']}, published" in out
    assert [c[:2] for c in fake.calls].count(("POST", "/api/v1/studies/")) == 1
    assert not ProlificPendingDraft.objects.exists()
    assert "nothing changed" in publish() and len(fake.studies) == 5


@pytest.mark.django_db
def test_a_crash_before_the_draft_was_created_creates_it_under_the_stored_name(fake, demo_study):
    ProlificPendingDraft.objects.create(slug=SLUG, internal_name="effort-demo v1 0badc0de")
    publish(draft=True)
    [draft] = fake.studies.values()
    assert draft["internal_name"] == "effort-demo v1 0badc0de" and draft["status"] == "UNPUBLISHED"
    assert ProlificStudy.objects.get().prolific_id == draft["id"] and not ProlificPendingDraft.objects.exists()


def _published(fake) -> ProlificStudy:
    publish()  # the periodic reconciliation it queues waits for a commit: not in these tests
    return ProlificStudy.objects.get()


def deliver(client: Client, event: dict, *, secret: str = SECRET, age: float = 0, event_id: str = "ev-1", **headers):
    body = json.dumps(event).encode()
    timestamp = str(int(time.time() - age))
    return client.post(
        "/hooks/prolific/",
        body,
        content_type="application/json",
        headers={
            "X-Prolific-Request-Timestamp": timestamp,
            "X-Prolific-Request-Signature": signature(secret, timestamp, body),
            "X-Event-ID": event_id,
            **headers,
        },
    )


@pytest.mark.django_db
def test_signed_submission_event_records_the_fetched_status(fake, demo_study, django_capture_on_commit_callbacks):
    record = _published(fake)
    submission_id = fake.add_submission(record.prolific_id, "pid-hook-1", status="AWAITING REVIEW")
    participant = arrive(Client(), "pid-hook-1", session=submission_id)
    event = {"event_type": "submission.status.change", "resource_id": submission_id, "status": "whatever"}
    with django_capture_on_commit_callbacks(execute=True):
        response = deliver(Client(), event)
    assert response.status_code == 200
    row = ProlificSubmission.objects.get(submission_id=submission_id)
    assert row.participant == participant and row.status == "AWAITING REVIEW"  # fetched, not the payload's
    fake.submissions[submission_id]["status"] = "APPROVED"
    with django_capture_on_commit_callbacks(execute=True):
        replay = deliver(Client(), event)  # a retry of the same event: ignored
    assert replay.status_code == 200 and replay.json()["detail"] == "already processed"
    row.refresh_from_db()
    assert row.status == "AWAITING REVIEW"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        {"secret": "another-secret"},
        {"age": 301},
        {"age": -400},
        {"X-Prolific-Request-Signature": "bm90IGEgc2lnbmF0dXJl"},
        {"X-Prolific-Request-Timestamp": "yesterday"},
    ],
)
def test_bad_or_stale_signatures_get_401_and_change_nothing(fake, demo_study, change):
    record = _published(fake)
    event = {"event_type": "study.status.change", "resource_id": record.prolific_id, "status": "PAUSED"}
    response = deliver(Client(), event, **change)
    assert response.status_code == 401
    record.refresh_from_db()
    assert record.status == "ACTIVE" and not ProlificEvent.objects.exists()
    assert deliver(Client(), event).status_code == 200  # the same event, signed now
    record.refresh_from_db()
    assert record.status == "PAUSED"


@pytest.mark.django_db
def test_events_without_a_secret_or_of_another_workspace_change_nothing(fake, demo_study, settings):
    record = _published(fake)
    event = {"event_type": "study.status.change", "resource_id": record.prolific_id, "status": "PAUSED"}
    assert deliver(Client(), {**event, "workspace_id": "ws-theirs"}).status_code == 200
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    assert deliver(Client(), event, secret="", event_id="ev-2").status_code == 401
    record.refresh_from_db()
    assert record.status == "ACTIVE"


def _simulated_on_prolific(fake, record, n: int) -> list[Participant]:
    call_command("simulate_participants", SLUG, n=n, seed=1, stdout=StringIO())
    people = list(Participant.objects.filter(study__slug=SLUG).order_by("pk"))
    for p in people:
        fake.add_submission(record.prolific_id, p.external_id, status="AWAITING REVIEW")
    return people


@pytest.mark.django_db
def test_sync_reconciles_every_page_of_submissions(fake, demo_study):
    record = _published(fake)
    people = _simulated_on_prolific(fake, record, n=8)
    stray = fake.add_submission(record.prolific_id, "never-arrived", status="RETURNED")
    out = command("prolific_sync", SLUG)
    assert "9 submissions on Prolific, 9 changed" in out  # three pages of three
    assert ProlificSubmission.objects.filter(participant__in=people).count() == 8
    assert ProlificSubmission.objects.get(submission_id=stray).participant is None
    assert "0 changed" in command("prolific_sync", SLUG)


@pytest.mark.django_db(transaction=True)
def test_publishing_starts_the_workers_periodic_reconciliation(fake, demo_study, settings):
    from django_tasks_db.models import DBTaskResult

    from tests.conftest import run_jobs

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.backend.DatabaseBackend"}}
    record = _published(fake)  # publishing queues the periodic reconciliation
    submission_id = fake.add_submission(record.prolific_id, "pid-late", status="TIMED-OUT")
    run_jobs()
    assert ProlificSubmission.objects.get(submission_id=submission_id).status == "TIMED-OUT"
    following = DBTaskResult.objects.filter(status="READY", task_path=prolific_sync_task.module_path).get()
    assert following.args_kwargs["args"] == [SLUG, True]
    assert following.run_after.timestamp() > time.time() + 9 * 60


@pytest.mark.django_db
def test_a_rejection_needs_prolifics_message_and_category(fake, demo_study):
    record = _published(fake)
    submission_id = fake.add_submission(record.prolific_id, "pid-reject", status="AWAITING REVIEW")
    command("prolific_sync", SLUG)
    with pytest.raises(CommandError, match="at least 100 characters"):
        command("prolific_review", SLUG, reject=submission_id, message="too short", category="LOW_EFFORT")
    assert fake.submissions[submission_id]["status"] == "AWAITING REVIEW"
    assert not [c for c in fake.calls if c[1].endswith("/transition/") and submission_id in c[1]]
    with pytest.raises(ProlificError, match="400"):  # Prolific refuses it too
        ProlificClient()._call("POST", f"submissions/{submission_id}/transition/", json={"action": "REJECT"})
    message = "Your answers were given faster than anyone can read the questions, " * 2
    out = command("prolific_review", SLUG, reject=submission_id, message=message, category="TOO_QUICKLY")
    assert "REJECTED" in out and ProlificSubmission.objects.get(submission_id=submission_id).status == "REJECTED"


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_api_panel_and_actions_are_the_owners(fake, demo_study, researcher, other_researcher):
    api = f"/api/studies/{SLUG}/prolific/"
    owner = logged_in(researcher)
    assert owner.get(api).json() == {"prolific": None}
    assert logged_in(other_researcher).post(api, {"action": "sync"}).status_code == 404
    bad = owner.post(
        api, {"action": "reject", "submission_id": "x", "message": "short"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "message" in bad.json()["fields"]
    queued = owner.post(
        api, {"action": "publish", "places": 5, "reward": 100, "minutes": 3}, content_type="application/json"
    )
    assert queued.status_code == 202 and queued.json() == {"queued": "publish"}
    panel = owner.get(api).json()["prolific"]
    assert panel["status"] == "ACTIVE" and panel["places"] == 5 and panel["bonuses"] == []


def test_the_apis_bonus_kinds_are_the_bonus_lists():
    from research.api.prolific import BONUS_KINDS
    from research.bonuses import KINDS

    assert BONUS_KINDS == KINDS


@pytest.mark.django_db
def test_a_withdrawn_participant_is_unlinked_from_their_submission(fake, demo_study):
    from participation.services import participant_withdraw

    record = _published(fake)
    submission_id = fake.add_submission(record.prolific_id, "pid-gone", status="AWAITING REVIEW")
    participant = arrive(Client(), "pid-gone", session=submission_id)
    command("prolific_sync", SLUG)
    assert ProlificSubmission.objects.get(submission_id=submission_id).participant == participant
    participant_withdraw(participant_id=participant.pk)
    command("prolific_sync", SLUG)
    row = ProlificSubmission.objects.get(submission_id=submission_id)
    assert row.participant is None and row.status == "AWAITING REVIEW"


def test_signature_matches_an_independent_hmac():
    """The value from ``openssl dgst -sha256 -hmac hook-secret-9f2e -binary | base64`` over timestamp + body,
    Prolific's documented recipe ("Verifying")."""
    from research.prolific_hooks import verified

    body = b'{"event_type":"study.status.change","resource_id":"abc","status":"ACTIVE"}'
    expected = "mfZzzg2Nr41Hb7VilYmMLe9TEkP4pH+KPpdQvzYoZZM="
    assert signature(SECRET, "1700000000", body) == expected
    assert verified(SECRET, "1700000000", body, expected, now=1700000000 + 300)
    assert not verified(SECRET, "1700000000", body, expected, now=1700000000 + 301)
    assert not verified(SECRET, "1700000000", body + b" ", expected, now=1700000000)
