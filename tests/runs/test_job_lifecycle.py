"""The job lifecycle under faults, with the real worker (``job_worker``, each job in a forked child):
a job stuck in a call the in-job timer cannot interrupt is killed past its limit, a job whose
process dies or whose worker died is failed with the reason, a cancelled job stops, the worker
outlives a database error, and no job leaves files behind (issue 22, findings 3 and 16)."""

import multiprocessing
import os
import signal
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.urls import reverse
from django.utils import timezone

from runs import worker
from runs.execution import execute_job
from runs.models import Job
from runs.runners import RUNNERS, JobContext
from runs.services import job_cancel, job_create, job_folder
from runs.storage import list_files, new_prefix, store_directory
from tests.conftest import run_jobs

pytestmark = pytest.mark.django_db(transaction=True)

KIND = Job.Kind.SITUATION_TESTING  # a job tied to no study: the runner is replaced in each test
SAFE, UNSAFE = Job.Kind.SITUATION_TESTING, Job.Kind.STUDY_UPLOAD  # retry-safe or not, both tied to no study


def queued_job(user, kind: str = KIND) -> Job:
    upload = SimpleUploadedFile("data.csv", b"a,b\n1,2\n", content_type="text/csv")
    return job_create(kind=kind, user=user, params={}, uploads={"data": upload})


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


@pytest.mark.parametrize(("kind", "attempts"), [(UNSAFE, 1), (SAFE, 2)])
def test_a_job_whose_process_dies_fails_with_the_reason(researcher, monkeypatch, kind, attempts):
    """An unsafe job fails at the first death; a retry-safe one runs once more, and fails at the second."""
    monkeypatch.setitem(RUNNERS, kind, dies)
    job = queued_job(researcher, kind)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.attempts == attempts, job.log
    assert job.error == "the job's process ended unexpectedly (killed by SIGKILL)"
    assert ("queued again (attempt 2)" in job.log) == (kind == SAFE)
    assert leaves_nothing(job)


def reads_its_input_then_dies_once(context: JobContext):
    """Dies on its first attempt (after reading its upload); the second succeeds with the same upload."""
    inputs = list_files(f"{job_folder(context.job.pk)}/inputs")
    if context.job.attempts == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"attempt": context.job.attempts, "inputs": inputs}, ""


def test_a_retry_safe_job_whose_process_died_runs_again_with_its_inputs(researcher, monkeypatch, client):
    monkeypatch.setitem(RUNNERS, SAFE, reads_its_input_then_dies_once)
    job = queued_job(researcher, SAFE)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.result == {"attempt": 2, "inputs": ["data.csv"]}, job.log
    assert job.attempts == 2 and job.error == ""
    assert "its worker died (the job's process ended unexpectedly (killed by SIGKILL)); queued again" in job.log
    client.force_login(researcher)  # the attempts on the job page and in the API
    page = client.get(reverse("researcher:job", args=[job.pk])).content.decode()
    assert '<dd id="job-attempts">2 (run again once: its first worker died)</dd>' in page
    shown = client.get(reverse("api-job", args=[job.pk])).json()
    assert shown["attempts"] == 2 and shown["retry_safe"] is True


REPORT_FILES = ("a.csv", "b.csv", "report.html")


def stores_a_report(context: JobContext):
    """What a report job does at its end: write the report, claim a run folder, copy the files into it."""
    out = context.workdir / "report"
    out.mkdir()
    for name in REPORT_FILES:
        (out / name).write_text("x\n")
    prefix = new_prefix("plan")
    store_directory(out, prefix)
    return {"attempt": context.job.attempts}, prefix


def run_folders() -> list[str]:
    """The run folders in the run storage (``plan/<uuid>``)."""
    return [f"plan/{name}" for name in default_storage.listdir("plan")[0]] if default_storage.exists("plan") else []


@pytest.fixture
def copy_stalls(settings, tmp_path):
    """The run storage stalls before the report.html of the first copy (tests/runs/blocking_storage.py);
    a thread SIGKILLs the job's process then, mid-copy. Yields the file that tells when it stalled."""
    signal_file = tmp_path / "stalled"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "tests.runs.blocking_storage.BlockingStorage",
            "OPTIONS": {**settings.STORAGES["default"]["OPTIONS"], "signal_file": str(signal_file)},
        },
    }

    def kill_the_job_mid_copy():
        deadline = time.monotonic() + 60
        while not signal_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # the job's process is asleep inside the copy, one file stored
        for child in multiprocessing.active_children():  # the worker's child: the job's process
            os.kill(child.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_job_mid_copy, daemon=True)
    killer.start()
    yield signal_file
    killer.join()


