"""The full export (``research.export.export_tables``) of the first --participants participants of a study
(by id): CPU seconds of this process per export (median of --repeat, after one unmeasured build) and the table
sizes; then the answers and the pairs table built alone from the same loaded answers and page visits (median of 5).
Run on a copy of a bench database (bench/dashboard.py's
20,000-participant effort demo), before and after a change, at the same load.

Run: .venv/bin/python bench/export_tables.py --database-url postgres://USER:PASS@127.0.0.1:5432/DB
     [--slug effort-demo] [--participants 2000] [--repeat 3]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--slug", default="effort-demo")
    parser.add_argument("--participants", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db.models import Q

    from participation.models import Participant
    from research.export import export_tables

    pks = Participant.objects.filter(study__slug=args.slug).order_by("pk").values_list("pk", flat=True)
    where = Q(pk__in=list(pks[: args.participants]))
    tables = export_tables(args.slug, participants=where)
    cpu = []
    for _ in range(args.repeat):
        started = time.process_time()
        export_tables(args.slug, participants=where)
        cpu.append(time.process_time() - started)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    sizes = ", ".join(f"{name} {len(frame):,}" for name, frame in tables.items())
    print(
        f"export_tables, {args.participants:,} participants: CPU median {statistics.median(cpu):.2f} s "
        f"(min {min(cpu):.2f}) of {args.repeat}; load {load}; rows: {sizes}"
    )
    tables_alone(args.slug, list(pks[: args.participants]))


def tables_alone(slug: str, pks: list[int]) -> None:
    """CPU of the answers table and of the pairs table built alone (median of 5, after one unmeasured build)."""
    import pandas as pd

    from participation.models import Participant
    from research import export, export_answers
    from research.tables import COLUMNS
    from studies.models import Study

    studies = {s.pk: s for s in Study.objects.filter(slug=slug)}
    people = list(Participant.objects.filter(pk__in=pks).select_related("condition").order_by("arrived_at", "pk"))
    source = export_answers.Source(
        slug, studies, people, export._answers(pks), export._visits(pks), dict.fromkeys(pks, 0)
    )
    builds = {
        "answers table": lambda: export_answers.answers_table(source, list(COLUMNS["answers"])),
        "pairs table": lambda: pd.DataFrame(
            export_answers.task_table_rows(source, "pairs"), columns=list(COLUMNS["pairs"])
        ),
    }
    for label, build in builds.items():
        build()
        cpu = []
        for _ in range(5):
            started = time.process_time()
            build()
            cpu.append(time.process_time() - started)
        print(f"{label} alone: CPU median {statistics.median(cpu):.3f} s (min {min(cpu):.3f}) of 5")


if __name__ == "__main__":
    main()
