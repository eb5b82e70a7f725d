"""Benchmark: analysis.paired_comparison.bradley_terry on 400,000 simulated comparisons over 1,000 items.

Times the whole call (validation, aggregation per pair, connectivity checks, Newton fit, Wald
standard errors from the inverse information) and the 95% confidence intervals of the strengths for the
logit (Bradley-Terry), probit (Thurstone-Mosteller) and Davidson tie models, wall and CPU time; goal
< 30 s each on 2 cores. Prints the share of the 999 non-reference strengths whose interval covers the
true value (logit models; the probit fit's scale is not the simulation's; one data set, so the intervals
share the reference item's error: a rough check, the coverage simulations are in the tests).

Run: .venv/bin/python bench/paired_comparison.py [--comparisons 400000] [--items 1000] [--seed 0]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from analysis.paired_comparison import bradley_terry  # noqa: E402


def simulate(n_comparisons: int, n_items: int, seed: int, ties: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """Random pairs; strengths N(0, 1); outcomes from Bradley-Terry, or Davidson's model with nu = 0.5."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_items)
    first = rng.integers(0, n_items, n_comparisons)
    second = (first + rng.integers(1, n_items, n_comparisons)) % n_items
    d = strength[first] - strength[second]
    if ties:
        nu = 0.5
        denominator = np.exp(d / 2) + np.exp(-d / 2) + nu
        u = rng.uniform(size=n_comparisons)
        first_wins = u < np.exp(d / 2) / denominator
        tie = ~first_wins & (u < (np.exp(d / 2) + nu) / denominator)
    else:
        first_wins = rng.uniform(size=n_comparisons) < special.expit(d)
        tie = np.zeros(n_comparisons, dtype=bool)
    names = np.array([f"item{k:04d}" for k in range(n_items)])
    frame = pd.DataFrame(
        {"winner": names[np.where(first_wins, first, second)], "loser": names[np.where(first_wins, second, first)]}
    )
    if ties:
        frame["tie"] = tie.astype(int)
    return frame, strength


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--comparisons", type=int, default=400_000)
    parser.add_argument("--items", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.comparisons:,} comparisons over {args.items:,} items (seed {args.seed})")
    for label, model, ties in (
        ("Bradley-Terry (logit)", "logit", False),
        ("Thurstone-Mosteller (probit)", "probit", False),
        ("Davidson ties (logit)", "logit", True),
    ):
        frame, truth = simulate(args.comparisons, args.items, args.seed, ties)
        wall, cpu = time.perf_counter(), time.process_time()
        result = bradley_terry(frame, model=model)
        low, high = result.confidence_interval(0.95)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        truth = truth - truth[0]
        covered = ((low.to_numpy() <= truth) & (truth <= high.to_numpy()))[1:].mean()
        error = np.abs(result.strength.to_numpy() - truth)
        if model == "probit":  # the simulation is logistic; compare shapes only
            error = np.abs(result.strength.to_numpy() * 1.7 - truth)
        tie = f", nu = {result.tie_parameter:.3f}" if result.tie_parameter is not None else ""
        print(
            f"{label:30s} fit + CIs {wall:6.2f} s wall, {cpu:6.2f} s CPU; {result.iterations} Newton steps; "
            f"median SE {result.standard_error.iloc[1:].median():.3f}; "
            f"median |error| {np.median(error[1:]):.3f}{tie}"
            + ("" if model == "probit" else f"; 95% CIs cover {covered:.3f}")
        )


if __name__ == "__main__":
    main()
