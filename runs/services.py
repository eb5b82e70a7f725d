"""Writes to jobs: create (within the researcher's quota; store the uploads, enqueue the task in the
same transaction), report progress, append to the log, finish. Each is one statement or one transaction."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from runs.models import Job
from runs.storage import delete_prefix, list_files, store_upload

LOG_LIMIT = 100_000  # characters kept of a job's log
LOWEST_PRIORITY = -100  # django-tasks' lowest task priority
MAX_PROBLEMS = 200  # problems of a bad file kept with its failed job


class JobQuotaExceeded(Exception):
    """The researcher already has JOBS_QUEUED_PER_RESEARCHER jobs queued or running (429)."""


def _active_jobs(user) -> int:
    """Within the quota: ``user``'s jobs queued or running now."""
    limit = settings.JOBS_QUEUED_PER_RESEARCHER
    active = Job.objects.filter(created_by=user, status__in=(Job.Status.QUEUED, Job.Status.RUNNING)).count()
    if active >= limit:
        raise JobQuotaExceeded(
            f"You already have {active} jobs queued or running, the most one researcher may have "
            f"(JOBS_QUEUED_PER_RESEARCHER = {limit}). Start this one when one of them has finished."
        )
    return active


def job_create(*, kind: str, user, study=None, params: dict | None = None, uploads: dict | None = None) -> Job:
    """Store the uploaded files under ``jobs/<id>/inputs/`` and queue the job for a worker.

    A researcher with JOBS_QUEUED_PER_RESEARCHER jobs queued or running gets JobQuotaExceeded and
    nothing is stored. The task's priority falls by one per job of the researcher already queued or
    running (workers take the highest priority first), so one researcher's burst does not starve the
    others' jobs. A failure to store an upload leaves no file and no job behind (RunStorageError)."""
    from runs.tasks import run_job

    _active_jobs(user)  # refuse before storing anything
    job = Job(kind=kind, created_by=user, study=study, params=params or {})
    try:
        job.inputs = {
            field: store_upload(upload, f"{job_folder(job.id)}/inputs", f"{field}.csv")
            for field, upload in (uploads or {}).items()
        }
        with transaction.atomic():  # the worker sees the task only once the job row is committed too
            # one researcher's concurrent requests queue one at a time: the count below stays true
            list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))
            priority = max(LOWEST_PRIORITY, -_active_jobs(user))
            job.task_id = str(run_job.using(priority=priority).enqueue(str(job.id)).id)
            job.save(force_insert=True)
    except BaseException:
        delete_prefix(job_folder(job.id))
        raise
    return job


def job_folder(job_id) -> str:
    """The storage folder of a job's uploaded inputs (``<folder>/inputs``), removed whole on failure."""
    return f"jobs/{job_id}"


def job_start(*, job_id) -> bool:
    """queued -> running (compare-and-set: a job runs once even if two workers see it)."""
    return bool(
        Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
            status=Job.Status.RUNNING, started_at=timezone.now(), progress=0.0
        )
    )


def job_progress(*, job_id, fraction: float, message: str = "") -> None:
    Job.objects.filter(pk=job_id).update(progress=min(max(float(fraction), 0.0), 1.0), progress_message=message[:200])


def job_log(*, job_id, line: str) -> None:
    stamp = timezone.now().strftime("%H:%M:%S")
    Job.objects.filter(pk=job_id).update(log=Concat(F("log"), Value(f"{stamp} {line}\n")))


def job_succeed(*, job_id, result: dict, files_prefix: str = "") -> None:
    Job.objects.filter(pk=job_id).update(
        status=Job.Status.SUCCEEDED,
        result=result,
        files_prefix=files_prefix,
        files=list_files(files_prefix),
        progress=1.0,
        progress_message="done",
        finished_at=timezone.now(),
    )


def job_fail(*, job_id, error: str, problems: list[str] | None = None) -> None:
    """running -> failed; ``problems`` (a bad file's, each "path: rule") are kept as the result's ``problems``."""
    Job.objects.filter(pk=job_id).update(
        status=Job.Status.FAILED,
        error=error[:5000],
        result={"problems": problems[:MAX_PROBLEMS], "more_problems": max(0, len(problems) - MAX_PROBLEMS)}
        if problems
        else None,
        finished_at=timezone.now(),
        progress_message="failed",
    )
