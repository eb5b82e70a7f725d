"""Benchmark: the model audit of a researcher's tabular model (``audit_models`` with ``--metric-from`` and
``--utility-from``), 100 COMPAS defendants and 3 models, no effort columns (goal < 30 s on this machine).

Builds two studies from the first --subjects defendants of ProPublica's two-year file (features age,
priors_count, juv_fel_count, c_charge_degree; race and sex as groups): a ``choice`` study (the audited study and
the utility model's source) and a ``comparable`` study (the human metric's source), each answered by
--participants simulated participants (kept between runs; --fresh empties the database first). The audit's
subjects file holds three models: COMPAS's decile score, a priors rule (label only) and an age score. Prints
the audit's wall and CPU time, the time of each stage (the audit's progress) and the ratio to the 30 s goal.

Run: .venv/bin/python bench/audit.py [--subjects 100] [--participants 150] [--resamples 1000] [--seed 1]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--sqlite FILE] [--fresh] [--profile FILE]
Without --database-url it uses the SQLite file --sqlite (default: bench-audit.sqlite3 in the temporary folder).
"""

import argparse
import cProfile
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
# bench/ leaves the path: its coverage.py would hide the coverage package numba imports
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p).resolve() != ROOT / "bench")]
GOAL_SECONDS = 30.0


def populate(csv: Path, participants: int, *, wipe: bool) -> None:
    """The two studies, each with ``participants`` simulated participants (built once, kept between runs)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from participation.models import Participant
    from participation.simulate import simulate_participants
    from studies.models import Study
    from studies.services import study_load
    from tests.studies.test_builder_features import FEATURES, built

    call_command("migrate", verbosity=0)
    if wipe:
        call_command("flush", interactive=False, verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    for template, slug in (("choice", "bench-choose"), ("comparable", "bench-alike")):
        if not Study.objects.filter(slug=slug).exists():
            spec = built(csv, template, feature_columns=FEATURES, per_participant=20, slug=slug)
            study_load(spec=spec, owner=user)
        have = Participant.objects.filter(study__slug=slug).count()
        if have < participants:
            started = time.perf_counter()
            simulate_participants(slug, n=participants - have, seed=100 + have, decline_rate=0)
            print(f"{slug}: simulated {participants - have} participants in {time.perf_counter() - started:.0f} s")


def main() -> None:
    from bench.dashboard import parsed_and_set_up

    parser = argparse.ArgumentParser()
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--participants", type=int, default=150)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parsed_and_set_up(parser, "bench-audit.sqlite3")  # then the apps' modules
    from django.db import connection

    from runs.audit_parameters import AuditParameters
    from runs.audit_runs import STAGES, audit_run_create
    from runs.stage_progress import StageProgress
    from tests.studies.test_builder_features import FEATURES, compas_csv

    folder = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    csv = compas_csv(folder, args.subjects)
    populate(csv, args.participants, wipe=args.fresh)
    table = pd.read_csv(csv)
    subjects = table[["id", "race", "sex", *FEATURES, "two_year_recid"]].assign(
        score_compas=table["ai_score"],
        label_priors=(table["priors_count"] > 3).astype(int),
        score_age=(1 - (table["age"] - 18) / 60).clip(0, 1),
    )
    path = folder / "audit_subjects.csv"
    subjects.to_csv(path, index=False)
    progress = StageProgress(report=lambda fraction, message: None, stages=STAGES)
    parameters = AuditParameters(
        metric_from="bench-alike",
        utility_from="bench-choose",
        groups=("race",),
        outcome_column="two_year_recid",
        seed=args.seed,
        n_resamples=args.resamples,
    )
    print(
        f"{connection.vendor}: audit of {args.subjects} subjects x 3 models, {args.participants} participants per "
        f"source study, {args.resamples} resamples (seed {args.seed})"
    )
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    audit_run_create(
        slug="bench-choose", subjects_file=path, out_dir=folder / "audit", parameters=parameters, progress=progress
    )
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for stage, seconds in progress.durations().items():
        print(f"  {stage:<32} {seconds:6.1f} s")
    print(f"audit: wall {wall:.1f} s, CPU {cpu:.1f} s; {wall / GOAL_SECONDS:.2f} x the {GOAL_SECONDS:.0f} s goal")
    print(f"load average (1, 5, 15 min): {', '.join(f'{load:.1f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
