"""Benchmark: the sampled worst-pair search (``fairness.individual.worst_pairs_sampled``) at the model audit's
pair count (2,000,000 pairs, k = 20) on both backends: NumPy (each chunk's pairs drawn as arrays: the search
before it was compiled) and numba (each chunk in parallel runs), wall and CPU seconds per call (CPU of all
threads), and whether both list the same pairs.

Run: .venv/bin/python bench/worst_pairs.py [--n 100000] [--pairs 2000000] [--k 20] [--repeats 5]
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from fairness.individual import worst_pairs_sampled  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000, help="subjects")
    parser.add_argument("--pairs", type=int, default=2_000_000, help="sampled pairs (the model audit's default)")
    parser.add_argument("--k", type=int, default=20, help="worst pairs kept (the model audit's 20)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    e, s = rng.uniform(0, 1, args.n), rng.uniform(0, 1, args.n)
    r = np.clip(0.6 * e + 0.4 * s + rng.normal(0, 0.1, args.n), 0, 1)
    found = {}
    for backend in ("numpy", "numba"):
        worst_pairs_sampled(e[:100], s[:100], r[:100], alpha=0.6, k=args.k, n_pairs=1000, backend=backend)
        walls, cpus = [], []
        for seed in range(args.repeats):
            started, cpu = time.perf_counter(), time.process_time()
            found[backend] = worst_pairs_sampled(
                e, s, r, alpha=0.6, k=args.k, n_pairs=args.pairs, seed=seed, backend=backend
            ).pairs
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"{backend:<5} n={args.n} {args.pairs:.1e} pairs k={args.k}: wall median {np.median(walls):.3f} s "
            f"(best {min(walls):.3f}), CPU median {np.median(cpus):.3f} s (best {min(cpus):.3f}) of {args.repeats}; "
            f"load {load}"
        )
    print(f"same pairs and numbers (last seed): {found['numpy'].equals(found['numba'])}")


if __name__ == "__main__":
    main()
