"""A study on Prolific through its API: create and publish it, record its submissions' Prolific statuses (webhook
events, reconciliation), and the dashboard's Prolific panel. No scientific library: the webhook view and the
dashboard import this module. Approvals (``research.prolific_review``) and bonuses (``research.prolific_bonuses``)
need the exports and live beside it."""

import secrets
from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from participation.models import Participant
from participation.outcomes import COMPLETED, DECLINED, FAILED_ATTENTION, SCREENED_OUT, completion_for
from research.models import ProlificBonus, ProlificEvent, ProlificPendingDraft, ProlificStudy, ProlificSubmission
from research.prolific_client import ProlificClient
from studies.models import Study
from studies.services import latest_study

# The ids Prolific fills into the study URL (its "URL parameters" option)
PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
# Prolific's code type (its documented ``code_type`` values) and action for each outcome with a code:
# completed submissions wait for ``prolific_review``; the others are asked to return their submission.
# Timed-out participants get no code: Prolific times their submission out itself.
CODE_TYPES = {
    COMPLETED: ("COMPLETED", "MANUALLY_REVIEW"),
    FAILED_ATTENTION: ("FAILED_ATTENTION_CHECK", "REQUEST_RETURN"),
    SCREENED_OUT: ("OTHER", "REQUEST_RETURN"),
    DECLINED: ("NO_CONSENT", "REQUEST_RETURN"),
}
# Prolific's submission statuses that hold a place (the others gave it back)
PLACE_HOLDING = ("ACTIVE", "AWAITING REVIEW", "APPROVED", "RESERVED")
FINISHED_STUDY = ("COMPLETED",)


def start_link(slug: str) -> str:
    """The study's participant link with Prolific's placeholders, under ``SITE_URL``."""
    return settings.SITE_URL + reverse("surveys:start", args=[slug]) + PROLIFIC_QUERY


def completion_codes(spec: dict) -> list[dict]:
    """Prolific's ``completion_codes`` for every outcome the study file gives a code."""
    codes = []
    for outcome, (code_type, action) in CODE_TYPES.items():
        code = completion_for(spec, outcome).code
        if code:
            codes.append({"code": code, "code_type": code_type, "actions": [{"action": action}]})
    return codes


def study_draft(
    study: Study, *, internal_name: str, places: int, reward_cents: int, minutes: int, filters: list | None = None
) -> dict:
    """The body of ``POST /studies/`` for ``study``: its title, description, start link and completion codes."""
    spec = study.spec
    body = {
        "name": spec["title"],
        "internal_name": internal_name,
        "description": spec.get("description") or spec["title"],
        "external_study_url": start_link(study.slug),
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(spec),
        "estimated_completion_time": minutes,
        "reward": reward_cents,
        "total_available_places": places,
        "device_compatibility": ["desktop", "tablet", "mobile"],
    }
    if filters:
        body["filters"] = filters
    if "time_limit" in spec:
        body["maximum_allowed_time"] = spec["time_limit"]["max_minutes"]
    return body


@dataclass(frozen=True)
class Published:
    """What ``prolific_publish`` did: ``created`` a Prolific study and/or ``published`` it, or neither."""

    prolific_id: str
    status: str
    created: bool
    published: bool


def prolific_publish(
    *,
    slug: str,
    places: int,
    reward_cents: int,
    minutes: int,
    filters: list | None = None,
    draft: bool = False,
    client: ProlificClient,
) -> Published:
    """Create the study's Prolific draft (once) and publish it unless ``draft``. A study already published is
    left as it is; a stored draft is published without creating another.

    Crash-safe: a pending marker with a unique ``internal_name`` is stored before ``POST /studies/``; a rerun
    after a run that died before storing the draft's id finds that draft (``GET /studies/``) by its name and
    stores it rather than creating a second one. On PostgreSQL the marker's row lock keeps two runs at once from
    both creating."""
    if places < 1 or reward_cents < 1 or minutes < 1:
        raise ValueError("places, reward (cents) and minutes must each be at least 1")
    study = latest_study(slug)
    created = fresh = False  # fresh: the marker is this run's, so no draft can have its name yet
    if not ProlificStudy.objects.filter(slug=slug).exists():
        name = f"{slug} v{study.version} {secrets.token_hex(4)}"
        _, fresh = ProlificPendingDraft.objects.get_or_create(slug=slug, defaults={"internal_name": name})
    with transaction.atomic():
        pending = ProlificPendingDraft.objects.select_for_update().filter(slug=slug).first()
        record = ProlificStudy.objects.filter(slug=slug).first()
        if record is None:
            assert pending is not None  # stored above; deleted only with the ProlificStudy's creation
            body = study_draft(
                study,
                internal_name=pending.internal_name,
                places=places,
                reward_cents=reward_cents,
                minutes=minutes,
                filters=filters,
            )
            found = None if fresh else _draft_named(client, pending.internal_name)
            answer = found or client.create_study(body)
            record = ProlificStudy.objects.create(
                slug=slug,
                prolific_id=answer["id"],
                status=answer.get("status", "UNPUBLISHED"),
                places=places,
                reward_cents=reward_cents,
            )
            created = True
        if pending is not None:  # stored now, or a marker a run racing this one's creation left behind
            pending.delete()
    if draft or record.status != "UNPUBLISHED":
        return Published(record.prolific_id, record.status, created, False)
    answer = client.publish_study(record.prolific_id)
    record.status = answer.get("status", "ACTIVE")
    record.save(update_fields=["status"])
    prolific_sync_schedule(slug)
    return Published(record.prolific_id, record.status, created, True)