@pytest.mark.parametrize("kind", [UNSAFE, SAFE])
def test_a_job_killed_while_copying_its_report_leaves_no_run_folder(researcher, monkeypatch, copy_stalls, kind):
    """Issue 22, item 3: the run folder is recorded on the job before the copy, so that the clean-up of a job
    SIGKILLed mid-copy finds it. Unsafe: failed, no folder; retry-safe: the second attempt's folder only."""
    monkeypatch.setitem(RUNNERS, kind, stores_a_report)
    job = queued_job(researcher, kind)
    run_jobs()
    job.refresh_from_db()
    half_copied = copy_stalls.read_text().rsplit("/", 1)[0]
    assert half_copied.startswith("plan/"), "the copy stalled"  # after a.csv and b.csv, before report.html
    if kind == UNSAFE:
        assert job.status == Job.Status.FAILED and job.attempts == 1
        assert job.error == "the job's process ended unexpectedly (killed by SIGKILL)"
        assert run_folders() == [] and leaves_nothing(job)
    else:
        assert job.status == Job.Status.SUCCEEDED and job.attempts == 2, job.log
        assert run_folders() == [job.files_prefix] != [half_copied]
        assert sorted(list_files(job.files_prefix)) == sorted(REPORT_FILES)


def stores_a_report_then_fails(context: JobContext):
    stores_a_report(context)
    raise ValueError("the report has no estimate")


def test_a_job_failing_after_storing_its_report_leaves_no_run_folder(researcher, monkeypatch):
    monkeypatch.setitem(RUNNERS, KIND, stores_a_report_then_fails)
    job = queued_job(researcher)
    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error == "the report has no estimate"
    assert job.output_prefix.startswith("plan/") and run_folders() == [] and leaves_nothing(job)


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


@pytest.mark.parametrize(
    ("kind", "attempts", "outcome"), [(UNSAFE, 1, "failed"), (SAFE, 2, "failed"), (SAFE, 1, "rerun")]
)
def test_a_running_job_whose_worker_died_is_failed_by_another_worker(
    researcher, settings, monkeypatch, kind, attempts, outcome
):
    """The lease: an unsafe job, or a retry-safe one on its second attempt, fails with the reason; a retry-safe
    one on its first attempt runs again (attempt 2). Either way the dead attempt's files are deleted."""
    settings.JOB_LEASE_SECONDS = 30
    monkeypatch.setitem(RUNNERS, kind, lambda context: ({"attempt": context.job.attempts}, ""))
    job = queued_job(researcher, kind)
    half_copied = new_prefix("plan")  # what a worker SIGKILLed mid-copy leaves in the run storage
    default_storage.save(f"{half_copied}/a.csv", ContentFile(b"x\n"))
    stale = timezone.now() - timedelta(seconds=31)
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING, started_at=stale, heartbeat_at=stale, attempts=attempts, output_prefix=half_copied
    )
    left = Path(tempfile.mkdtemp(prefix=f"job-{job.pk}-"))  # what a SIGKILLed worker's job leaves
    (left / "partial.csv").write_text("x\n")
    fresh = queued_job(researcher)
    Job.objects.filter(pk=fresh.pk).update(status=Job.Status.RUNNING, heartbeat_at=timezone.now())
    run_jobs()
    job.refresh_from_db()
    assert run_folders() == [] and not left.exists()
    if outcome == "failed":
        assert job.status == Job.Status.FAILED and job.attempts == attempts
        assert job.error.startswith("its worker stopped: no sign of life for 30 s (JOB_LEASE_SECONDS)")
        assert leaves_nothing(job)
    else:
        assert job.status == Job.Status.SUCCEEDED and job.attempts == 2 and job.result == {"attempt": 2}, job.log
        assert "its worker died (no sign of life for 30 s); queued again (attempt 2)" in job.log
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
