"""The researcher's dashboard with 2,000 simulated participants: time of the whole view (login
session, queries, template, arrivals chart) through Django's test client, p50 / p95 over repeats.

Run: .venv/bin/python bench/dashboard.py [--participants 2000] [--repeat 30]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--fresh]
Without --database-url it uses the SQLite file --sqlite (default: bench-dashboard.sqlite3 in the
temporary folder). The data are kept between runs: participants are simulated (simulate_participants,
the same services a browser uses; about 5 minutes for 2,000) only while the demo study has fewer
than --participants; --fresh empties the database first (use a database of its own). Also prints the time of
the full export (``export_tables``), which the dashboard built on every view before its figures came
from database aggregates, and of the cached export that API pages and downloads read
(``cached_export``: the fingerprint's aggregate queries) with its size in memory. Goal: p95 < 300 ms.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]


def setup(database_url: str | None, sqlite: str) -> None:
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = sqlite
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver"
    import django

    django.setup()


def populate(n: int, *, wipe: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from participation.models import Participant
    from participation.simulate import simulate_participants
    from studies.services import study_load
    from studies.study_file import read_study_file

    call_command("migrate", verbosity=0)
    if wipe:
        call_command("flush", interactive=False, verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    study_load(spec=read_study_file(ROOT / "studies" / "bundled" / "effort_demo.json"), owner=user)
    have = Participant.objects.filter(study__slug="effort-demo").count()
    if have < n:
        started = time.perf_counter()
        simulate_participants("effort-demo", n=n - have, seed=1000 + have)
        print(f"simulated {n - have} participants in {time.perf_counter() - started:.0f} s")


def timed(fn, repeat: int) -> str:
    fn()  # warm-up: imports, caches, connection
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return f"p50 {statistics.median(times):7.1f} ms  p95 {np.percentile(times, 95):7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--database-url")
    parser.add_argument("--fresh", action="store_true", help="empty the database first")
    parser.add_argument("--sqlite", default=str(Path(tempfile.gettempdir()) / "bench-dashboard.sqlite3"))
    args = parser.parse_args()
    setup(args.database_url, args.sqlite)
    populate(args.participants, wipe=args.fresh)

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from participation.models import Participant
    from research.export import cached_export, export_tables

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    n = Participant.objects.filter(study__slug="effort-demo").count()
    print(f"{connection.vendor}: {n} participants in effort-demo")

    def view(query: str = ""):
        def get():
            response = client.get(f"/researcher/studies/effort-demo/{query}")
            assert response.status_code == 200, response.status_code

        return get

    print(f"dashboard (all participants):  {timed(view(), args.repeat)}")
    print(f"dashboard (?participants=real): {timed(view('?participants=real'), args.repeat)}")
    print(f"full export (export_tables):    {timed(lambda: export_tables('effort-demo'), max(3, args.repeat // 10))}")
    cached_export("effort-demo")
    print(f"cached export (a page's lookup): {timed(lambda: cached_export('effort-demo'), args.repeat)}")
    size = sum(frame.memory_usage(deep=True).sum() for _, frame in cached_export("effort-demo").items())
    print(f"one cached export in memory:    {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
