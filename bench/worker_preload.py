"""What a job's forked process spends on the first calls of the numba kernels and the first plotly figure, with
and without the worker's preload (``runs.worker.preload_runners``) in its parent.

Run: .venv/bin/python bench/worker_preload.py [--jobs 3]

Each variant starts a fresh interpreter that imports the job runners (as every worker does), preloads or not,
then forks ``--jobs`` children one after the other, as the worker does for its jobs; each child runs a small
situation test, an exact EaIF and its worst pairs over read-only scores, and one figure, and reports its CPU
seconds. Prints each child's figure and the medians."""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_job() -> None:
    import numpy as np
    import pandas as pd
    import plotly.graph_objects as go

    from fairness.individual import eaif_details, worst_pairs
    from fairness.situation_testing import situation_testing

    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n), "g": rng.integers(0, 2, n)})
    frame["label"] = (frame["x"] + rng.normal(size=n) > 0).astype(int)
    situation_testing(frame, protected="g", target="label", negative_outcome=1, k=[3, 5])
    scores = frame.assign(score=rng.random(n))["score"].to_numpy(float)  # read-only, as an audit's scores
    effort, aggregate = rng.random(n), rng.random(n)
    eaif_details(effort, aggregate, scores, alpha=0.5)
    worst_pairs(effort, aggregate, scores, alpha=0.5, k=5)
    go.Figure(go.Bar(x=[0], y=[1]))


def variant(preload: bool, jobs: int) -> list[float]:
    """In this interpreter (a fresh one per variant): the children's CPU seconds."""
    import django

    django.setup()
    import runs.execution  # noqa: F401 - what every worker imports before its first job
    from runs.worker import preload_runners

    if preload:
        preload_runners()
    seconds = []
    for _ in range(jobs):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            start = time.process_time()
            child_job()
            os.write(write, f"{time.process_time() - start:.4f}".encode())
            os._exit(0)
        os.waitpid(pid, 0)
        seconds.append(float(os.read(read, 64)))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--variant", choices=["cold", "preloaded"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        print(" ".join(f"{s:.3f}" for s in variant(args.variant == "preloaded", args.jobs)))
        return
    for name in ("cold", "preloaded"):
        out = subprocess.run(
            [sys.executable, __file__, "--variant", name, "--jobs", str(args.jobs)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        seconds = [float(s) for s in out]
        print(f"{name:9} each job's CPU s: {', '.join(out)}; median {statistics.median(seconds):.3f}")


if __name__ == "__main__":
    main()
