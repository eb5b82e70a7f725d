"""Memory of a web worker streaming the answers CSV of 10,000 participants x 100 answers.

Run: .venv/bin/python bench/export_stream.py --database-url postgres://USER:PASS@127.0.0.1:5432/DB
[--participants 10000] [--answers 100] (the bench database is WIPED first).

1. Set-up (its own process): the effort demo, a simulated participant as the template, then
   ``--participants`` copies of it with its first ``--answers`` answers, in SQL (``INSERT ... SELECT``).
2. Measurement (a fresh interpreter, as a web worker: ``config.wsgi`` with its warm-up): a researcher
   downloads ``/researcher/studies/effort-demo/export/answers.csv`` through Django's test client and the
   bench reads the streamed body chunk by chunk. It prints the resident memory (``VmRSS``) before, the
   peak during the download (``VmHWM``, reset before the request through ``/proc/self/clear_refs``),
   the growth (peak - before), the rows and megabytes sent, and whether pandas was loaded (it must not
   be: the stream is written without it). Goal: growth under 50 MB.
"""

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SETUP = textwrap.dedent(
    """
    import json, sys
    import django
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model
    from participation.models import Answer, Participant
    from participation.simulate import simulate_participants
    from studies.services import study_load

    n, per = int(sys.argv[1]), int(sys.argv[2])
    get_user_model().objects.create_user("bench", password="bench-pass-123")
    study_load(spec=json.load(open("studies/bundled/effort_demo.json")), owner=get_user_model().objects.get())
    simulate_participants("effort-demo", n=6, seed=1)  # the one with most answers is the template
    template = max(Participant.objects.all(), key=lambda p: p.answers.count())
    Participant.objects.exclude(pk=template.pk).delete()
    first = list(Answer.objects.filter(participant=template).order_by("pk").values_list("pk", flat=True)[:per])
    assert len(first) == per, f"the template participant has only {len(first)} answers"
    people = Participant._meta.db_table
    answers = Answer._meta.db_table
    fresh = {"id", "external_id", "pseudonym", "ticket", "seed"}
    copied = [f.column for f in Participant._meta.concrete_fields if f.column not in fresh]
    columns = ", ".join(copied)
    answer_columns = ", ".join(
        f.column for f in Answer._meta.concrete_fields if f.column not in ("id", "participant_id")
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {people} ({columns}, external_id, pseudonym, seed) "
            f"SELECT {columns}, 'bench-' || g, gen_random_uuid(), g FROM {people}, generate_series(1, %s) g "
            f"WHERE {people}.id = %s",
            [n - 1, template.pk],
        )
        cursor.execute(f"DELETE FROM {answers} WHERE participant_id = %s AND NOT (id = ANY(%s))", [template.pk, first])
        cursor.execute(
            f"INSERT INTO {answers} ({answer_columns}, participant_id) "
            f"SELECT {', '.join('a.' + c for c in answer_columns.split(', '))}, p.id FROM {answers} a, {people} p "
            f"WHERE a.participant_id = %s AND p.id <> %s",
            [template.pk, template.pk],
        )
    print(f"set up: {Participant.objects.count():,} participants, {Answer.objects.count():,} answers")
    """
)

MEASURE = textwrap.dedent(
    """
    import re, sys, time
    import django
    django.setup()
    import config.wsgi  # noqa: F401  (what a gunicorn worker imports, warm-up included)
    from django.contrib.auth import get_user_model
    from django.test import Client

    def status(key):
        return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024

    client = Client(HTTP_HOST="localhost")
    client.force_login(get_user_model().objects.get(username="bench"))
    assert client.get("/researcher/studies/effort-demo/").status_code == 200  # loaded once, as a busy worker has
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident size
    started = time.perf_counter()
    response = client.get("/researcher/studies/effort-demo/export/answers.csv")
    assert response.status_code == 200, response
    rows, size = 0, 0
    for chunk in response.streaming_content:
        rows += chunk.count(b"\\n")
        size += len(chunk)
    seconds = time.perf_counter() - started
    peak, after = status("VmHWM"), status("VmRSS")
    print(f"streamed {rows - 1:,} answer rows, {size / 2**20:.0f} MB of CSV, in {seconds:.1f} s")
    print(f"worker resident memory: before {before:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB")
    print(f"growth during the download: {peak - before:.1f} MB (goal: under 50 MB)")
    print("pandas loaded:", "pandas" in sys.modules)
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="a PostgreSQL database (wiped)")
    parser.add_argument("--participants", type=int, default=10_000)
    parser.add_argument("--answers", type=int, default=100)
    args = parser.parse_args()
    env = {**os.environ, "DATABASE_URL": args.database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    py = sys.executable
    subprocess.run([py, "-c", SETUP, str(args.participants), str(args.answers)], cwd=ROOT, env=env, check=True)
    subprocess.run([py, "-c", MEASURE], cwd=ROOT, env=env, check=True)


if __name__ == "__main__":
    main()
