"""Coverage and size of every registered interval and test (``analysis.coverage.REGISTRY``, simulated by
``simulation.coverage_studies``) at full size: one table with the estimator, its estimand, the scenario,
nominal and measured rate, its Monte Carlo SE and the number of simulated studies; then, for contrast, how
often a null block's unadjusted tests find something.

Run: .venv/bin/python bench/coverage.py [--studies N (default: each procedure's full size)] [--seed 2026]
     [--only SUBSTRING]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # not bench/: its coverage.py would shadow numba's coverage

import simulation.coverage_studies as studies  # noqa: E402 - registers the procedures
from analysis.coverage import REGISTRY, measure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print("| procedure | estimator | estimand | scenario | nominal | measured | MC SE | studies | bound | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for key in sorted(k for k in REGISTRY if args.only in k):
        result = measure(key, studies=args.studies, seed=args.seed)
        bound = ("coverage >= " if result.kind == "coverage" else "size <= ") + f"{REGISTRY[key].bound:.2f}"
        ok = "yes" if result.acceptable else "NO"
        print(
            f"| {key} | `{result.function}` | {result.estimand} | {result.scenario} | {result.nominal:.2f} "
            f"| {result.rate:.3f} | {result.mc_se:.3f} | {result.studies} | {bound} | {ok} |",
            flush=True,
        )
    if "family" in args.only or not args.only:
        rng = np.random.default_rng(args.seed)
        count = args.studies or REGISTRY["block family, Holm"].full
        raw = sum(studies.block_family_rejects(rng, method="none") for _ in range(count)) / count
        print(f"\nUnadjusted, some test of a null block's family is significant at 5% in {raw:.3f} of {count} studies.")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
