"""The job worker (``manage.py job_worker``): django-tasks' database worker made to survive faults.

* Each job runs in a forked child process; the worker (the parent) beats the job's heart every
  second, kills the child when a researcher cancels the job or when it is still running
  JOB_KILL_GRACE_SECONDS after JOB_MAX_SECONDS (stuck in a C call the in-job SIGALRM cannot
  interrupt), and fails a job whose child died without recording an outcome (a retry-safe one,
  ``Job.RETRY_SAFE_KINDS``, is queued again once). The job's uploaded inputs, temporary folders and
  the output folder it claimed (``Job.output_prefix``, even half copied) are deleted unless it
  succeeded. The child dies with the worker (``PR_SET_PDEATHSIG``): a SIGKILLed worker's job does
  not run on unwatched. The child runs at a lower CPU priority (``JOB_NICENESS``, default 10), so
  that on a machine shared with the web server participants' requests get the cores first and a job
  only takes what they leave.
* A lost database (a PostgreSQL restart, idle or mid-job) does not end the worker: it closes its
  connections, waits (1, 2, 4, ... up to 30 s) and carries on.
* Before looking for work it fails every running job whose worker gave no sign of life for
  JOB_LEASE_SECONDS (``runs.services.jobs_reap_stale``): a worker SIGKILLed mid-job (a retry-safe
  job is queued again once).
* The job runners' scientific libraries (pandas, scipy, statsmodels, ...) are imported once, when the worker
  starts (:func:`preload_runners`): each job's forked process inherits them instead of importing them again
  (about 3 CPU-seconds, and as long a wait, per job); so are the numba kernels, compiled (:func:`warm_kernels`),
  and plotly's validators.
* Quiet while idle: the library's two lines per poll (its loop starts and ends at each look at an
  empty queue) are dropped (``IdlePolls``); the worker says when it starts, when it goes idle after
  jobs, and, while idle, once every IDLE_HEARTBEAT_SECONDS that it is still there.
"""

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import time

from django.conf import settings
from django.db import DatabaseError
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from core.db_connections import close_connections
from runs.models import Job
from runs.services import job_abandon, job_heartbeat, jobs_reap_stale
from runs.tasks import run_job

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
IDLE_HEARTBEAT_SECONDS = 600.0  # while idle, one "still here" line this often
MAX_BACKOFF_SECONDS = 30.0
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class JobKilled(Exception):
    """The worker killed the job's process, or the process died: recorded on the task result."""


class IdlePolls(logging.Filter):
    """Drops the database worker library's lines of each poll of an empty queue (its loop is run once
    per poll: "Starting worker ..." and "No more tasks to run ..."); its other lines pass."""

    PER_POLL = ("Starting worker worker_id=", "No more tasks to run for worker_id=")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.PER_POLL)


def quiet_idle_polls() -> None:
    """Install :class:`IdlePolls` on the library's logger (once)."""
    library = logging.getLogger("django_tasks_db")
    if not any(isinstance(f, IdlePolls) for f in library.filters):
        library.addFilter(IdlePolls())


