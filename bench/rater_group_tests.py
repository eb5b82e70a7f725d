"""Simulation: size and power of the rater-group tests of a disagreement rate (issue 23, point 5).

Raters answer 50 yes/no questions each with their own propensity p_i ~ Beta(4, 6) (mean .4); under the
alternative the raters of the second-largest group have their logit shifted by ``--shift``. Group sizes
follow a Dressel & Farid worker split with a 1-rater group (120, 100, 80, 60, 30, 9, 1). For every data
set: T = max - min and the size-weighted W (``fairness.task_blocks.rater_group_means``), with every group
compared and with the minimum group size (default 10 raters: the 9- and 1-rater groups left out). Prints
the share of data sets with p < .05 for each (size under the null, power under the alternative).

Run: .venv/bin/python bench/rater_group_tests.py [--datasets 200] [--permutations 199] [--shift 0.3] [--seed 0]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from fairness.group_options import MIN_GROUP_SIZE  # noqa: E402
from fairness.rater_groups import apply_min_group_size  # noqa: E402
from fairness.task_blocks import rater_group_means  # noqa: E402

SIZES = (120, 100, 80, 60, 30, 9, 1)
ANSWERS = 50


def simulate(rng: np.random.Generator, shift: float) -> pd.DataFrame:
    groups = np.repeat(np.arange(len(SIZES)), SIZES)
    p = rng.beta(4, 6, len(groups))
    logit = np.log(p / (1 - p)) + shift * (groups == 1)
    answers = rng.random((len(groups), ANSWERS)) < 1 / (1 + np.exp(-logit[:, None]))
    return pd.DataFrame(
        {
            "participant_id": np.repeat(np.arange(len(groups)), ANSWERS),
            "rater_group": np.repeat([f"g{g}" for g in groups], ANSWERS),
            "value": answers.ravel().astype(float),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--shift", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for label, shift in (("null", 0.0), (f"shift {args.shift:g}", args.shift)):
        rejected = {key: 0 for key in ("T all", "W all", f"T min {MIN_GROUP_SIZE}", f"W min {MIN_GROUP_SIZE}")}
        for _ in range(args.datasets):
            frame = simulate(rng, shift)
            per_rater = frame.groupby("participant_id")["rater_group"].first()
            kept, _ = apply_min_group_size(per_rater, MIN_GROUP_SIZE)
            for suffix, data in (
                ("all", frame),
                (f"min {MIN_GROUP_SIZE}", frame.assign(rater_group=frame["participant_id"].map(kept))),
            ):
                seed = int(rng.integers(2**31))
                _, test = rater_group_means(data, "value", n_resamples=0, n_permutations=args.permutations, seed=seed)
                rejected[f"T {suffix}"] += test.pvalue < 0.05
                rejected[f"W {suffix}"] += test.weighted_pvalue < 0.05
        shares = ", ".join(f"{key} {count / args.datasets:.3f}" for key, count in rejected.items())
        print(f"{label}: share with p < .05 over {args.datasets} data sets: {shares}")


if __name__ == "__main__":
    main()
