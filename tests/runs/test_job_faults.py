"""Fault tests of the job worker against a throw-away PostgreSQL server of their own (initdb into a
temporary folder, its own port), which they stop and start: never the shared server. A worker
SIGKILLed mid-job (its job fails with the reason once its lease expires, its temporary folder is
removed, the restarted worker runs the next job), and PostgreSQL restarted while the worker is idle
and mid-job (the worker lives on and runs the next job). Marked ``faults``; mandatory when
REQUIRE_POSTGRES=1 (CI), skipped with the reason otherwise when the PostgreSQL binaries are absent."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ROOT, required
from tests.surveys.test_faults import free_port

pytestmark = [pytest.mark.faults, pytest.mark.serial]

LEASE_SECONDS = 3
WAIT_SECONDS = 120  # how long a state may take to appear before the test gives up (not a timing assertion)


def postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


@dataclass
class Postgres:
    """A PostgreSQL server in a temporary folder, run as ``postgres`` when the tests run as root
    (initdb refuses root)."""

    bin: Path
    data: Path
    port: int
    as_user: list[str]
    queue: subprocess.Popen | None = None  # queue_plans' Django process, started by its first call

    def ctl(self, *args: str) -> None:
        options = f"-p {self.port} -k {self.data.parent} -c listen_addresses=127.0.0.1 -c fsync=off"
        command = [str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "60", *args]
        subprocess.run([*self.as_user, *command], check=True, capture_output=True)

    def stop(self) -> None:
        self.ctl("-m", "fast", "stop")

    def start(self) -> None:
        self.ctl("-l", str(self.data.parent / "server.log"), "start")

    @property
    def url(self) -> str:
        return f"postgres://fairness@127.0.0.1:{self.port}/faults"

    def close_queue(self) -> None:
        if self.queue is not None:
            self.queue.communicate(timeout=30)  # end of its input: it returns
            self.queue = None


def migrated_template() -> dict | None:
    """The connection settings of the session's migrated test-database template on PostgreSQL
    (``tests/db_template.py``), or None (SQLite, or no template: ``--nomigrations``, ``--reuse-db``)."""
    from django.db import connection

    from tests.db_template import migrations_key, shared_name

    if connection.vendor != "postgresql":
        return None
    db = connection.settings_dict
    name = f"{shared_name(db['NAME'])}_template_{migrations_key()}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        found = cursor.fetchone()
    return {**db, "NAME": name} if found else None


def migrate(server: Postgres, template: dict | None) -> None:
    """The faults database as ``migrate`` makes it: a copy of the session's migrated template when there is one
    (pg_dump into psql: a fifth of a second, where migrating takes seconds of CPU), else ``migrate``."""
    if template is None:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env(server), check=True)
        return
    source = [
        *("-h", str(template["HOST"]), "-p", str(template["PORT"]), "-U", template["USER"]),
        *("--no-owner", "--no-privileges", template["NAME"]),
    ]
    dump = subprocess.run(
        [str(server.bin / "pg_dump"), *source],
        env={**os.environ, "PGPASSWORD": template["PASSWORD"]},
        check=True,
        capture_output=True,
    )
    target = ["-h", "127.0.0.1", "-p", str(server.port), "-U", "fairness", "-d", "faults"]
    command = [str(server.bin / "psql"), *target, "-q", "-v", "ON_ERROR_STOP=1"]
    subprocess.run(command, input=dump.stdout, check=True, capture_output=True)


@pytest.fixture(scope="module")
def postgres(django_db_setup, django_db_blocker) -> Iterator[Postgres]:
    with django_db_blocker.unblock():
        template = migrated_template()
    pg_bin = postgres_bin()
    if pg_bin is None:
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) for the fault tests")
        pytest.skip("needs the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) for a throw-away server")
    root = Path(tempfile.mkdtemp(prefix="fault-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the folder and the server belong to postgres
        shutil.chown(root, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    server = Postgres(pg_bin, root / "data", free_port(), as_user)
    subprocess.run(
        [*as_user, str(pg_bin / "initdb"), "-D", str(server.data), "-U", "fairness", "-A", "trust", "--no-sync"],
        check=True,
        capture_output=True,
    )
    server.start()
    try:
        with psycopg.connect(f"host=127.0.0.1 port={server.port} user=fairness dbname=postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE faults")
        migrate(server, template)
        yield server
    finally:
        server.close_queue()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def env(server: Postgres, tmp: Path | None = None) -> dict:
    result = {**os.environ, "DATABASE_URL": server.url, "DJANGO_DEBUG": "1", "JOB_LEASE_SECONDS": str(LEASE_SECONDS)}
    if tmp is not None:  # the worker's temporary folders and run files, to check what stays behind
        result.update(TMPDIR=str(tmp), REPORTS_DIR=str(tmp / "runs"))
    return result


QUEUE_PLANS = """
import json
import sys
from django.contrib.auth import get_user_model
from django.db import connections
from runs.plan_parameters import PLAN_PARAMETERS
from runs.services import job_create
from studies.models import Study
from studies.services import study_load
from tests.conftest import DEMO_FILE
for line in sys.stdin:  # one request a line: the numbers of simulated studies of the plans to queue, in order
    connections.close_all()  # the server may have been restarted since the last request
    user, _ = get_user_model().objects.get_or_create(username="alice")
    study = Study.objects.filter(slug="effort-demo").first()
    study = study or study_load(spec=json.loads(DEMO_FILE.read_text()), owner=user).study
    defaults = {name: p.default for name, p in PLAN_PARAMETERS.items()}
    ids = []
    for studies in json.loads(line):  # small studies, the fewest resamples: the claims are about the worker
        params = defaults | {"studies": studies, "n": 12, "resamples": 100}
        ids.append(str(job_create(kind="plan", user=user, study=study, params=params).pk))
    print("queued", json.dumps(ids), flush=True)
