"""Benchmark: fairness.human_metric.fit_metric from 50,000 judgements over 20 features (goal < 60 s each kind).

2,500 raters x 20 judgements of random pairs (triplets) of 1,000 subjects with 20 numeric features in [0, 1];
the true metric M (:func:`true_matrix`) is diagonal plus one correlated pair. Comparable pairs are answered
"treat alike" with P = 2 expit(-d^2), triplets "b is more similar to the anchor" with P = expit(d(a, c)^2 -
d(a, b)^2) (the module's links). Times the whole call: the fit and the rater-bootstrap CIs with the reports'
MAX_METRIC_RESAMPLES (200) refits, wall and CPU time, and prints the largest relative weight error and how many
of the 20 true weights the 95% CIs cover.

Run: .venv/bin/python bench/human_metric.py [--judgements 50000] [--features 20] [--resamples 200] [--seed 0]
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

from fairness.human_metric import MAX_METRIC_RESAMPLES, fit_metric  # noqa: E402

PER_RATER = 20
SUBJECTS = 1_000


def true_matrix(k: int) -> np.ndarray:
    """Diagonal weights spread over [2 / k, 16 / k] (a random pair's expected d^2 = sum w / 6 = 1.5 for any k),
    features 0 and 1 correlated (M_01 = half the smaller weight): positive definite."""
    matrix = np.diag(np.linspace(2.0, 16.0, k) / k)
    if k > 1:
        matrix[0, 1] = matrix[1, 0] = matrix[0, 0] / 2
    return matrix


def simulate(kind: str, n: int, k: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Judgements of one kind by the model with :func:`true_matrix`, the subjects, and M (features in [0, 1])."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(SUBJECTS, k))
    x[0], x[1] = 0.0, 1.0  # every feature spans [0, 1] exactly, so the scaling is the identity
    matrix = true_matrix(k)
    ids = np.array([f"s{i:04d}" for i in range(SUBJECTS)])
    subjects = pd.DataFrame(x, index=ids, columns=[f"f{j:02d}" for j in range(k)])
    rater = np.arange(n) // PER_RATER
    a = rng.integers(0, SUBJECTS, n)
    b = (a + rng.integers(1, SUBJECTS, n)) % SUBJECTS

    def squared(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        delta = x[u] - x[v]
        return np.einsum("ij,jk,ik->i", delta, matrix, delta)

    if kind == "comparable":
        p = 2 * special.expit(-squared(a, b))
        frame = pd.DataFrame({"rater": rater, "a": ids[a], "b": ids[b]})
    else:
        c = (a + rng.integers(1, SUBJECTS, n)) % SUBJECTS
        c = np.where(c == b, (c + 1) % SUBJECTS, c)
        c = np.where(c == a, (c + 1) % SUBJECTS, c)
        p = special.expit(squared(a, c) - squared(a, b))
        frame = pd.DataFrame({"rater": rater, "anchor": ids[a], "b": ids[b], "c": ids[c]})
    frame["answer"] = (rng.uniform(size=n) < p).astype(int)
    return frame, subjects, matrix


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgements", type=int, default=50_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=MAX_METRIC_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"{args.judgements:,} judgements ({args.judgements // PER_RATER:,} raters x {PER_RATER}) over "
        f"{args.features} features, {SUBJECTS:,} subjects, {args.resamples} rater resamples (seed {args.seed})"
    )
    for kind in ("comparable", "triplet"):
        frame, subjects, matrix = simulate(kind, args.judgements, args.features, args.seed)
        wall, cpu = time.perf_counter(), time.process_time()
        fit = fit_metric(frame, subjects, list(subjects.columns), kind=kind, n_resamples=args.resamples)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        truth = np.diag(matrix)
        error = np.max(np.abs(fit.feature_weights.to_numpy() / truth - 1))
        covered = int(((fit.ci_low.to_numpy() <= truth) & (truth <= fit.ci_high.to_numpy())).sum())
        print(
            f"{kind:10s} fit + {fit.n_resamples} resamples {wall:6.2f} s wall, {cpu:6.2f} s CPU (goal < 60 s); "
            f"max relative weight error {error:.3f}; 95% CIs cover {covered} of {len(truth)} true weights"
        )


if __name__ == "__main__":
    main()
