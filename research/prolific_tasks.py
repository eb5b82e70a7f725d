"""Calls to Prolific off the request path, run by the job worker (django-tasks): the periodic reconciliation of
a published study (every ``PROLIFIC_SYNC_MINUTES`` until Prolific reports the study COMPLETED), a webhook
submission event's re-fetch, and the dashboard's and the API's actions (publish, review, bonus dry run, pay).
The heavy modules (exports, bonuses) are imported inside the tasks, in the worker."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks import task

from research.models import ProlificStudy
from research.prolific_client import ProlificClient, ProlificError

ACTIONS = ("publish", "sync", "review", "reject", "bonus_dry_run", "bonus_pay")


@task()
def prolific_sync_task(slug: str, periodic: bool = False) -> str:
    """Reconcile the study's submissions; ``periodic``: queue the next run first (so a failure does not end
    the series), unless the study is gone from Prolific's active states."""
    from research.prolific_services import FINISHED_STUDY, prolific_sync

    record = ProlificStudy.objects.filter(slug=slug).first()
    if record is None:
        return f"{slug}: not on Prolific"
    if periodic and record.status not in FINISHED_STUDY:
        later = timezone.now() + timedelta(minutes=settings.PROLIFIC_SYNC_MINUTES)
        prolific_sync_task.using(run_after=later).enqueue(slug, True)
    synced = prolific_sync(slug=slug, client=ProlificClient())
    return f"{slug}: {synced.submissions} submissions, {synced.changed} changed"


@task()
def prolific_event_task(submission_id: str) -> str:
    """A ``submission.status.change`` event: fetch the submission and record its Prolific status."""
    from research.prolific_services import prolific_record_submission

    submission = ProlificClient().submission(submission_id)
    record = ProlificStudy.objects.filter(prolific_id=submission.get("study_id", "")).first()
    if record is None:
        return f"submission {submission_id}: not of a study published from here"
    prolific_record_submission(record=record, submission=submission)
    return f"submission {submission_id}: {submission['status']}"


@task()
def prolific_action_task(slug: str, action: str, options: dict) -> str:
    """Run a dashboard or API action and keep what it did in the Prolific study's ``note``."""
    from research.prolific_actions import run_action

    try:
        note = run_action(slug, action, options, ProlificClient())
    except (ProlificError, ValueError, LookupError) as exc:
        note = f"{action} failed: {exc}"
    ProlificStudy.objects.filter(slug=slug).update(note=note)
    return note