"""


def queue_plans(server: Postgres, *studies: int) -> list[str]:
    """Queue study plan jobs of ``studies`` simulated studies each (long ones, short ones), in this
    order (a researcher's later job ranks lower: they run in this order). One Django process queues every
    plan of the module (each process costs a Django start and the imports)."""
    if server.queue is None:
        server.queue = subprocess.Popen(
            [sys.executable, "manage.py", "shell", "-c", QUEUE_PLANS],
            cwd=ROOT,
            env=env(server),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    assert server.queue.stdin is not None and server.queue.stdout is not None
    server.queue.stdin.write(json.dumps([int(n) for n in studies]) + "\n")
    server.queue.stdin.flush()
    while not (answer := server.queue.stdout.readline()).startswith("queued "):  # past what Django says
        assert answer, f"the queueing process ended ({server.queue.poll()})"
    return json.loads(answer.removeprefix("queued "))


JOB_COLUMNS = ("status", "error", "log", "progress", "attempts", "output_prefix", "files_prefix")


def job_row(server: Postgres, job_id: str) -> dict:
    """The job's row, read directly (the server may be down: then an empty dict)."""
    try:
        with psycopg.connect(f"host=127.0.0.1 port={server.port} user=fairness dbname=faults", connect_timeout=3) as c:
            query = f"SELECT {', '.join(JOB_COLUMNS)} FROM runs_job WHERE id = %s"
            row = c.execute(query, (job_id,)).fetchone()  # type: ignore[call-overload]  # a fixed column list
    except psycopg.OperationalError:
        return {}
    return dict(zip(JOB_COLUMNS, row, strict=True)) if row else {}


def cancel_job(server: Postgres, job_id: str) -> None:
    """What ``job_cancel`` does to the row (its worker then stops the job within a second)."""
    with psycopg.connect(f"host=127.0.0.1 port={server.port} user=fairness dbname=faults") as c:
        c.execute("UPDATE runs_job SET status = 'cancelled', finished_at = now() WHERE id = %s", (job_id,))


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def start_worker(server: Postgres, tmp: Path, extra_env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "job_worker", "--interval", "0.2", "--no-startup-delay"],
        cwd=ROOT,
        env=env(server, tmp) | (extra_env or {}),
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "worker.log", "ab"),  # noqa: SIM115  # closed with the process
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's exit status may never be collected here)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def status_is(server: Postgres, job_id: str, *statuses: str):
    return lambda: job_row(server, job_id).get("status") in statuses


