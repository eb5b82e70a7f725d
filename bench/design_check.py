"""Benchmark: the design check (``runs.design_check.check_design``) of the builder's choice study on a CSV
prepared from ProPublica's COMPAS file (the first ``--subjects`` defendants, ``--per-participant`` pairs each),
at ``--participants`` split by the builder's 4 stakeholder roles: wall and CPU time of the check (its
``--replications`` runs, then, when an estimate is not identified, the advice search growing one run), the
time per run, and its warnings. The reference data (``../shared/reference-data``) is read, never copied.

Run: .venv/bin/python bench/design_check.py [--subjects 100] [--participants 150] [--per-participant 20]
     [--replications 3] [--no-advice]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the project, not bench/ (its coverage.py)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from runs.design_check import check_design  # noqa: E402
from studies.builder import build_study  # noqa: E402
from studies.services import stored_file  # noqa: E402
from tests.studies.test_builder_features import FEATURES, compas_csv  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--participants", type=int, default=150)
    parser.add_argument("--per-participant", type=int, default=20)
    parser.add_argument("--replications", type=int, default=3)
    parser.add_argument("--no-advice", dest="advise", action="store_false")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = compas_csv(Path(folder), n=args.subjects)
        spec = build_study(
            "choice",
            path,
            "id",
            score_column="ai_score",
            feature_columns=FEATURES,
            per_participant=args.per_participant,
        )
    spec, _ = stored_file(spec)
    block = next(b for b in spec["blocks"] if b.get("task") == "choose")
    wall, cpu = time.perf_counter(), time.process_time()
    check = check_design(
        spec, participants=args.participants, by=["role"], replications=args.replications, advise=args.advise
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"{args.subjects} subjects, {len(block['pairs'])} pairs, {args.per_participant} per participant, "
        f"{args.participants} participants in {check.n_groups} groups, {args.replications} runs"
        f"{' + advice search' if check.advice else ''}: wall {wall:.1f} s, CPU {cpu:.1f} s"
    )
    if not check.advice:
        print(f"per run: wall {wall / args.replications:.1f} s, CPU {cpu / args.replications:.1f} s")
    for warning in check.warnings or ["no warning"]:
        print(warning[:300])
    print("advice:", check.advice)


if __name__ == "__main__":
    main()
