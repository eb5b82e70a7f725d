"""Simulated participants per second: ``simulate_participants`` saving each participant's pages at once
(``participation.services.participant_submit_all``) against page by page (``page_shown``, then ``page_submit``
for each page, as the web path does).

Run: .venv/bin/python bench/simulate.py [--participants 40] [--study FILE.json]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]
(the bench database is WIPED first; without --database-url a fresh SQLite file). Default study:
``bench/every_task_type.json`` (31 pages, a page of every task type).

The same study, the same number of participants each way, one way after the other in this process (different
seeds, so each participant is new). Prints, per way: participants per second (wall), round trips to the database
per participant (statements; PostgreSQL takes the two INSERTs of saving at once in one), this process's CPU
seconds and, on PostgreSQL, the database backend's (``/proc/<pg_backend_pid()>/stat``: a server on this machine).
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent


def _backend_cpu(pid: int | None) -> float:
    """User + system CPU seconds of the PostgreSQL backend ``pid`` (0 when it cannot be read)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=40, help="participants each way")
    parser.add_argument("--study", type=Path, default=ROOT / "bench" / "every_task_type.json", help="a study file")
    parser.add_argument("--database-url", help="a PostgreSQL database (wiped); default a fresh SQLite file")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from participation import simulate
    from studies.models import Study
    from studies.services import study_load

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    slug = study_load(spec=json.loads(args.study.read_text())).study.slug
    Study.objects.filter(slug=slug).update(status=Study.Status.LIVE)
    simulate.simulate_participants(slug, n=1, seed=0, decline_rate=0.0)  # caches and imports warm
    backend = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
    statements = 0

    def count(execute, sql, params, many, context):
        nonlocal statements
        statements += 1
        return execute(sql, params, many, context)

    n = args.participants
    print(f"{args.study.name} on {connection.vendor}: {n} participants each way")
    for seed, (way, at_once) in enumerate([("page by page", False), ("at once", True)], start=1):
        patch = nullcontext() if at_once else mock.patch.object(simulate, "submits_at_once", return_value=False)
        statements = 0
        own = resource.getrusage(resource.RUSAGE_SELF)
        database, started = _backend_cpu(backend), time.perf_counter()
        with connection.execute_wrapper(count), patch:
            report = simulate.simulate_participants(slug, n=n, seed=seed, decline_rate=0.0)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - own.ru_utime - own.ru_stime
        assert report.completed == n, report
        print(
            f"  {way:>12}: {n / wall:6.1f} participants/s, {statements / n:6.1f} round trips/participant, "
            f"CPU {cpu:5.2f} s here + {_backend_cpu(backend) - database:5.2f} s database backend, {wall:5.2f} s wall"
        )


if __name__ == "__main__":
    main()