def runs_a_short_job(server: Postgres, worker: subprocess.Popen, job_id: str | None = None) -> None:
    """The worker runs the job ``job_id`` (or a new short one) to success and is still alive."""
    job_id = job_id or queue_plans(server, 1)[0]
    wait_for(status_is(server, job_id, "succeeded", "failed"), "the next job to finish")
    row = job_row(server, job_id)
    assert row["status"] == "succeeded", row
    assert worker.poll() is None, "the worker died"


@dataclass
class Workers:
    """The module's job workers, one at a time, with one temporary folder and one run storage: a test takes the
    worker the previous one left running (a worker start imports the science stack: seconds of CPU and of wait)
    and leaves its last one running; the fixture stops it when the module ends. The run storage stalls in the
    middle of copying a report while its signal file (``stalled``) is missing (tests/runs/blocking_storage.py):
    the module starts with it present, the copy test removes it."""

    server: Postgres
    tmp: Path
    current: subprocess.Popen | None = None

    @property
    def runs(self) -> Path:
        return self.tmp / "runs"

    @property
    def stalled(self) -> Path:
        return self.tmp / "stalled"

    def start(self) -> subprocess.Popen:
        """A new worker (what the supervisor, make serve or systemd, does when one dies)."""
        storage = {
            "STORAGE_BACKEND": "tests.runs.blocking_storage.BlockingStorage",
            "STORAGE_OPTIONS": json.dumps({"location": str(self.runs), "signal_file": str(self.stalled)}),
        }
        self.current = start_worker(self.server, self.tmp, storage)
        return self.current

    def take(self) -> subprocess.Popen:
        """The running worker (a new one if the previous test left none)."""
        return self.current if self.current is not None and self.current.poll() is None else self.start()


@pytest.fixture(scope="module")
def workers(postgres, tmp_path_factory) -> Iterator[Workers]:
    found = Workers(postgres, tmp_path_factory.mktemp("workers"))
    found.stalled.write_text("")
    try:
        yield found
    finally:
        if found.current is not None:
            stop(found.current)


def test_a_job_whose_worker_was_sigkilled_fails_and_the_restarted_worker_goes_on(postgres, workers):
    """A study plan is retry-safe: its first worker's death queues it again (attempt 2), the second fails it
    with the reason."""
    worker, tmp = workers.take(), workers.tmp
    job_id, next_job = queue_plans(postgres, 5000, 1)
    for attempt in (1, 2):
        wait_for(
            lambda attempt=attempt: (
                (row := job_row(postgres, job_id)).get("attempts") == attempt and row.get("progress", 0) > 0
            ),
            f"attempt {attempt} of the long job to make progress",
        )
        assert list(tmp.glob(f"job-{job_id}-*")), "the job's temporary folder"
        children = [int(pid) for pid in Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text().split()]
        assert children, "the job runs in a child of the worker"
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        worker = workers.start()
        wait_for(lambda children=children: not any(alive(pid) for pid in children), "the job to die with its worker")
    wait_for(status_is(postgres, job_id, "failed", "succeeded"), "the dead worker's job to be failed")
    row = job_row(postgres, job_id)
    assert row["status"] == "failed" and row["attempts"] == 2, row
    assert row["error"].startswith(f"its worker stopped: no sign of life for {LEASE_SECONDS} s"), row
    assert f"its worker died (no sign of life for {LEASE_SECONDS} s); queued again (attempt 2)" in row["log"]
    assert not list(tmp.glob(f"job-{job_id}-*")), "a temporary folder was left behind"
    runs_a_short_job(postgres, worker, next_job)


def test_a_second_sigterm_stops_the_job_and_queues_it_again_at_once(postgres, workers):
    """Issue 22: the first SIGTERM lets the running job finish (a graceful stop); a second one stops the worker
    and its job now. A study plan is retry-safe, so the stopped worker queues it again itself (attempt 2),
    without waiting for its lease to expire, and deletes its temporary folder; the next worker runs attempt 2
    (stopped here by a cancel) and then the next job."""
    worker, tmp = workers.take(), workers.tmp
    job_id, next_job = queue_plans(postgres, 5000, 1)
    wait_for(lambda: job_row(postgres, job_id).get("progress", 0) > 0, "the long job to make progress")
    children = [int(pid) for pid in Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text().split()]
    worker.send_signal(signal.SIGTERM)
    time.sleep(1)
    assert worker.poll() is None and job_row(postgres, job_id)["status"] == "running", "a graceful stop waits"
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(WAIT_SECONDS) == 1
    wait_for(lambda: not any(alive(pid) for pid in children), "the job's process to end with its worker")
    row = job_row(postgres, job_id)
    assert row["status"] == "queued" and row["attempts"] == 1, row  # at once: no lease had to expire
    assert "its worker died (its worker was stopped while running it); queued again (attempt 2)" in row["log"]
    assert not list(tmp.glob(f"job-{job_id}-*")), "a temporary folder was left behind"
    worker = workers.start()
    wait_for(
        lambda: (row := job_row(postgres, job_id)).get("attempts") == 2 and row.get("progress", 0) > 0,
        "attempt 2 to make progress",
    )
    cancel_job(postgres, job_id)
    runs_a_short_job(postgres, worker, next_job)


