"""The researcher's dashboard at 2,000 (or 20,000) participants: time of the whole view (login session,
queries, template, arrivals chart) through Django's test client, p50 / p95 over repeats, with the
process's CPU time and its PostgreSQL server process's (read from /proc) beside the wall time, and the
machine's load average (on a shared machine the wall time includes waiting for a core).

Three cases: (a) repeated views of an unchanged study (the figures kept per process); (b) the view after a
change: a participant saved a page, one arrived, one completed (each a line); (c) the first view in a
fresh process: the process caches emptied and the database connection closed before each view (a
restarted server), and, with --fresh-processes N, the first view of N new Python processes (after the
server's warm-up, config/warm_up.py, as gunicorn's master does it before forking).

Run: .venv/bin/python bench/dashboard.py [--participants 2000] [--repeat 30] [--simulate 2000]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--fresh] [--fresh-processes 3]
Without --database-url it uses the SQLite file --sqlite (default: bench-dashboard.sqlite3 in the
temporary folder). The data are kept between runs: participants are simulated (simulate_participants,
the same services a browser uses; about 5 minutes for 2,000) only while the demo study has fewer
than --participants; --fresh empties the database first (use a database of its own); the copies' missing
answer-quality verdicts are stored (as ``backfill_quality_verdicts`` does); the participants the change cases
add are deleted at the end. --export-only times the exports alone (--exports of them). Also prints the time of
the full export (``export_tables``), which the dashboard built on every view before its figures came
from database aggregates, and of the cached export that API pages and downloads read
(``cached_export``: the fingerprint's aggregate queries) with its size in memory. Goal: p50 < 300 ms.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]


def database_arguments(parser: argparse.ArgumentParser, sqlite_name: str) -> None:
    """A benchmark's --database-url, --sqlite (default: ``sqlite_name`` in the temporary folder) and --fresh."""
    parser.add_argument("--database-url")
    parser.add_argument("--sqlite", default=str(Path(tempfile.gettempdir()) / sqlite_name))
    parser.add_argument("--fresh", action="store_true", help="empty the database first")


def parsed_and_set_up(parser: argparse.ArgumentParser, sqlite_name: str) -> argparse.Namespace:
    """The arguments with :func:`database_arguments` and --profile FILE (cProfile statistics of the timed work),
    Django set up on the database they name."""
    database_arguments(parser, sqlite_name)
    parser.add_argument("--profile", help="write cProfile statistics (CPU time) of the timed work to this file")
    args = parser.parse_args()
    setup(args.database_url, args.sqlite)
    return args


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


