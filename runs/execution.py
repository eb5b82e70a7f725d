"""Executing a job in a worker: a private working folder, a time limit, progress and log in the
job row, the output stored through the storage API; a failed job leaves no files behind."""

import logging
import tempfile
from pathlib import Path

from django.conf import settings

from core.db_connections import close_connections
from core.time_limit import time_limit
from research.study_upload import StashNotStored
from runs.models import Job
from runs.runners import RUNNERS, JobContext
from runs.services import (
    JobCancelled,
    job_claim_output,
    job_discard_files,
    job_fail,
    job_log,
    job_progress,
    job_start,
    job_succeed,
    job_workdir_prefix,
)
from runs.stage_progress import StageProgress
from runs.storage import RunStorageError, prefixes_claimed
from studies.services import StudyOwnedByOther

logger = logging.getLogger(__name__)

# Errors that mean "this input or request cannot be run" (a bad file, an unknown study: LookupError, a
# full disk, another researcher's slug), shown to the researcher as they are.
EXPECTED_ERRORS = (ValueError, LookupError, RunStorageError, StashNotStored, StudyOwnedByOther)


class JobTimeout(Exception):
    pass


def _timeout_behind(exc: BaseException) -> BaseException:
    """The JobTimeout that ``exc`` comes from, else ``exc``: a timeout inside a transaction can make its
    clean-up fail too (a rollback on the interrupted connection), raising a database error in its place."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, JobTimeout):
            return cause
        cause = cause.__context__
    return exc


def execute_job(job_id: str) -> str:
    """Run one queued job to the end; return its final status."""
    if not job_start(job_id=job_id):
        return Job.objects.values_list("status", flat=True).filter(pk=job_id).first() or "missing"
    job = Job.objects.select_related("study").get(pk=job_id)
    job_log(job_id=job.pk, line=f"started {job.get_kind_display().lower()}")
    try:
        with (
            tempfile.TemporaryDirectory(prefix=job_workdir_prefix(job.pk)) as workdir,
            time_limit(
                settings.JOB_MAX_SECONDS,
                lambda: JobTimeout(
                    f"the job ran longer than its limit of {settings.JOB_MAX_SECONDS:g} s (JOB_MAX_SECONDS)"
                ),
            ),
            prefixes_claimed(lambda prefix: job_claim_output(job_id=job.pk, prefix=prefix)),
        ):
            context = JobContext(
                job=job,
                workdir=Path(workdir),
                progress=StageProgress(  # writes at most every 0.5 s, and when a stage starts or ends
                    report=lambda fraction, message: job_progress(job_id=job.pk, fraction=fraction, message=message),
                    log=lambda line: job_log(job_id=job.pk, line=line),
                ),
                log=lambda line: job_log(job_id=job.pk, line=line),
            )
            result, files_prefix = RUNNERS[job.kind](context)
    except JobCancelled as exc:  # a run job cancelled before it stored its run (runs.services.run_storing)
        job_discard_files(job_id=job.pk)
        job_log(job_id=job.pk, line=str(exc))
        return Job.Status.CANCELLED
    except Exception as raised:
        error = _timeout_behind(raised)
        if isinstance(error, JobTimeout):  # it may have cut a query short: its connection is then unusable
            close_connections()
        if isinstance(error, (*EXPECTED_ERRORS, JobTimeout)):
            job_discard_files(job_id=job.pk)  # a failed job keeps no files
            job_log(job_id=job.pk, line=f"failed: {error}")
            problems = getattr(error, "problems", None)  # a bad study file or CSV: each problem as path: rule
            job_fail(job_id=job.pk, error=str(error), problems=[str(p) for p in problems] if problems else None)
            return Job.Status.FAILED
        logger.exception("job %s failed", job.pk)
        job_discard_files(job_id=job.pk)  # a failed job keeps no files
        job_log(job_id=job.pk, line=f"failed: internal error ({type(error).__name__})")
        job_fail(job_id=job.pk, error=f"internal error ({type(error).__name__}: {error}); the server log has details")
        return Job.Status.FAILED
    if not job_succeed(job_id=job.pk, result=result, files_prefix=files_prefix):
        # a job that stores no run, cancelled in the moment before it recorded its result: its worker
        # deletes its files (runs.services.job_abandon)
        job_log(job_id=job.pk, line="finished after it was cancelled; its result is not recorded")
        return Job.objects.values_list("status", flat=True).get(pk=job.pk)
    job_log(job_id=job.pk, line="finished")
    return Job.Status.SUCCEEDED
