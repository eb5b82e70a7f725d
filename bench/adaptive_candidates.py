"""What one adaptive decision costs per candidate (the bound ``studies.format2.MAX_CANDIDATES``): a
``choose`` fit of ``--subjects`` subjects, every pair an item; for each candidate limit, the time
``next_item`` takes (first under the fit, and again with the fit's terms cached) and the bytes its
scored candidates take stored (``AdaptiveDecision.candidates``)."""

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from analysis.adaptive_design import DESIGNS, Fit, next_item  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--subjects", type=int, default=60)
    parser.add_argument("--limits", type=int, nargs="+", default=[50, 200, 500, 1000])
    args = parser.parse_args()
    subjects = [f"D{i:03d}" for i in range(args.subjects)]
    rng = random.Random(0)
    covariance = [[0.2 if i == j else 0.01 for j in range(len(subjects))] for i in range(len(subjects))]
    items = {f"{a}~{b}": (a, b) for a, b in itertools.combinations(subjects, 2)}
    print(f"{len(subjects)} subjects, {len(items)} pairs")
    for limit in args.limits:
        fit = Fit(1, subjects, [rng.gauss(0, 1) for _ in subjects], covariance)
        seconds = []
        for seed in ("first", "cached"):
            start = time.perf_counter()
            _, scored = next_item(DESIGNS["choice"], items, set(), fit, {}, {}, limit=limit, seed=seed)
            seconds.append(time.perf_counter() - start)
        print(
            f"{limit:5d} candidates: {seconds[0] * 1e3:6.1f} ms first, {seconds[1] * 1e3:6.1f} ms cached, "
            f"{len(json.dumps(scored)):6d} bytes stored"
        )


if __name__ == "__main__":
    main()
