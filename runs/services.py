"""Writes to jobs: create (within the researcher's quota; store the uploads, enqueue the task in the
same transaction), report progress, append to the log, beat the heart, finish, cancel, and fail the
jobs whose worker died. Each is one statement or one transaction; a finished or cancelled job is
never changed again (every write after the start is a compare-and-set on ``running``)."""

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Concat
from django.utils import timezone

from runs.models import AnalysisRun, AuditRun, Job
from runs.storage import delete_prefix, list_files, new_prefix, store_directory, store_upload

LOG_LIMIT = 100_000  # characters kept of a job's log
LOWEST_PRIORITY = -100  # django-tasks' lowest task priority
MAX_PROBLEMS = 200  # problems of a bad file kept with its failed job


class JobQuotaExceeded(Exception):
    """The researcher already has JOBS_QUEUED_PER_RESEARCHER jobs queued or running (429)."""


class JobCancelled(Exception):
    """The job was cancelled before it stored its run: nothing of the run is stored."""


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


def job_queue_system(*, kind: str, study_id: int, params: dict) -> Job:
    """Queue a job the platform starts by itself (no researcher, no quota, the default priority), e.g.
    an adaptive block's refit (a short job: it does not wait behind a researcher's busy queue)."""
    from runs.tasks import run_job

    job = Job(kind=kind, study_id=study_id, params=params)
    with transaction.atomic():
        job.task_id = str(run_job.enqueue(str(job.id)).id)
        job.save(force_insert=True)
    return job


def job_folder(job_id) -> str:
    """The storage folder of a job's uploaded inputs (``<folder>/inputs``), removed whole on failure."""
    return f"jobs/{job_id}"


def job_workdir_prefix(job_id) -> str:
    """Name prefix of a job's private temporary folder (under the worker's temporary directory)."""
    return f"job-{job_id}-"


def job_start(*, job_id) -> bool:
    """queued -> running, one more attempt (compare-and-set: a job runs once even if two workers see it)."""
    now = timezone.now()
    return bool(
        Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
            status=Job.Status.RUNNING,
            started_at=now,
            heartbeat_at=now,
            progress=0.0,
            progress_message="",  # a second attempt starts its stages again
            attempts=F("attempts") + 1,
            output_prefix="",
        )
    )


def job_claim_output(*, job_id, prefix: str) -> None:
    """Record the storage folder a job is about to write (``runs.storage.prefixes_claimed``), before its
    first file is copied: a job killed mid-copy leaves a folder its clean-up finds (:func:`job_discard_files`)."""
    Job.objects.filter(pk=job_id).update(output_prefix=prefix)


def job_heartbeat(*, job_id) -> bool:
    """The worker's sign of life for a running job; False once the job is no longer running (it
    ended, or a researcher cancelled it)."""
    return bool(Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now()))


def job_progress(*, job_id, fraction: float, message: str = "") -> None:
    Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
        progress=min(max(float(fraction), 0.0), 1.0), progress_message=message[:200]
    )


def job_log(*, job_id, line: str) -> None:
    stamp = timezone.now().strftime("%H:%M:%S")
    Job.objects.filter(pk=job_id).update(log=Concat(F("log"), Value(f"{stamp} {line}\n")))


@contextmanager
def run_storing(out_dir: Path, kind: str, *, job_id=None) -> Iterator[str]:
    """Store the report folder ``out_dir`` under a new storage folder ``<kind>/<uuid>`` and yield it inside
    the transaction that stores the run's rows; if anything fails, the folder is deleted and nothing of
    the run remains. For a job (``job_id``), the transaction first locks the job's row (``SELECT .. FOR
    UPDATE``, as :func:`job_cancel` does): a job already cancelled raises JobCancelled and stores nothing;
    one still running is marked succeeded before the transaction commits (its result is recorded by
    :func:`job_succeed` just after), so a cancel that waited for the lock finds it ended. Either the
    cancel or the run, whatever the timing."""
    prefix = new_prefix(kind)
    store_directory(out_dir, prefix)
    try:
        with transaction.atomic():
            if job_id is not None:
                running = Job.objects.select_for_update().filter(pk=job_id, status=Job.Status.RUNNING)
                if not list(running.values_list("pk", flat=True)):
                    raise JobCancelled(f"cancelled before its {kind} run was stored: nothing was stored")
            yield prefix
            if job_id is not None:
                running.update(
                    status=Job.Status.SUCCEEDED,
                    progress=1.0,
                    progress_message="storing its result",
                    finished_at=timezone.now(),
                )
    except BaseException:
        delete_prefix(prefix)
        raise


def job_succeed(*, job_id, result: dict, files_prefix: str = "") -> bool:
    """running -> succeeded (or a job whose run :func:`run_storing` stored: its result recorded); False
    when the job was cancelled (or failed by the reaper) meanwhile."""
    stored = Q(status=Job.Status.SUCCEEDED, result__isnull=True)
    return bool(
        Job.objects.filter(Q(status=Job.Status.RUNNING) | stored, pk=job_id).update(
            status=Job.Status.SUCCEEDED,
            result=result,
            files_prefix=files_prefix,
            files=list_files(files_prefix),
            progress=1.0,
            progress_message="done",
            finished_at=timezone.now(),
        )
    )