def test_a_worker_sigkilled_while_copying_a_report_leaves_no_run_folder_and_its_job_runs_again(postgres, workers):
    """Issue 22, item 3: the run folder is recorded on the job before the copy. A study plan (retry-safe) stalls
    while its report is copied into the run storage (tests/runs/blocking_storage.py: plan.csv stored, report.html
    not yet); its worker is SIGKILLed. The restarted worker finds the job by its lease, deletes the half-copied
    folder and runs the job once more (attempt 2) to success: one run folder, the second attempt's."""
    worker, runs, stalled = workers.take(), workers.runs, workers.stalled
    earlier = {p.name for p in (runs / "plan").iterdir()} if (runs / "plan").exists() else set()  # other tests'
    stalled.unlink()  # the next report's copy stalls
    (job_id,) = queue_plans(postgres, 1)
    wait_for(lambda: stalled.exists() and stalled.read_text(), "the copy of the report to stall")
    half_copied = stalled.read_text().rsplit("/", 1)[0]
    assert job_row(postgres, job_id)["output_prefix"] == half_copied  # recorded before the first file
    assert sorted(p.name for p in (runs / half_copied).iterdir()) == ["plan.csv"]
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    workers.start()
    wait_for(status_is(postgres, job_id, "succeeded", "failed"), "the dead worker's job to end")
    row = job_row(postgres, job_id)
    assert row["status"] == "succeeded" and row["attempts"] == 2, row
    assert "its worker died (no sign of life for 3 s); queued again (attempt 2)" in row["log"]
    assert not (runs / half_copied).exists(), "the half-copied run folder was left behind"
    assert [f"plan/{name}" for name in {p.name for p in (runs / "plan").iterdir()} - earlier] == [row["files_prefix"]]
    assert "report.html" in {p.name for p in (runs / row["files_prefix"]).iterdir()}
    assert not list(workers.tmp.glob(f"job-{job_id}-*")), "a temporary folder was left behind"


def test_the_worker_outlives_a_postgres_restart_while_idle(postgres, workers):
    """The PostgreSQL restart tests are the module's last: no other test's worker runs beside the one that outlives
    both restarts."""
    worker = workers.take()
    runs_a_short_job(postgres, worker)
    postgres.stop()
    time.sleep(1)  # the worker polls a missing server for a while (every 0.2 s)
    postgres.start()
    runs_a_short_job(postgres, worker)


def test_the_worker_outlives_a_postgres_restart_mid_job(postgres, workers):
    worker, tmp = workers.take(), workers.tmp
    job_id, next_job = queue_plans(postgres, 5000, 1)
    wait_for(lambda: job_row(postgres, job_id).get("progress", 0) > 0, "the long job to make progress")
    postgres.stop()
    time.sleep(1)
    postgres.start()
    wait_for(
        lambda: (row := job_row(postgres, job_id)).get("status") in ("failed", "succeeded") or row.get("attempts") == 2,
        "the interrupted job to end or to run again",
    )
    row = job_row(postgres, job_id)
    if row["status"] == "failed":
        assert row["error"], row  # a reason, not an endless "running"
    else:  # retry-safe: its process died with the database, so it runs once more (stopped here)
        assert row["attempts"] == 2 and "queued again (attempt 2)" in row["log"], row
        cancel_job(postgres, job_id)
    wait_for(lambda: not list(tmp.glob(f"job-{job_id}-*")), "the job's temporary folders to be removed")
    assert worker.poll() is None, "the worker died with the database"
    runs_a_short_job(postgres, worker, next_job)
