"""Benchmark: one analysis job of the demo study as the tests run it (``runs.analysis_runs.design_report_write``:
the blocks' analysis, the effort pipeline with its crossed mixed models, the sensitivity to flagged participants
and the report), by default 16 simulated participants (two left unfinished) and 100 resamples. Prints its CPU and
wall time (the best of --repeat runs: on a shared machine the wall time includes waiting for a core), how often
the study's export was built and the figures of the results (alphas) to check against another version.

Run: .venv/bin/python bench/analysis_run.py [--participants 16] [--resamples 100] [--repeat 3]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--sqlite FILE] [--fresh] [--profile FILE]
Without --database-url it uses the SQLite file --sqlite (default: bench-analysis-run.sqlite3 in the temporary
folder); the simulated study is kept between runs (--fresh empties the database first).
"""

import argparse
import cProfile
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
SLUG = "effort-demo"


def populate(participants: int, *, wipe: bool) -> None:
    """The demo study (BTS over at least 2 respondents) with ``participants`` simulated participants, two of them
    left unfinished, as tests/surveys/test_analysis_runs.py makes it (built once, kept between runs)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from participation.models import Participant
    from participation.simulate import simulate_participants
    from studies.models import Study
    from studies.services import study_load

    call_command("migrate", verbosity=0)
    if wipe:
        call_command("flush", interactive=False, verbosity=0)
    if Study.objects.filter(slug=SLUG).exists():
        return
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    spec = json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text())
    study = study_load(spec=spec, owner=owner).study
    study.spec["bonus"]["honesty"]["min_respondents"] = 2
    study.save(update_fields=["spec"])
    simulate_participants(SLUG, n=participants, seed=5)
    unfinished = Participant.objects.filter(study=study, status="completed").order_by("pk")[:2]
    Participant.objects.filter(pk__in=[p.pk for p in unfinished]).update(status="active")


def main() -> None:
    from bench.dashboard import parsed_and_set_up

    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=16)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parsed_and_set_up(parser, "bench-analysis-run.sqlite3")  # then the apps' modules
    from django.db import connection

    import research.export
    from runs.analysis_runs import design_report_write
    from studies.services import latest_study

    populate(args.participants, wipe=args.fresh)
    exports = 0
    export_tables = research.export.export_tables

    def counted(*a, **k):
        nonlocal exports
        exports += 1
        return export_tables(*a, **k)

    for module in [m for name, m in sys.modules.items() if name.startswith("runs.") and hasattr(m, "export_tables")]:
        module.export_tables = counted  # type: ignore[attr-defined]
    research.export.export_tables = counted
    study = latest_study(SLUG)
    print(f"{connection.vendor}: analysis of {SLUG} ({args.participants} participants, {args.resamples} resamples)")
    cpu_times, wall_times = [], []
    for run in range(args.repeat):
        exports = 0
        profiler = cProfile.Profile(time.process_time) if args.profile and run == args.repeat - 1 else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        calibrations = design_report_write(
            study,
            out_dir=Path(tempfile.mkdtemp(prefix="bench-analysis-run-")),
            by=(),
            seed=1,
            n_resamples=args.resamples,
            include_incomplete=False,
            include_pilot=False,
            groups={},
        )
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        cpu_times.append(time.process_time() - cpu)
        wall_times.append(time.perf_counter() - wall)
        print(f"  run {run + 1}: CPU {cpu_times[-1]:.2f} s, wall {wall_times[-1]:.2f} s, exports built: {exports}")
    print(f"analysis: CPU {min(cpu_times):.2f} s, wall {min(wall_times):.2f} s (best of {args.repeat})")
    for cal in calibrations:
        print(f"  alpha[{cal.condition}] = {cal.alpha!r}  CI {cal.ci!r}")


if __name__ == "__main__":
    main()
