"""The job worker is quiet while idle: no line per poll of an empty queue (the library's loop logs two),
one line when it starts, one when it goes idle after jobs, and while idle one every
IDLE_HEARTBEAT_SECONDS; a job's own lines still show."""

import logging
import time

import pytest

from runs import worker as worker_module
from runs.models import Job
from runs.services import job_create
from runs.worker import IDLE_HEARTBEAT_SECONDS, JobWorker

pytestmark = pytest.mark.django_db(transaction=True)


def _run_polls(monkeypatch, polls: int) -> JobWorker:
    """A worker polling every second for ``polls`` polls, on a fake clock (each sleep advances it)."""
    clock = {"now": 1000.0, "sleeps": 0}
    worker = JobWorker(
        queue_names=["default"],
        excluded_queue_names=[],
        interval=1.0,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="w1",
    )

    def sleep(seconds: float) -> None:
        clock["now"] += seconds
        clock["sleeps"] += 1
        if clock["sleeps"] >= polls:
            worker.running = False

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(time, "monotonic", lambda: clock["now"])
    worker.run()
    return worker


def _capture(caplog) -> None:
    """INFO from the worker's and the library's loggers, whatever level an earlier ``job_worker`` run in this
    process left them at (``--verbosity 0`` sets CRITICAL); caplog restores the levels after the test."""
    for name in ("django_tasks_db", worker_module.__name__):
        caplog.set_level(logging.INFO, logger=name)


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name in ("django_tasks_db", worker_module.__name__)]


@pytest.mark.slow
def test_an_idle_worker_says_it_started_then_once_every_ten_minutes(monkeypatch, caplog):
    _capture(caplog)
    polls = int(25 * 60)  # 25 minutes at one poll a second
    _run_polls(monkeypatch, polls)
    lines = _lines(caplog)
    assert IDLE_HEARTBEAT_SECONDS == 600
    assert lines == [
        "job worker w1 started: queues default, looking for jobs every 1 s (quiet while idle)",
        "job worker w1 idle for 10 min",
        "job worker w1 idle for 20 min",
    ], lines[:5]


def test_a_job_shows_and_the_worker_then_says_it_is_idle(monkeypatch, caplog, researcher, demo_study):
    _capture(caplog)
    monkeypatch.setattr(worker_module.JobWorker, "_supervise", lambda self, result, job_id: result.set_successful(None))
    job_create(kind=Job.Kind.ANALYSIS, user=researcher, study=demo_study, params={"seed": 1})
    _run_polls(monkeypatch, 5)
    lines = _lines(caplog)
    assert lines[0].startswith("job worker w1 started") and lines[-1] == (
        "job worker w1 idle: no job waiting (1 run since it started)"
    )
    assert not [line for line in lines if line.startswith(("Starting worker", "No more tasks to run"))]


def test_the_worker_imports_the_runners_before_it_forks_a_job(monkeypatch):
    """``preload_runners``: the worker imports ``runs.execution`` (the runners' scientific libraries) when it
    starts, so that each job's forked process inherits it instead of importing it again."""
    import sys

    monkeypatch.delitem(sys.modules, "runs.execution")  # restored after the test
    _run_polls(monkeypatch, 1)
    assert "runs.execution" in sys.modules
