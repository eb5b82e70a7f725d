"""CPU seconds of ``simulation.effort.simulate_pairs`` per simulated study: the demo study at the paper's size
(150 participants x 12 pairs), as ``plan_study`` and the design check draw it once per simulated study.

Run: .venv/bin/python bench/simulate_pairs.py [--studies 20] [--n 150]
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the study file's conversion and validation name its task types (translated strings)

from simulation.effort import GenerativeModel, simulate_pairs  # noqa: E402
from studies.services import stored_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=20)
    parser.add_argument("--n", type=int, default=150)
    args = parser.parse_args()
    spec, _ = stored_file(json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text()))
    start = time.process_time()
    rows = sum(len(simulate_pairs(spec, args.n, seed=s, model=GenerativeModel())) for s in range(args.studies))
    cpu = time.process_time() - start
    print(f"{args.studies} studies of {args.n} participants ({rows} pairs): {cpu / args.studies:.3f} s CPU per study")


if __name__ == "__main__":
    main()
