"""Benchmark: ST + CST (without and with centres) + CF on the LSAC law-school data (21,790 rows,
gender, k = 15, 30, 50, 100, 250), and the scaling with n on random subsamples.

Run: .venv/bin/python bench/situation_testing.py [--data PATH/clean_LawSchool.csv]
Nearest neighbours come from blocked vectorised distances (one block of rows x search space at a
time) with argpartition; no Python loop over rows except the O(k) insertion of counterfactual centres.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fairness import law_school  # noqa: E402
from fairness.counterfactual import fit_linear_scm  # noqa: E402
from fairness.situation_testing import situation_testing  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "reference-data" / "counterfactual_situation_testing" / "clean_LawSchool.csv"


def one_run(data):
    scm = fit_linear_scm(data, law_school.DAG)
    cf = scm.counterfactuals(data, {"sex": "Male"})
    cf["Y"] = law_school.admit(cf)
    started = time.perf_counter()
    result = situation_testing(
        data,
        protected="sex",
        target="Y",
        negative_outcome=0,
        k=list(law_school.K_LIST),
        counterfactuals=cf,
        protected_value="Female",
        features=law_school.FEATURES,
    )
    return time.perf_counter() - started, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(DEFAULT))
    args = parser.parse_args()
    data = law_school.load(args.data)
    timings = []
    for n in (5000, 10000, len(data)):
        sample = data.sample(n=n, random_state=0).reset_index(drop=True) if n < len(data) else data
        seconds, result = one_run(sample)
        complainants = int((sample["sex"] == "Female").sum())
        timings.append((n, seconds))
        print(f"n={n:>6}: {complainants} complainants, ST+CST+CF for k=15..250 in {seconds:.2f} s")
    (n1, t1), (n2, t2) = timings[0], timings[-1]
    print(
        f"scaling exponent (log t / log n): {np.log(t2 / t1) / np.log(n2 / n1):.2f} "
        "(2 = quadratic, as all-pairs k-NN is)"
    )
    print(f"goal < 30 s on the full data: {'met' if t2 < 30 else 'NOT met'}")
    print(result.counts.to_string(index=False))


if __name__ == "__main__":
    main()