def job_fail(*, job_id, error: str, problems: list[str] | None = None) -> bool:
    """running -> failed with ``error``; ``problems`` (a bad file's, each "path: rule") are kept as the
    result's ``problems``. False when the job had already ended or was cancelled."""
    return bool(
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
            status=Job.Status.FAILED,
            error=error[:5000],
            result={"problems": problems[:MAX_PROBLEMS], "more_problems": max(0, len(problems) - MAX_PROBLEMS)}
            if problems
            else None,
            finished_at=timezone.now(),
            progress_message="failed",
        )
    )


def job_cancel(*, job_id, user) -> bool:
    """queued or running -> cancelled; False when the job had already ended. A queued job's uploads
    are deleted now (no worker will run it); a running job is killed by its worker within a second,
    which then deletes its files (:func:`job_discard_files`)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id, status__in=(Job.Status.QUEUED, Job.Status.RUNNING))
        previous = job.values_list("status", flat=True).first()
        if previous is None:
            return False
        who = getattr(user, "username", "") or "an administrator"
        job.update(status=Job.Status.CANCELLED, finished_at=timezone.now(), progress_message=f"by {who}"[:200])
    job_log(job_id=job_id, line=f"cancelled by {who} ({previous})")
    if previous == Job.Status.QUEUED:
        delete_prefix(job_folder(job_id))
    return True


def job_remove_workdirs(*, job_id) -> None:
    """Remove a job's temporary folders on this machine (a killed job never removes its own)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{job_workdir_prefix(job_id)}*"):
        shutil.rmtree(folder, ignore_errors=True)


def _discard_attempt(job_id) -> None:
    """Delete what one attempt of a job left: the output folder it claimed, whole or half copied (kept
    when a stored run owns it: a job cancelled between storing its run and recording it), and its
    temporary folders."""
    prefix = Job.objects.filter(pk=job_id).values_list("output_prefix", flat=True).first()
    owned = any(run.objects.filter(files_prefix=prefix).exists() for run in (AnalysisRun, AuditRun))
    if prefix and not owned:
        delete_prefix(prefix)
    job_remove_workdirs(job_id=job_id)


def job_discard_files(*, job_id) -> None:
    """Delete what a job that will not finish left: its output folder, its uploaded inputs and its
    temporary folders."""
    _discard_attempt(job_id)
    delete_prefix(job_folder(job_id))


def job_requeue(*, job_id, error: str) -> bool:
    """running -> queued again, once: a retry-safe job (``Job.RETRY_SAFE_KINDS``) on its first attempt
    whose worker died with ``error``. What the dead attempt left is deleted first (its uploaded inputs
    are kept for the next). False, and nothing changed, for any other job."""
    from runs.tasks import run_job

    candidate = Job.objects.filter(
        pk=job_id, status=Job.Status.RUNNING, kind__in=Job.RETRY_SAFE_KINDS, attempts__lt=Job.MAX_ATTEMPTS
    )
    if not candidate.exists():
        return False
    _discard_attempt(job_id)
    with transaction.atomic():
        if not list(candidate.select_for_update().values_list("pk", flat=True)):
            return False  # cancelled meanwhile
        task_id = str(run_job.enqueue(str(job_id)).id)
        candidate.update(
            status=Job.Status.QUEUED,
            task_id=task_id,
            output_prefix="",
            progress=0.0,
            progress_message="queued again: its worker died",
            heartbeat_at=None,
        )
    job_log(job_id=job_id, line=f"its worker died ({error}); queued again (attempt {Job.MAX_ATTEMPTS})")
    return True


def job_abandon(*, job_id, error: str, worker_died: bool = False) -> None:
    """After a job's process ended: if it recorded no outcome, a retry-safe job whose worker died
    (``worker_died``) is queued again once (:func:`job_requeue`), any other fails with ``error``; a job
    that did not succeed (failed, or cancelled while running) keeps no files."""
    if worker_died and job_requeue(job_id=job_id, error=error):
        return
    if job_fail(job_id=job_id, error=error):
        job_log(job_id=job_id, line=f"failed: {error}")
    if Job.objects.filter(pk=job_id).exclude(status=Job.Status.SUCCEEDED).exists():
        job_discard_files(job_id=job_id)
    else:
        job_remove_workdirs(job_id=job_id)


def jobs_reap_stale() -> list:
    """Fail the running jobs whose worker gave no sign of life for JOB_LEASE_SECONDS (it was killed,
    or its machine or the database went away) and delete their files, or queue a retry-safe one again
    once (:func:`job_requeue`); return their ids."""
    lease = settings.JOB_LEASE_SECONDS
    stale = (
        Job.objects.filter(status=Job.Status.RUNNING)
        .alias(alive=Coalesce("heartbeat_at", "started_at"))
        .filter(alive__lt=timezone.now() - timedelta(seconds=lease))
        .values_list("pk", flat=True)
    )
    reaped = []
    for job_id in stale:
        error = (
            f"its worker stopped: no sign of life for {lease} s (JOB_LEASE_SECONDS); the worker was killed "
            "or lost the database. Start the job again."
        )
        if job_requeue(job_id=job_id, error=f"no sign of life for {lease} s"):
            reaped.append(job_id)
        elif job_fail(job_id=job_id, error=error):
            job_log(job_id=job_id, line=f"failed: {error}")
            job_discard_files(job_id=job_id)
            reaped.append(job_id)
    return reaped
