"""The job lifecycle under faults, with the real worker (``job_worker``, each job in a forked child):
a job stuck in a call the in-job timer cannot interrupt is killed past its limit, a job whose
process dies or whose worker died is failed with the reason, a cancelled job stops, the worker
outlives a database error, and no job leaves files behind (issue 22, findings 3 and 16)."""

import os
import signal
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.utils import timezone

from runs import worker
from runs.execution import execute_job
from runs.models import Job
from runs.runners import RUNNERS, JobContext
from runs.services import job_cancel, job_create, job_folder
from runs.storage import list_files
from tests.conftest import run_jobs

pytestmark = pytest.mark.django_db(transaction=True)

KIND = Job.Kind.SITUATION_TESTING  # a job tied to no study: the runner is replaced in each test


def queued_job(user) -> Job:
    upload = SimpleUploadedFile("data.csv", b"a,b\n1,2\n", content_type="text/csv")
    return job_create(kind=KIND, user=user, params={}, uploads={"data": upload})


def workdirs(job: Job) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"job-{job.pk}-*"))


def leaves_nothing(job: Job) -> bool:
    """No uploaded inputs in the run storage and no temporary folder on this machine."""
    return not list_files(job_folder(job.pk)) and not workdirs(job)


def stuck_in_c(context: JobContext):
    """A long call that ignores SIGALRM, as a C loop does (the timer's signal stays pending)."""
    (context.workdir / "partial.csv").write_text("x\n")
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(20)
    return {"never": "reached"}, ""


def test_a_job_stuck_past_its_limit_is_killed_by_its_worker(researcher, settings, monkeypatch):
    settings.JOB_MAX_SECONDS = 1
    settings.JOB_KILL_GRACE_SECONDS = 1
    monkeypatch.setitem(RUNNERS, KIND, stuck_in_c)
    job = queued_job(researcher)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED, job.log
    assert "limit of 1 s (JOB_MAX_SECONDS) and was killed 1 s later (JOB_KILL_GRACE_SECONDS)" in job.error
    assert job.finished_at is not None and leaves_nothing(job)


def dies(context: JobContext):
    (context.workdir / "partial.csv").write_text("x\n")
    os.kill(os.getpid(), signal.SIGKILL)  # out of memory, or an operator's kill -9 of the job
    return {}, ""


def test_a_job_whose_process_dies_fails_with_the_reason(researcher, monkeypatch):
    monkeypatch.setitem(RUNNERS, KIND, dies)
    job = queued_job(researcher)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "the job's process ended unexpectedly (killed by SIGKILL)"
    assert leaves_nothing(job)


def cancelled_while_running(context: JobContext):
    """A researcher cancels the job while it computes (here from inside it, at a known moment)."""
    (context.workdir / "partial.csv").write_text("x\n")
    assert job_cancel(job_id=context.job.pk, user=context.job.created_by)
    while True:  # a computation that never looks at the job's status: the worker must stop it
        time.sleep(0.05)


def test_a_running_job_cancelled_is_stopped_and_shown_cancelled(researcher, monkeypatch):
    monkeypatch.setitem(RUNNERS, KIND, cancelled_while_running)
    job = queued_job(researcher)
    run_jobs()  # returns only because the worker killed the job
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED and job.error == ""
    assert "cancelled by alice (running)" in job.log
    assert leaves_nothing(job)


def test_a_cancelled_queued_job_never_runs(researcher, monkeypatch):
    ran = []
    monkeypatch.setitem(RUNNERS, KIND, lambda context: ran.append(1) or ({}, ""))
    job = queued_job(researcher)
    assert job_cancel(job_id=job.pk, user=researcher)
    assert not list_files(job_folder(job.pk))  # its upload is gone at once
    assert execute_job(str(job.pk)) == Job.Status.CANCELLED and not ran
    assert not job_cancel(job_id=job.pk, user=researcher)  # already ended


def test_a_running_job_whose_worker_died_is_failed_by_another_worker(researcher, settings):
    settings.JOB_LEASE_SECONDS = 30
    job = queued_job(researcher)
    stale = timezone.now() - timedelta(seconds=31)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, started_at=stale, heartbeat_at=stale)
    left = Path(tempfile.mkdtemp(prefix=f"job-{job.pk}-"))  # what a SIGKILLed worker's job leaves
    (left / "partial.csv").write_text("x\n")
    fresh = queued_job(researcher)
    Job.objects.filter(pk=fresh.pk).update(status=Job.Status.RUNNING, heartbeat_at=timezone.now())
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error.startswith("its worker stopped: no sign of life for 30 s (JOB_LEASE_SECONDS)")
    assert leaves_nothing(job)
    fresh.refresh_from_db()
    assert fresh.status == Job.Status.RUNNING  # its worker is alive: left alone


def test_the_worker_outlives_a_lost_database(researcher, monkeypatch):
    """A database error between jobs (a PostgreSQL restart) makes the worker wait and carry on; the
    library's worker exited. The real restart is in test_job_faults.py."""
    calls = []

    def reap_once_unavailable():
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return []

    monkeypatch.setattr(worker, "jobs_reap_stale", reap_once_unavailable)
    monkeypatch.setattr(worker.time, "sleep", lambda seconds: None)
    monkeypatch.setitem(RUNNERS, KIND, lambda context: ({"ok": True}, ""))
    job = queued_job(researcher)
    run_jobs()
    job.refresh_from_db()
    assert len(calls) == 2 and job.status == Job.Status.SUCCEEDED and job.result == {"ok": True}


def reports_its_priority(context: JobContext):
    return {"niceness": os.getpriority(os.PRIO_PROCESS, 0)}, ""


@pytest.mark.parametrize("niceness", [0, 7])
def test_a_job_runs_at_a_lower_cpu_priority_than_its_worker(researcher, settings, monkeypatch, niceness):
    """On cores shared with the web server the job yields to participants' requests (JOB_NICENESS)."""
    settings.JOB_NICENESS = niceness
    monkeypatch.setitem(RUNNERS, KIND, reports_its_priority)
    job = queued_job(researcher)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["niceness"] == min(19, os.getpriority(os.PRIO_PROCESS, 0) + niceness)
