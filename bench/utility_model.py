"""Benchmark: analysis.paired_comparison.utility_model for 1,000 raters (goal < 60 s).

Each rater makes 40 choices among 100 subjects with 5 features; raters' weights differ (N(w, 0.5^2))
and fall in 4 rater groups. Times the whole call: the per-rater MAP fits (batched Newton), the pooled
and per-group logits with rater-clustered SEs, and Borda aggregation with 2,000-resample BCa intervals.

Run: .venv/bin/python bench/utility_model.py [--raters 1000] [--choices 40] [--subjects 100] [--seed 0]
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

from analysis.paired_comparison import utility_model  # noqa: E402

FEATURES = ["f1", "f2", "f3", "f4", "f5"]


def simulate(raters: int, choices: int, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_subjects, len(FEATURES)))
    subjects = pd.DataFrame(x, index=[f"s{i:04d}" for i in range(n_subjects)], columns=FEATURES)
    w = np.array([1.0, -0.5, 0.3, 0.0, 0.8]) + rng.normal(0, 0.5, (raters, len(FEATURES)))
    rater = np.repeat(np.arange(raters), choices)
    a = rng.integers(0, n_subjects, rater.size)
    b = (a + rng.integers(1, n_subjects, rater.size)) % n_subjects
    a_wins = rng.uniform(size=rater.size) < special.expit(np.einsum("nk,nk->n", w[rater], x[a] - x[b]))
    ids = subjects.index.to_numpy()
    comparisons = pd.DataFrame(
        {
            "rater": [f"r{r:05d}" for r in rater],
            "winner": ids[np.where(a_wins, a, b)],
            "loser": ids[np.where(a_wins, b, a)],
            "group": [f"g{r % 4}" for r in rater],
        }
    )
    return comparisons, subjects


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--raters", type=int, default=1000)
    parser.add_argument("--choices", type=int, default=40)
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    comparisons, subjects = simulate(args.raters, args.choices, args.subjects, args.seed)
    wall, cpu = time.perf_counter(), time.process_time()
    result = utility_model(comparisons, subjects, FEATURES, by="group", seed=args.seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"utility_model: {args.raters:,} raters x {args.choices} choices ({len(comparisons):,}), "
        f"{args.subjects} subjects, {len(FEATURES)} features, 4 rater groups: {wall:.2f} s wall, {cpu:.2f} s CPU "
        f"(goal < 60 s)"
    )
    print(result.weights.query("rater_group == 'all participants'")[["feature", "weight", "ci_low", "ci_high"]])


if __name__ == "__main__":
    main()
