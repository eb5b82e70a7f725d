"""Coverage and size of every registered interval and test (``analysis.coverage.REGISTRY``, simulated by
``simulation.coverage_studies``) at full size: one table with the estimator, its estimand, the scenario,
nominal and measured rate, its Monte Carlo SE and the number of simulated studies; then, for contrast, the
rate of the procedures printed beside them but not held to a bound (a null block's unadjusted tests, the
situation-testing paper's Wald rule).

Run: .venv/bin/python bench/coverage.py [--studies N (default: each procedure's full size)] [--seed 2026]
     [--only SUBSTRING [--only SUBSTRING ...]]

Each procedure's simulation has its own generator (seeded by --seed), so runs split by --only print the same
rows as one run of them all; procedures reading one shared study (``analysis.coverage.Study``) simulate it once.
"""

import argparse
import sys
import time
from pathlib import Path

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

import simulation.coverage_studies  # noqa: E402, F401 - registers the procedures
from analysis.coverage import REGISTRY, measure_contrast, measure_many  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--only", action="append", default=[], help="procedures whose key contains this (repeatable; default: all)"
    )
    args = parser.parse_args()
    print("| procedure | estimator | estimand | scenario | nominal | measured | MC SE | studies | bound | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    keys = sorted(k for k in REGISTRY if not args.only or any(part in k for part in args.only))
    measured = measure_many({key: args.studies or REGISTRY[key].full for key in keys}, seed=args.seed)
    for key in keys:
        result = measured[key]
        bound = ("coverage >= " if result.kind == "coverage" else "size <= ") + f"{REGISTRY[key].bound:.2f}"
        ok = "yes" if result.acceptable else "NO"
        print(
            f"| {key} | `{result.function}` | {result.estimand} | {result.scenario} | {result.nominal:.2f} "
            f"| {result.rate:.3f} | {result.mc_se:.3f} | {result.studies} | {bound} | {ok} |",
            flush=True,
        )
    for key in keys:
        rate = measure_contrast(key, studies=args.studies, seed=args.seed)
        contrast = REGISTRY[key].contrast
        if rate is not None and contrast is not None:
            count = args.studies or REGISTRY[key].full
            print(f"\nContrast, {key}: {contrast[0]} in {rate:.3f} of {count} studies.", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
