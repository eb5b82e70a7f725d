"""Benchmark: the whole study pipeline on 1,000 participants x 12 pairs with 10,000 bootstrap
resamples, and the ratio to a plain per-resample pandas loop doing the same bootstrap; then the
calibrations alone (``pipeline_calibrations``, what an analysis's sensitivity rows fit), checked identical.

Run: .venv/bin/python bench/analysis.py [--participants 1000] [--resamples 10000] [--loop-resamples 200]
[--mixed-models]
The pandas loop is timed on --loop-resamples resamples and scaled linearly (it would take minutes).
The crossed mixed models (statsmodels MixedLM, the slow part) are left out of the timed pipeline
unless --mixed-models is given.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the study file's conversion and validation name its task types (translated strings)

from analysis.pipeline import pipeline_calibrations, run_pipeline  # noqa: E402
from simulation.effort import simulate_pairs  # noqa: E402
from studies.services import stored_file  # noqa: E402


def pandas_loop_bootstrap(frame: pd.DataFrame, n_resamples: int, seed: int) -> float:
    """The straightforward way: per resample, concatenate the drawn participants' rows and call
    pandas' Spearman correlation twice plus one OLS for alpha. Returns seconds."""
    rng = np.random.default_rng(seed)
    by_person = dict(tuple(frame.groupby("participant_id")))
    ids = list(by_person)
    started = time.perf_counter()
    for _ in range(n_resamples):
        sample = pd.concat([by_person[i] for i in rng.choice(ids, size=len(ids))], ignore_index=True)
        for outcome in ("d_overall", "output_distance"):
            sample["d_traj"].corr(sample[outcome], method="spearman") - sample["d_aggr"].corr(
                sample[outcome], method="spearman"
            )
        x = np.column_stack([np.ones(len(sample)), sample["d_aggr"], sample["d_traj"]])
        np.linalg.lstsq(x, sample["d_overall"].to_numpy(float), rcond=None)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--loop-resamples", type=int, default=200)
    parser.add_argument("--mixed-models", action="store_true", help="include the crossed mixed models")
    args = parser.parse_args()
    spec, _ = stored_file(json.loads((ROOT / "studies/bundled/effort_demo.json").read_text()))  # its conversion
    pairs = simulate_pairs(spec, args.participants, seed=1)
    print(f"pairs table: {len(pairs)} rows, {pairs['participant_id'].nunique()} participants")
    started, cpu = time.perf_counter(), time.process_time()
    result = run_pipeline(pairs, seed=1, n_resamples=args.resamples, mixed_models=args.mixed_models)
    pipeline_s = time.perf_counter() - started
    mixed = "with" if args.mixed_models else "without"
    print(
        f"pipeline with {args.resamples} resamples, {mixed} mixed models: {pipeline_s:.2f} s "
        f"({time.process_time() - cpu:.2f} s CPU)"
    )
    for cal in result.calibrations:
        print(f"  alpha[{cal.condition}] = {cal.alpha:.4f}  CI [{cal.ci[0]:.4f}, {cal.ci[1]:.4f}]")
    started, cpu = time.perf_counter(), time.process_time()
    alone = pipeline_calibrations(pairs, seed=1, n_resamples=args.resamples)
    print(
        f"the calibrations alone (pipeline_calibrations: an analysis's sensitivity rows): "
        f"{time.perf_counter() - started:.2f} s ({time.process_time() - cpu:.2f} s CPU), "
        f"identical to the pipeline's: {alone.calibrations == result.calibrations}"
    )
    loop_s = 0.0
    for _, frame in pairs.groupby("condition"):
        loop_s += pandas_loop_bootstrap(frame, args.loop_resamples, seed=1)
    loop_full = loop_s * args.resamples / args.loop_resamples
    print(
        f"pandas per-resample loop: {loop_s:.2f} s for {args.loop_resamples} resamples -> "
        f"{loop_full:.1f} s estimated for {args.resamples}"
    )
    print(
        f"ratio (loop / pipeline): {loop_full / pipeline_s:.1f}x; "
        f"goal < 10 s: {'met' if pipeline_s < 10 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