class JobWorker(Worker):
    """Runs tasks until stopped (``batch``: until the queue is empty), whatever the database does."""

    def __init__(self, **options) -> None:
        self.drain = options.pop("batch")
        super().__init__(batch=True, **options)  # the library's loop returns when the queue is empty
        quiet_idle_polls()

    def run(self) -> None:
        preload_runners()
        failures = 0
        logger.info(
            "job worker %s started: queues %s, looking for jobs every %g s (quiet while idle)",
            self.worker_id,
            ",".join(self.queue_names),
            self.interval,
        )
        idle_since = last_said = time.monotonic()
        while self.running:
            try:
                for job_id in jobs_reap_stale():
                    logger.warning("job %s failed: its worker stopped giving signs of life", job_id)
                done = self._run_tasks
                super().run()
                failures = 0
                now = time.monotonic()
                if self._run_tasks > done:
                    logger.info(
                        "job worker %s idle: no job waiting (%d run since it started)", self.worker_id, self._run_tasks
                    )
                    idle_since = last_said = now
                elif now - last_said >= IDLE_HEARTBEAT_SECONDS:
                    logger.info("job worker %s idle for %d min", self.worker_id, (now - idle_since) // 60)
                    last_said = now
            except DatabaseError as exc:
                failures += 1
                wait = min(MAX_BACKOFF_SECONDS, 2.0 ** (failures - 1))
                logger.warning("database unavailable (%s); trying again in %g s", exc, wait)
                close_connections()
                time.sleep(wait)
                continue
            finally:
                self.startup_delay = False
            if self.drain or (self.max_tasks is not None and self._run_tasks >= self.max_tasks):
                return
            time.sleep(self.interval)

    def run_task(self, db_task_result: DBTaskResult) -> None:
        if db_task_result.task_path != run_job.module_path:
            super().run_task(db_task_result)
            return
        job_id = db_task_result.args_kwargs["args"][0]
        if not Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).exists():
            super().run_task(db_task_result)  # cancelled, or run already: execute_job only says so
            return
        self.running_task = True
        try:
            self._supervise(db_task_result, job_id=job_id)
        finally:
            self.running_task = False
            self._run_tasks += 1

    def _supervise(self, db_task_result: DBTaskResult, *, job_id: str) -> None:
        """Run the job in a child process and watch it; afterwards fail it if it recorded no outcome (or
        queue it again once if it is retry-safe and its process died) and delete its files unless it
        succeeded (``job_abandon``)."""
        close_connections()
        child = multiprocessing.get_context("fork").Process(target=self._child, args=(db_task_result, os.getpid()))
        child.start()
        reason, died = "", False  # died: its process or its worker, not the job's limit or a cancel
        try:
            reason = self._watch(child, job_id=job_id)
        except BaseException:  # the worker is stopping (a second SIGTERM or Ctrl+C): the job cannot go on
            reason, died = "its worker was stopped while running it", True
            raise
        finally:
            if child.exitcode is None:
                child.kill()
                child.join()
            if child.exitcode != 0 and not reason:
                reason, died = f"the job's process ended unexpectedly ({_describe_exit(child.exitcode)})", True
            job_abandon(
                job_id=job_id,
                error=reason or "the job's process ended without recording a result",
                worker_died=died,
            )
            db_task_result.refresh_from_db(fields=["status"])
            if reason and db_task_result.status == "RUNNING":
                db_task_result.set_failed(JobKilled(reason))

    def _watch(self, child, *, job_id: str) -> str:
        """Wait for the child, beating the job's heart every second; return why it must be killed
        (cancelled, past its hard time limit), or "" once it has ended by itself."""
        limit = settings.JOB_MAX_SECONDS
        deadline = time.monotonic() + limit + settings.JOB_KILL_GRACE_SECONDS if limit else None
        while True:
            wait = HEARTBEAT_SECONDS if deadline is None else min(HEARTBEAT_SECONDS, deadline - time.monotonic())
            child.join(max(wait, 0.01))
            if child.exitcode is not None:
                return ""
            if deadline is not None and time.monotonic() >= deadline:
                return (
                    f"the job ran longer than its limit of {limit:g} s (JOB_MAX_SECONDS) and was killed "
                    f"{settings.JOB_KILL_GRACE_SECONDS:g} s later (JOB_KILL_GRACE_SECONDS)"
                )
            try:
                running = job_heartbeat(job_id=job_id)
                if not running and Job.objects.filter(pk=job_id, status=Job.Status.CANCELLED).exists():
                    return "cancelled"
            except DatabaseError as exc:  # the job goes on; the lease covers a long outage
                logger.warning("heartbeat of job %s failed (%s)", job_id, exc)
                close_connections()

    def _child(self, db_task_result: DBTaskResult, parent: int) -> None:
        """In the child: default signal handlers (the parent decides when the job stops), death with
        the worker (a SIGKILLed worker's job must not run on unwatched), a lower CPU priority than the
        web server's, then the library's task execution (it records the task's outcome)."""
        self.reset_signals()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group: the parent decides
        _die_with_parent(parent)
        lower_priority(settings.JOB_NICENESS)
        super().run_task(db_task_result)


def preload_runners() -> None:
    """Import the job runners (``runs.execution``), compile the jobs' numba kernels (:func:`warm_kernels`) and
    load plotly's validators (every report's figures) in the worker, before any job is forked. Only here: a web
    process that imports ``runs.tasks`` to queue a job must not load them."""
    import plotly.graph_objects as go

    import runs.execution  # noqa: F401

    warm_kernels()
    go.Figure(go.Bar(x=[0], y=[0]))  # plotly reads its validators' JSON at its first figure: here, not in each job


def warm_kernels() -> None:
    """Compile (or load from numba's cache) the numba kernels the jobs call, for the argument types they pass, once
    in the worker: each job's forked process inherits them instead of compiling or loading them again (a fifth of
    the CPU of tests/runs/test_job_matrix.py's audits and situation tests). The audit's exact EaIF and worst
    pairs over a model's read-only scores (``fairness.individual``); situation testing's negative decisions among
    int32 neighbour lists, whole and cut to the largest k (``fairness.neighbour_counts``)."""
    import numpy as np

    from fairness.individual import eaif_details, worst_pairs
    from fairness.neighbour_counts import prefix_counts

    effort, aggregate, risk = np.array([0.0, 0.5, 1.0]), np.zeros(3), np.array([0.0, 1.0, 1.0])
    risk.flags.writeable = False
    eaif_details(effort, aggregate, risk, alpha=1.0)
    worst_pairs(effort, aggregate, risk, alpha=1.0, k=2)
    lists, negative = np.zeros((2, 3), dtype=np.int32), np.zeros(1, dtype=bool)
    negative.flags.writeable = False
    for ids in (lists, lists[:, :2]):
        prefix_counts(ids, negative, [1, 2])


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG); exit at once if
    the parent is already gone."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def lower_priority(niceness: int) -> None:
    """Add ``niceness`` to this process's nice value (Unix; 0 leaves it, the kernel caps it at 19)."""
    if niceness > 0:
        os.nice(niceness)


def _describe_exit(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"killed by {signal.Signals(-exitcode).name}"
    return f"exit code {exitcode}"