def _draft_named(client: ProlificClient, internal_name: str) -> dict | None:
    """The account's Prolific study with this ``internal_name`` (a draft an earlier run created but did not
    store), None if there is none. Every status is searched: the researcher may have published it by hand."""
    return next((s for s in client.studies() if s.get("internal_name") == internal_name), None)


def prolific_sync_schedule(slug: str) -> None:
    """Queue the study's periodic reconciliation (``research.prolific_tasks``), once the transaction commits."""
    from research.prolific_tasks import prolific_sync_task

    transaction.on_commit(lambda: prolific_sync_task.enqueue(slug, True))


def _participant_for(record: ProlificStudy, submission: dict) -> Participant | None:
    """The participant whose link carried the submission id as SESSION_ID, else its participant id."""
    people = Participant.objects.filter(study__slug=record.slug)
    found = people.filter(prolific_session_id=submission["id"]).first()
    if found is None and submission.get("participant_id"):
        found = people.filter(external_id=submission["participant_id"]).first()
    return found


def prolific_record_submission(*, record: ProlificStudy, submission: dict) -> bool:
    """Store a submission's Prolific status (as Prolific answered it); True when it changed."""
    with transaction.atomic():
        row = ProlificSubmission.objects.select_for_update().filter(submission_id=submission["id"]).first()
        if row is None:
            participant = _participant_for(record, submission)
            if participant is not None:
                ProlificSubmission.objects.filter(participant=participant).update(participant=None)
            ProlificSubmission.objects.create(
                prolific_study=record,
                submission_id=submission["id"],
                participant=participant,
                status=submission["status"],
            )
            return True
        if row.status == submission["status"]:
            return False
        row.status = submission["status"]
        row.save(update_fields=["status", "updated_at"])
        return True


def forget_withdrawn(sender, instance: Participant, **kwargs) -> None:
    """A withdrawn participant's Prolific submission is no longer theirs (``participant_withdraw`` deletes
    their Prolific ids; the submission keeps its status for the panel's counts, unlinked)."""
    if instance.status == Participant.Status.WITHDRAWN:
        ProlificSubmission.objects.filter(participant=instance).update(participant=None)


def prolific_record_event(*, event_id: str, event_type: str, resource_id: str) -> bool:
    """Remember a webhook delivery; False when its ``X-Event-ID`` was processed already (a retry)."""
    with transaction.atomic():
        _, created = ProlificEvent.objects.get_or_create(
            event_id=event_id, defaults={"event_type": event_type, "resource_id": resource_id}
        )
    return created


def prolific_study_status(*, prolific_id: str, status: str) -> None:
    """A ``study.status.change`` event: the Prolific study's new status."""
    ProlificStudy.objects.filter(prolific_id=prolific_id).update(status=status)


@dataclass(frozen=True)
class Synced:
    submissions: int
    changed: int


def prolific_sync(*, slug: str, client: ProlificClient) -> Synced:
    """Reconcile every submission of the study's Prolific study (``GET /submissions/?study=``) and its status:
    what webhook events that never arrived would have recorded."""
    record = ProlificStudy.objects.filter(slug=slug).first()
    if record is None:
        raise ValueError(f"{slug!r} is not on Prolific yet: run prolific_publish first")
    study = client.study(record.prolific_id)
    seen = changed = 0
    for submission in client.submissions(record.prolific_id):
        seen += 1
        changed += prolific_record_submission(record=record, submission=submission)
    record.status = study.get("status", record.status)
    record.synced_at = timezone.now()
    record.save(update_fields=["status", "synced_at"])
    return Synced(seen, changed)


def prolific_panel(slug: str) -> dict | None:
    """The dashboard's and the API's Prolific panel: the Prolific study, places taken, submissions by Prolific
    status, and the bonuses with their state and Prolific's totals. None before ``prolific_publish``."""
    record = ProlificStudy.objects.filter(slug=slug).first()
    if record is None:
        return None
    statuses = Counter(record.submissions.values_list("status", flat=True))
    bonuses = ProlificBonus.objects.filter(slug=slug).order_by("kind")
    return {
        "prolific_id": record.prolific_id,
        "status": record.status,
        "places": record.places,
        "places_taken": sum(statuses[s] for s in PLACE_HOLDING),
        "reward_cents": record.reward_cents,
        "synced_at": record.synced_at,
        "submissions": dict(sorted(statuses.items())),
        "awaiting_review": statuses["AWAITING REVIEW"],
        "for_you_to_decide": [
            {"submission_id": submission_id, "evidence": evidence}
            for submission_id, evidence in record.submissions.filter(awaiting_review(slug))
            .exclude(evidence="")
            .order_by("pk")
            .values_list("submission_id", "evidence")
        ],
        "note": record.note,
        "bonuses": [
            {
                "kind": b.kind,
                "state": b.state,
                "recipients": b.recipients,
                "amount": b.amount,
                "fees": b.fees,
                "total": b.total,
                "paid_at": b.paid_at,
            }
            for b in bonuses
        ],
    }


def awaiting_review(slug: str) -> Q:
    """Submissions of the study whose Prolific status is AWAITING REVIEW."""
    return Q(prolific_study__slug=slug, status="AWAITING REVIEW")
