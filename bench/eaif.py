"""Benchmark: exact EaIF throughput (pairs/s) for n = 20,000 and n = 100,000 subjects, against a
straightforward vectorised NumPy implementation (full rows, no mirror pairing) in the same run,
peak memory, and the sampled estimate for n = 10^7 subjects at +/- 1e-4 (95%, distribution-free): the
empirical-Bernstein rule that stops at the half-width (``eaif_sampled(half_width=...)``), repeated, beside
Hoeffding's fixed m = ln(2 / 0.05) / (2 * 1e-8) = 1.84e8 pairs once, each with wall and CPU time, the load and
its memory beyond the subjects' arrays (constant memory: the same extra RSS as 1e6 pairs). First, the exact
kernel's rate at n = 20,000 under each numba
threading layer side by side (each in a process of its own, NUMBA_THREADING_LAYER): tbb (what fairness.jit picks:
fork-safe), workqueue (the fork-safe fallback without TBB) and omp (GNU OpenMP: what numba picks without TBB
when nothing is asked for; a job forked after it dies).

Run: .venv/bin/python bench/eaif.py [--sizes 20000 100000] [--numpy-rows 2000] [--half-width 1e-4]
     [--layers tbb workqueue omp] [--repeats 5] [--no-hoeffding]
The straightforward NumPy version is timed on --numpy-rows rows and scaled by the pair count.
"""

import argparse
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from fairness.individual import eaif_details, eaif_sampled  # noqa: E402


def straightforward(e, s, r, alpha, rows):
    """Row by row, each row against every later subject, in plain NumPy."""
    started = time.perf_counter()
    pairs = 0
    for i in range(rows):
        de, ds = e[i] - e[i + 1 :], s[i] - s[i + 1 :]
        np.maximum(np.abs(r[i] - r[i + 1 :]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds), 0).sum()
        pairs += e.size - i - 1
    return pairs / (time.perf_counter() - started)


LAYER_RUN = """
import time
import numpy as np
from fairness.individual import eaif_details
from fairness.jit import numba
rng = np.random.default_rng(0)
e, s, r = rng.uniform(0, 1, {n}), rng.uniform(0, 1, {n}), rng.beta(2, 5, {n})
eaif_details(e[:100], s[:100], r[:100], alpha=0.5)
rates, cpu_rates = [], []
for _ in range({repeats}):
    started, cpu = time.perf_counter(), time.process_time()
    res = eaif_details(e, s, r, alpha=0.6577)
    rates.append(res.n_pairs / (time.perf_counter() - started))
    cpu_rates.append(res.n_pairs / (time.process_time() - cpu))
print(numba.threading_layer(), max(rates), np.median(rates), max(cpu_rates))
"""


def layer_rates(layers, repeats, n=20_000):
    """The exact kernel's best and median wall rate at n under each threading layer, each in a fresh process,
    and its best rate per CPU second (pairs / CPU time of all threads: what one quiet core pair would give,
    times the two cores)."""
    root = str(Path(__file__).resolve().parent.parent)
    for layer in layers:
        env = {**os.environ, "NUMBA_THREADING_LAYER": layer, "PYTHONPATH": root}
        out = subprocess.run(
            [sys.executable, "-c", LAYER_RUN.format(n=n, repeats=repeats)],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
        )
        failed = (f"failed: {out.stderr[-200:]!r}", "nan", "nan", "nan")
        used, best, median, cpu = out.stdout.split() if out.returncode == 0 else failed
        print(
            f"n={n} exact kernel, threading layer {layer:<9} ({used}): best {float(best):.3e}, median "
            f"{float(median):.3e} pairs/s wall of {repeats}; {float(cpu):.3e} pairs per CPU second; load {load()}"
        )


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def population(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.beta(2, 5, n)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--numpy-rows", type=int, default=2000)
    parser.add_argument("--half-width", type=float, default=1e-4, help="the sampled estimate's 95%% half-width")
    parser.add_argument("--layers", nargs="*", default=["tbb", "workqueue", "omp"], help="numba threading layers")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of the exact layers and the sampled rule")
    parser.add_argument("--no-hoeffding", action="store_true", help="skip Hoeffding's fixed 1.84e8 pairs")
    args = parser.parse_args()
    layer_rates(args.layers, args.repeats)
    eaif_details(*population(100), alpha=0.5)  # compile once
    for n in args.sizes:
        e, s, r = population(n)
        started = time.perf_counter()
        res = eaif_details(e, s, r, alpha=0.6577)
        seconds = time.perf_counter() - started
        rate = res.n_pairs / seconds
        base = straightforward(e, s, r, 0.6577, min(args.numpy_rows, n - 1))
        print(
            f"n={n:>7}: EaIF={res.eaif:.6f} violations={res.violation_share:.4f} {res.n_pairs:.3e} pairs in "
            f"{seconds:.2f} s = {rate:.3e} pairs/s; straightforward NumPy {base:.3e} pairs/s; "
            f"ratio {rate / base:.1f}x; load {load()}"
        )
    n = 10_000_000
    e, s, r = population(n)
    eaif_sampled(e, s, r, alpha=0.6577, n_pairs=1000, seed=0)  # compile once
    with_arrays = rss_mib()
    m = math.ceil(math.log(2 / 0.05) / (2 * args.half_width**2))
    runs = [{"n_pairs": 1_000_000, "bound": "hoeffding"}]
    runs += [{"half_width": args.half_width, "bound": "bernstein"}] * args.repeats
    runs += [] if args.no_hoeffding else [{"n_pairs": m, "bound": "hoeffding"}]
    walls = []
    for seed, run in enumerate(runs, start=1):
        started, cpu = time.perf_counter(), time.process_time()
        est = eaif_sampled(e, s, r, alpha=0.6577, seed=seed, **run)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        if "half_width" in run:
            walls.append(seconds)
        print(
            f"sampled n=1e7, {run['bound']}{' stopping at +-' if 'half_width' in run else ' fixed'} "
            f"{est.n_pairs:.3e} pairs: {est.estimate:.6f} CI [{est.ci[0]:.6f}, {est.ci[1]:.6f}] "
            f"(+-{(est.ci[1] - est.ci[0]) / 2:.2e}) in {seconds:.2f} s wall, {cpu_seconds:.2f} s CPU; "
            f"peak RSS beyond the subjects' arrays {rss_mib() - with_arrays:.0f} MiB; load {load()}"
        )
    if walls:
        print(f"sampled n=1e7 to +-{args.half_width:g}: best {min(walls):.2f} s, median {np.median(walls):.2f} s wall")
    print(f"peak RSS: {rss_mib():.0f} MiB (includes the 1e7 arrays)")


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
