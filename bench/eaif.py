"""Benchmark: exact EaIF throughput (pairs/s) for n = 20,000 and n = 100,000 subjects, against a
straightforward vectorised NumPy implementation (full rows, no mirror pairing) in the same run,
peak memory, and the sampled estimate for n = 10^7.

Run: .venv/bin/python bench/eaif.py [--sizes 20000 100000] [--numpy-rows 2000]
The straightforward NumPy version is timed on --numpy-rows rows and scaled by the pair count.
"""

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def population(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.beta(2, 5, n)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--numpy-rows", type=int, default=2000)
    args = parser.parse_args()
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
            f"{seconds:.2f} s = {rate:.3e} pairs/s; straightforward NumPy {base:.3e} pairs/s; ratio {rate / base:.1f}x"
        )
    n = 10_000_000
    e, s, r = population(n)
    started = time.perf_counter()
    est = eaif_sampled(e, s, r, alpha=0.6577, n_pairs=2_000_000, seed=1)
    print(
        f"sampled n=1e7: {est.estimate:.5f} CI [{est.ci[0]:.5f}, {est.ci[1]:.5f}] "
        f"(+-{(est.ci[1] - est.ci[0]) / 2:.5f}) in {time.perf_counter() - started:.2f} s"
    )
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB (includes the 1e7 arrays)")


if __name__ == "__main__":
    main()
