"""import_crowd_study dressel-farid: seconds to read the release and build the study, to store it
(study_load, 800 participants, 43,199 answers with bulk_create) and to find it already imported.

Run: .venv/bin/python bench/crowd_import.py [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--repeat 3]
Without --database-url it uses a fresh SQLite file in the temporary folder. Each repeat imports under a
new slug and deletes it afterwards. Goal: a few seconds per import.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "bench-import.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from participation.imports import SOURCES, crowd_study_import
    from participation.models import Participant
    from studies.models import Study

    call_command("migrate", verbosity=0)
    source = SOURCES["dressel-farid"]
    build, store, again = [], [], []
    for i in range(args.repeat):
        slug = f"bench-import-{i}"
        started = time.perf_counter()
        source.build(source.default_path)
        build.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = crowd_study_import(source="dressel-farid", slug=slug)
        store.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert crowd_study_import(source="dressel-farid", slug=slug).action == "already_imported"
        again.append(time.perf_counter() - started)
        Participant.objects.filter(study=result.study).delete()
        Study.objects.filter(slug=slug).delete()
    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"{backend}, {result.participants} participants, {result.answers} answers, median of {args.repeat}:")
    print(f"  read release + build study file: {statistics.median(build):.2f} s")
    print(f"  whole import (build + store):    {statistics.median(store):.2f} s")
    print(f"  second run (already imported):   {statistics.median(again):.2f} s")


if __name__ == "__main__":
    main()
