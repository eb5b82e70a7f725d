"""Benchmark: exact EaIF on a local Dask cluster of this machine against the single-machine numba kernel, and
the projected time of n = 10,000,000 subjects on a cluster of N workers from the measured rate.

Run: .venv/bin/python bench/eaif_dask.py [--n 200000] [--tile 20000] [--workers 2] [--project 10000000]
     [--cluster-sizes 2 16 64 256]
The Dask time includes starting and stopping the LocalCluster (what a researcher waits for); the per-tile rate is
all pairs over the time from the tiles' submission to the sum, on the started (and warmed) cluster.
The projection assumes each of N workers computes pairs at the measured per-worker rate (pairs/s / workers) and
the tiles keep every worker busy (T (T + 1) / 2 tiles >> N): time = n (n - 1) / 2 / (rate per worker x N).
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

from fairness.distributed import eaif_dask  # noqa: E402
from fairness.individual import eaif_details  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200_000, help="subjects")
    parser.add_argument("--tile", type=int, default=20_000, help="subjects per block")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes (one thread each)")
    parser.add_argument("--project", type=int, default=10_000_000, help="the n of the projection")
    parser.add_argument("--cluster-sizes", type=int, nargs="+", default=[2, 16, 64, 256], help="N of the projection")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    e, s, r = rng.uniform(0, 1, args.n), rng.uniform(0, 1, args.n), rng.beta(2, 5, args.n)
    eaif_details(e[:100], s[:100], r[:100], alpha=0.5)  # compile once
    print(f"load before: {load()} on {os.cpu_count()} cores")
    started = time.perf_counter()
    single = eaif_details(e, s, r, alpha=0.6577)
    single_s = time.perf_counter() - started
    print(f"single machine, numba: n={args.n} {single.n_pairs:.3e} pairs in {single_s:.1f} s; load {load()}")

    started = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0") as cluster:
        with Client(cluster) as client:
            client.run(lambda: eaif_details([0.0, 1.0], [0.0, 0.0], [0.0, 1.0], alpha=0.5))  # compile on workers
            ready = time.perf_counter()
            result = eaif_dask(e, s, r, alpha=0.6577, client=client, tile=args.tile)
            tiles_s = time.perf_counter() - ready
    dask_s = time.perf_counter() - started
    rate = result.n_pairs / tiles_s
    print(
        f"Dask LocalCluster of {args.workers} workers: EaIF {result.eaif:.12f} (single {single.eaif:.12f}, relative "
        f"difference {abs(result.eaif - single.eaif) / single.eaif:.1e}) in {dask_s:.1f} s with the cluster's start "
        f"and stop, {tiles_s:.1f} s of tiles = {rate:.3e} pairs/s; ratio to single machine {dask_s / single_s:.2f}x "
        f"(tiles only {tiles_s / single_s:.2f}x); load {load()}"
    )
    per_worker = rate / args.workers
    pairs = args.project * (args.project - 1) // 2
    tiles = (-(-args.project // args.tile)) * (-(-args.project // args.tile) + 1) // 2
    print(
        f"projection for n={args.project:.0e}: {pairs:.3e} pairs in {tiles} tiles of {args.tile} x {args.tile}; "
        f"per worker {rate:.3e} / {args.workers} = {per_worker:.3e} pairs/s"
    )
    for workers in args.cluster_sizes:
        seconds = pairs / (per_worker * workers)
        print(
            f"  N={workers:>4}: {pairs:.3e} / ({per_worker:.3e} x {workers}) = {seconds:,.0f} s "
            f"= {seconds / 3600:.2f} h"
        )


if __name__ == "__main__":
    main()
