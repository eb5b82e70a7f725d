import fnmatch
import itertools
import json
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import TransactionTestCase
from threadpoolctl import threadpool_limits

from tests.shared_chromium import browser, shared_chromium  # noqa: F401 - the browser tests' fixtures, global

ROOT = Path(__file__).resolve().parent.parent
DEMO_FILE = ROOT / "studies" / "bundled" / "effort_demo.json"
REFERENCE_DATA = ROOT.parent / "shared" / "reference-data"
DASK_CLUSTER = "tests/conftest.py::dask_cluster"

# One BLAS thread per test process (and the servers and workers it starts): xdist runs a process per core, and
# OpenBLAS's own threads then only contend, spinning for CPU (an error_rates bootstrap: 2.3 times the CPU).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
threadpool_limits(1)  # the libraries already loaded (numpy is, by pytest's plugins)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``make test`` (pytest-xdist, ``--dist loadgroup``) the tests that share a module- or class-scoped
    set-up of this suite (simulated studies, loaded reference data, a throw-away server) run on one worker, which
    builds it once; every other test goes to whichever worker is free. A package- or session-scoped set-up is
    built once per worker instead (``tests/runs/db_snapshot.py``): grouping every test of a package that uses
    one would put the whole package on one worker."""
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        shared = {
            fixture.baseid
            for definitions in (fixtures.name2fixturedefs.values() if fixtures else ())
            for fixture in definitions
            if fixture.scope in ("module", "class") and fixture.baseid  # baseid "": a plugin's (pytest-django's)
        }
        if "dask_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(DASK_CLUSTER))  # one worker starts the cluster (13 CPU-s)
        elif shared:
            item.add_marker(pytest.mark.xdist_group(min(shared)))


_MARKED_SERIAL = re.compile(r"pytest\.mark\.serial\b")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``make test``'s serial part (``-m serial``) imports only the test modules where a test can be marked serial
    (the marker, ``pytest.mark.`` and its name, in the module or in a conftest.py of its folders): importing every
    module of the suite, for its few serial tests, cost that process about 12 CPU-s. ``tests/test_xdist_groups.py``
    checks that the marker is applied in no other way."""
    if config.option.markexpr != "serial" or not fnmatch.fnmatch(collection_path.name, "test_*.py"):
        return None
    folders = [folder for folder in collection_path.parents if folder == ROOT or ROOT in folder.parents]
    sources = [collection_path, *(folder / "conftest.py" for folder in folders)]
    return not any(path.is_file() and _MARKED_SERIAL.search(path.read_text()) for path in sources) or None


def run_id() -> str:
    """This test run's own id: pytest-xdist's, shared by its workers, or the process id of a run without it."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))[:12]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix, django_db_use_migrations, django_db_keepdb
) -> None:
    """pytest-django's per-worker database names; an SQLite test database file of this run's own
    (``.test-db.sqlite3[_gwN]_<run id>``: two runs in one clone sharing one file deleted each other's at their
    set-up or end, and a job process or server then opened an empty file by its name, "no such table"); and each
    test database a copy of one migrated template (``tests/db_template.py``: about 10 CPU seconds of migrations
    saved per process) unless migrations are off or the database is kept (``--nomigrations``, ``--reuse-db``)."""
    from django.conf import settings
    from django.db import connections

    from tests.db_template import copy_from_template

    database = settings.DATABASES["default"]
    run_suffix = ""
    if database["ENGINE"] == "django.db.backends.sqlite3":
        run_suffix = f"_{run_id()}"
        database["TEST"]["NAME"] = f"{database['TEST']['NAME']}{run_suffix}"
    if django_db_use_migrations and not django_db_keepdb:
        for connection in connections.all():
            copy_from_template(connection, run_suffix=run_suffix)


def _fixture_teardown(self: TransactionTestCase) -> None:
    """A transactional test's database emptied by ``tests/db_template.py``'s ``flush_after_test`` (only the tables
    it wrote); Django's own flush where the test flushes a subset of the apps or restores serialized data."""
    from django.db import connections

    from tests.db_template import flush_after_test

    if self.available_apps is not None or self.serialized_rollback:
        return _django_fixture_teardown(self)
    for alias in self._databases_names(include_mirrors=False):
        flush_after_test(connections[alias])


_django_fixture_teardown = TransactionTestCase._fixture_teardown
TransactionTestCase._fixture_teardown = _fixture_teardown  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Each test's database is rolled back afterwards, so ids are reused with other content."""
    from django.core.cache import cache

    from core.caching import clear_process_caches

    clear_process_caches()
    cache.clear()  # per-address counters (participation/throttle.py) start afresh in every test


_DASK_CLUSTERS: list = []  # the running shared cluster, if any


@pytest.fixture
def dask_cluster():
    """One two-worker local Dask cluster (worker processes) for every test of a process that needs a running cluster:
    starting one costs about 13 CPU-seconds (each worker process imports the science stack), and its processes' CPU
    is counted when it closes (worker threads in the test process instead took 2 to 30 times the CPU of each test).
    Its tests run in the parallel part, on one worker (``DASK_CLUSTER``, grouped above), which starts it once and
    closes it after the last of them (``pytest_runtest_teardown``: an idle cluster's heartbeats cost CPU for the
    rest of the run). They leave it as they found it: a test that kills a worker starts a cluster of its own
    (marked ``serial``), and ``fairness.distributed``'s own LocalCluster (no scheduler address) is tested there too."""
    if not _DASK_CLUSTERS:
        from distributed import LocalCluster

        _DASK_CLUSTERS.append(LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"))
    return _DASK_CLUSTERS[0]


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Close the shared Dask cluster once the next test does not need it (it starts again if a later one does)."""
    if _DASK_CLUSTERS and "dask_cluster" not in getattr(nextitem, "fixturenames", ()):
        _DASK_CLUSTERS.pop().close()


@pytest.fixture
def dask_scheduler(dask_cluster, monkeypatch):
    """Jobs and commands run on the shared cluster: DASK_SCHEDULER_ADDRESS names its scheduler (as a server's
    environment would); yields the cluster."""
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_cluster.scheduler_address)
    return dask_cluster


@pytest.fixture
def demo_spec() -> dict:
    return json.loads(DEMO_FILE.read_text())


@pytest.fixture
def demo_study(db, demo_spec, researcher):
    from studies.services import study_load

    return study_load(spec=demo_spec, owner=researcher).study


@pytest.fixture
def researcher(db):
    return get_user_model().objects.create_user("alice", password="alice-pass-123")


@pytest.fixture
def other_researcher(db):
    return get_user_model().objects.create_user("bob", password="bob-pass-123")


def required(variable: str) -> bool:
    """True when CI demands the real component named by ``variable`` (then absence is a failure)."""
    return os.environ.get(variable, "") == "1"


_STORAGE_FOLDERS = itertools.count()


@pytest.fixture(autouse=True)
def _run_storage(settings, tmp_path_factory):
    """Run files (reports, job uploads) go to a fresh folder per test, never the project's reports/: a new name
    under this process's temporary folder, made by the storage when a test first saves a file (most never do;
    ``mktemp`` made one per test, listing the earlier ones each time)."""
    folder = tmp_path_factory.getbasetemp() / "storage" / str(next(_STORAGE_FOLDERS))
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(folder)}},
    }


def run_jobs() -> None:
    """Run every queued job with the real worker (``job_worker --batch``), then restore the signal
    handlers the worker installs. Needs a transactional database (the worker commits)."""
    import signal

    from django.core.management import call_command

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)}
    try:
        call_command("job_worker", batch=True, interval=0, startup_delay=False, reload=False, verbosity=0)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