def clone_participants(slug: str, n: int, batch: int = 500) -> None:
    """Add participants to ``slug`` until it has ``n``, as copies of the simulated ones (their page
    visits and answers copied row for row; new pseudonym, external id, ticket and seed; arrivals shifted
    by whole days so the arrivals chart spreads): the dashboard's queries meet the same volume and shape
    of data as simulated participants, in seconds instead of hours (simulating 20,000 through the services
    would take about 50 minutes)."""
    import uuid
    from datetime import timedelta

    from django.db import connection, transaction
    from django.db.models import Max

    from participation.models import Answer, PageVisit, Participant
    from studies.models import Study

    templates = list(Participant.objects.filter(study__slug=slug, simulated=True).order_by("id"))
    if not templates:
        raise SystemExit(f"{slug} has no simulated participant to copy")
    have = Participant.objects.filter(study__slug=slug).count()
    ticket = Participant.objects.filter(study__slug=slug).aggregate(top=Max("ticket"))["top"] or 0
    made = 0
    while have + made < n:
        chunk = [templates[(made + i) % len(templates)] for i in range(min(batch, n - have - made))]
        with transaction.atomic():
            copies = []
            for i, template in enumerate(chunk):
                shift = timedelta(days=(have + made + i) // len(templates))
                ticket += 1
                copies.append(
                    Participant(
                        **{
                            field.attname: getattr(template, field.attname)
                            for field in Participant._meta.concrete_fields
                            if field.attname not in ("id", "pseudonym")
                        }
                        | {
                            "pseudonym": uuid.uuid4(),
                            "external_id": f"copy-{have + made + i}",
                            "ticket": ticket if template.ticket is not None else None,
                            "seed": template.seed + have + made + i,
                            "arrived_at": template.arrived_at + shift,
                            "consented_at": template.consented_at and template.consented_at + shift,
                            "completed_at": template.completed_at and template.completed_at + shift,
                            "withdrawn_at": template.withdrawn_at and template.withdrawn_at + shift,
                        }
                    )
                )
            Participant.objects.bulk_create(copies)
            pairs = [(template.id, copy.id) for template, copy in zip(chunk, copies, strict=True)]
            values = ", ".join(["(%s, %s)"] * len(pairs))
            with connection.cursor() as cursor:  # in the database: INSERT ... SELECT, no rows through Python
                for model in (PageVisit, Answer):
                    names = [f.column for f in model._meta.concrete_fields if f.column not in ("id", "participant_id")]
                    cursor.execute(
                        f"WITH m(old, new) AS (VALUES {values}) "
                        f"INSERT INTO {model._meta.db_table} (participant_id, {', '.join(names)}) "
                        f"SELECT m.new, {', '.join('t.' + n for n in names)} FROM {model._meta.db_table} t "
                        "JOIN m ON t.participant_id = m.old",
                        [value for pair in pairs for value in pair],
                    )
        made += len(chunk)
    for study in Study.objects.filter(slug=slug):  # the copies' tickets issued: the next consent takes a new one
        top = Participant.objects.filter(study=study).aggregate(top=Max("ticket"))["top"]
        if top is not None and study.tickets_issued <= top:
            Study.objects.filter(pk=study.pk).update(tickets_issued=top + 1)
    print(f"copied {made} participants (of {len(templates)} simulated ones) in {slug}")


def populate(n: int, *, wipe: bool, simulate: int) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from participation.models import Participant
    from participation.simulate import simulate_participants
    from research.models import ParticipantQuality
    from research.quality_writes import backfill_verdicts
    from studies.models import Study
    from studies.services import study_load
    from studies.study_file import read_study_file

    call_command("migrate", verbosity=0)
    if wipe:
        call_command("flush", interactive=False, verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    study_load(spec=read_study_file(ROOT / "studies" / "bundled" / "effort_demo.json"), owner=user)
    have = Participant.objects.filter(study__slug="effort-demo").count()
    simulated = Participant.objects.filter(study__slug="effort-demo", simulated=True).count()
    if have < n and simulated < simulate:
        started = time.perf_counter()
        count = min(n, simulate) - have
        simulate_participants("effort-demo", n=count, seed=1000 + have)
        print(f"simulated {count} participants in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    clone_participants("effort-demo", n)
    print(f"  ({time.perf_counter() - started:.0f} s)")
    started = time.perf_counter()  # the copies' quality verdicts, as backfill_quality_verdicts stores them
    filled = backfill_verdicts(Study.objects.filter(slug="effort-demo"))
    print(f"stored {filled} missing quality verdicts in {time.perf_counter() - started:.0f} s")
    if connection.vendor == "postgresql":  # as autovacuum does after bulk inserts: the visibility map that lets
        with connection.cursor() as cursor:  # the dashboard's aggregates read its index alone
            for table in (Participant._meta.db_table, ParticipantQuality._meta.db_table):
                cursor.execute(f"VACUUM ANALYZE {table}")


def database_cpu_ms() -> float | None:
    """CPU time so far of this connection's PostgreSQL server process (``/proc``: the server runs on this
    machine), in ms, with the clock tick's 10 ms resolution; None on SQLite or when it cannot be read."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime + stime


def timed(fn, repeat: int, before=None) -> str:
    """p50 / p95 wall time of ``fn`` over ``repeat`` calls (``before`` runs untimed before each), after a
    warm-up call, with the p50 CPU time of this process and of its database server process, and the
    1-minute load average at the end."""
    fn()  # warm-up: imports, caches, connection
    walls, cpus, database = [], [], []
    for _ in range(repeat):
        if before is not None:
            before()
        server = database_cpu_ms()
        started, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        after = database_cpu_ms()
        if server is not None and after is not None:
            database.append(after - server)
    db = f"  database CPU p50 {statistics.median(database):5.0f} ms" if len(database) == repeat else ""
    return (
        f"p50 {statistics.median(walls):7.1f} ms  p95 {np.percentile(walls, 95):7.1f} ms  "
        f"CPU p50 {statistics.median(cpus):6.1f} ms{db}  load {os.getloadavg()[0]:.1f}"
    )


def first_view_in_new_process(args: argparse.Namespace) -> str:
    """Wall and CPU time of the first dashboard view of a new Python process (Django set up and the server's
    warm-up done, untimed)."""
    command = [sys.executable, __file__, "--first-view", "--sqlite", args.sqlite]
    if args.database_url:
        command += ["--database-url", args.database_url]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument(
        "--simulate",
        type=int,
        default=2000,
        help="participants simulated through the services; beyond them, copies of them (clone_participants)",
    )
    database_arguments(parser, "bench-dashboard.sqlite3")
    parser.add_argument(
        "--fresh-processes", type=int, default=3, help="first views timed in as many new Python processes"
    )
    parser.add_argument("--first-view", action="store_true", help=argparse.SUPPRESS)  # one process's first view
    parser.add_argument("--exports", type=int, help="full exports timed (default: --repeat / 10, at least 3; 0: none)")
    parser.add_argument("--export-only", action="store_true", help="time the exports only, not the dashboard")
    args = parser.parse_args()
    setup(args.database_url, args.sqlite)
    if args.first_view:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from config.warm_up import warm_up

        warm_up()  # as gunicorn's master does before it forks the workers
        client = Client()
        client.force_login(get_user_model().objects.get(username="bench"))
        started, cpu = time.perf_counter(), time.process_time()
        assert client.get("/researcher/studies/effort-demo/").status_code == 200
        wall, cpu = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
        print(f"{wall:.1f} ms (CPU {cpu:.1f} ms)")
        return
    populate(args.participants, wipe=args.fresh, simulate=args.simulate)

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

    if not args.export_only:
        dashboard_cases(args, view)
    exports = max(3, args.repeat // 10) if args.exports is None else args.exports
    if not exports:
        return
    print(f"full export (export_tables):         {timed(lambda: export_tables('effort-demo'), exports)}")
    if args.export_only:
        return
    cached_export("effort-demo")
    print(f"cached export (a page's lookup):     {timed(lambda: cached_export('effort-demo'), args.repeat)}")
    size = sum(frame.memory_usage(deep=True).sum() for _, frame in cached_export("effort-demo").items())
    print(f"one cached export in memory:         {size / 1e6:.1f} MB")


def dashboard_cases(args: argparse.Namespace, view) -> None:
    """The dashboard's cases (a), (b) and (c) (the module's docstring)."""
    from django.db import connection
    from django.db.models import F

    from core.caching import clear_process_caches
    from participation.models import Participant
    from participation.services import participant_arrive
    from participation.simulate import simulate_participants

    print(f"(a) dashboard, repeated:             {timed(view(), args.repeat)}")
    moved = Participant.objects.filter(study__slug="effort-demo").order_by("pk").first()
    last = Participant.objects.order_by("-pk").values_list("pk", flat=True).first()
    seeds = iter(range(10**6 + int(time.time()) % 10**6, 10**9))

    def saved_page():  # as when a participant saves a page between two views: the figures are computed again
        Participant.objects.filter(pk=moved.pk).update(position=F("position") + 1)

    def arrived():
        participant_arrive(study_slug="effort-demo", external_id=f"bench-arrival-{next(seeds)}", simulated=True)

    def completed():  # one more participant takes the whole study (arrives, consents, saves every page)
        simulate_participants("effort-demo", n=1, seed=next(seeds), decline_rate=0.0)

    for name, change in (("saved a page", saved_page), ("arrived", arrived), ("completed", completed)):
        print(f"(b) dashboard after one {name + ':':14} {timed(view(), args.repeat, before=change)}")
    Participant.objects.filter(pk=moved.pk).update(position=moved.position)
    Participant.objects.filter(study__slug="effort-demo", pk__gt=last).delete()

    def restarted():  # a restarted server: nothing kept in the process, a new database connection (opened untimed)
        clear_process_caches()
        connection.close()
        connection.ensure_connection()

    print(f"(c) first view, caches emptied:      {timed(view(), args.repeat, before=restarted)}")
    for _ in range(args.fresh_processes):
        print(f"(c) first view of a new process:     {first_view_in_new_process(args)}")
    print(f"dashboard (?participants=real):      {timed(view('?participants=real'), args.repeat)}")


if __name__ == "__main__":
    main()
