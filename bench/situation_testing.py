"""Benchmark: situation testing (ST + CST without and with the complainant + CF, k = 15, 30, 50,
100, 250) with the k-d tree k-NN against the old all-pairs kernel, the law-school experiment, and
n = 100,000 synthetic rows.

Run: .venv/bin/python bench/situation_testing.py [--data PATH/clean_LawSchool.csv] [--n 100000]
     .venv/bin/python bench/situation_testing.py --n 1000000 --synthetic-only   (the one-million figure)

1. LSAC law-school data (21,790 rows, gender): one run with the all-pairs kernel
   (``_knn_all_pairs``, quadratic) and one with the default kernel; the ratio, and whether the
   results are identical.
2. ``law_school.run``: all four experiments (gender, race, intersectional, multiple at alpha / 2),
   with the number of k-NN searches (the alpha / 2 runs reuse the alpha runs' searches).
3., 4. Synthetic data (:func:`synthetic`), n = 100,000 (``--n``), with discrete features (ties, as in
   the law-school data) and with continuous ones: rows, k, wall and CPU time per stage (each k-NN
   search named by the methods that use it; the single-threaded rest by function; the test ids of
   results.json, built only when a report is written) and in total, the load average, the ratio to the
   60 s goal, the idle-machine projection (the parallel stages' CPU time over the cores plus the serial
   stages' CPU time), the neighbour lists' memory and the process's peak memory (ru_maxrss). Also n / 4
   for the scaling exponent (not with ``--synthetic-only``). The CPU time counts every thread of this
   process: under load from other processes the wall time grows, the CPU time does not.
"""

import argparse
import contextlib
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

import fairness.situation_testing as st  # noqa: E402
from fairness import law_school  # noqa: E402
from fairness.counterfactual import fit_linear_scm  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "reference-data" / "counterfactual_situation_testing" / "clean_LawSchool.csv"
SYNTHETIC_DAG = {"score": ["group", "region"], "grade": ["group"]}
SYNTHETIC_FEATURES = ["score", "grade", "region"]


def synthetic(n: int, seed: int = 0, discrete: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded law-school-like data and its counterfactuals under do(group := 0).

    group = 1 (protected) with probability 0.45; region in {north, south, east} with probabilities
    0.5, 0.3, 0.2; score = 32 - 1.5 group + 2 [region = north] + N(0, 5) clipped to [10, 48] (like
    LSAT); grade = 3.2 - 0.1 group + N(0, 0.4) clipped to [0, 4] (like UGPA). ``discrete``: score
    rounded to an integer and grade to one decimal, as LSAT and UGPA are (so many rows tie); else
    continuous (no ties). Decision Y = 1 (positive) when 0.4 score + 6 grade >= 31.5, negative Y = 0.
    Counterfactuals: the linear SCM score <- {group, region}, grade <- group fitted on the data,
    do(group := 0), rounded like the factual values; Y recomputed."""
    rng = np.random.default_rng(seed)
    digits = {"score": 0, "grade": 1} if discrete else {}
    group = (rng.random(n) < 0.45).astype(int)
    region = rng.choice(["north", "south", "east"], size=n, p=[0.5, 0.3, 0.2])
    score = np.clip(32 - 1.5 * group + 2 * (region == "north") + rng.normal(0, 5, n), 10, 48)
    grade = np.clip(3.2 - 0.1 * group + rng.normal(0, 0.4, n), 0, 4)
    data = pd.DataFrame({"group": group, "region": region, "score": score, "grade": grade}).round(digits)
    data["Y"] = decide(data)
    cf = fit_linear_scm(data, SYNTHETIC_DAG).counterfactuals(data, {"group": 0}, decimals=digits)
    return data, cf.assign(Y=decide(cf))


def decide(frame: pd.DataFrame) -> np.ndarray:
    return (0.4 * frame["score"] + 6 * frame["grade"] >= 31.5).astype(int).to_numpy()


def clock() -> np.ndarray:
    """Wall time and this process's CPU time (the CPU time does not grow when other processes load
    the machine; the wall time does)."""
    return np.array([time.perf_counter(), time.process_time()])


def show(seconds) -> str:
    return f"{seconds[0]:6.2f} s (CPU {seconds[1]:6.2f} s)"


@contextlib.contextmanager
def timed(module, name, timings):
    """Add the times (:func:`clock`) of each call of ``module.name`` to the list ``timings``."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        started = clock()
        out = original(*args, **kwargs)
        timings.append(clock() - started)
        return out

    setattr(module, name, wrapper)
    try:
        yield
    finally:
        setattr(module, name, original)


@contextlib.contextmanager
def kernel(search=None, timings=None):
    """Swap the k-NN search for ``search`` and/or add each search's times (:func:`clock`) to ``timings``."""
    original = st._knn
    st._knn = search or original
    try:
        with timed(st, "_knn", timings) if timings is not None else contextlib.nullcontext():
            yield
    finally:
        st._knn = original


def run(data, cf, protected, value, features):
    return st.situation_testing(
        data,
        protected=protected,
        target="Y",
        negative_outcome=0,
        k=list(law_school.K_LIST),
        counterfactuals=cf,
        protected_value=value,
        features=features,
    )


def law_school_ratio(path):
    data = law_school.load(path)
    cf = fit_linear_scm(data, law_school.DAG).counterfactuals(data, {"sex": "Male"})
    cf["Y"] = law_school.admit(cf)
    seconds = {}
    results = {}
    for name, search in (("all pairs (old)", st._knn_all_pairs), ("default (k-d tree)", None)):
        with kernel(search):
            started = clock()
            results[name] = run(data, cf, "sex", "Female", law_school.FEATURES)
            seconds[name] = clock() - started
    old, new = results.values()
    same = old.individuals.equals(new.individuals) and all(
        all(np.array_equal(a, b) for a, b in zip(old.neighbours[key][g], new.neighbours[key][g], strict=True))
        for key in old.neighbours
        for g in ("control", "test")
    )
    print(f"1. law school, gender, n = {len(data)}, ST+CST+CF, k = 15..250:")
    for name, value in seconds.items():
        print(f"   {name:<20} {show(value)}")
    (t_old, t_new) = seconds.values()
    print(
        f"   ratio old / new: {t_old[0] / t_new[0]:.1f}x wall, {t_old[1] / t_new[1]:.1f}x CPU; "
        f"identical results and neighbour lists: {same}"
    )
    print(new.counts.to_string(index=False))


def law_school_experiment(path):
    searches = []
    with kernel(timings=searches):
        started = clock()
        law_school.run(path)
        seconds = clock() - started
    print(f"2. law_school.run, all four experiments, k = 15..250: {show(seconds)}")
    print(f"   {len(searches)} k-NN searches: {show(sum(searches))}")


SEARCHES = ("control search (ST, CST)", "test search (ST)", "counterfactual test search (CST, CF)")
# the single-threaded rest, by the functions of fairness.situation_testing that do it (the neighbour counts
# per k run in parallel)
REST = {
    "_without_self": "control lists without the complainant",
    "_tallies": "negative decisions per k (parallel)",
    "exact_pvalue": "exact tests (one tail per distinct table)",
    "adjust_tied": "Holm / BH within each family",
}
PARALLEL = (*SEARCHES, REST["_tallies"])
GOAL = 60.0  # seconds of wall time for ST + CST + CF, k = 15..250


def synthetic_run(n, discrete=True):
    """Wall and CPU time per stage: data and counterfactuals, the three k-NN searches, the rest of the run by
    function, and the test ids of results.json (built only when a report is written)."""
    stages = {}
    started = clock()
    data, cf = synthetic(n, discrete=discrete)
    stages["data and SCM counterfactuals"] = clock() - started
    searches = []
    rest = {name: [] for name in REST}
    with contextlib.ExitStack() as stack:
        stack.enter_context(kernel(timings=searches))
        for name, found in rest.items():
            stack.enter_context(timed(st, name, found))
        begun = clock()
        result = run(data, cf, "group", 1, SYNTHETIC_FEATURES)
        situation = clock() - begun
    stages.update(zip(SEARCHES, searches, strict=True))
    for name, found in rest.items():
        stages[REST[name]] = sum(found, np.zeros(2))
    stages["the rest (shares, intervals, table, counts)"] = (
        situation - sum(searches) - sum((sum(found, np.zeros(2)) for found in rest.values()), np.zeros(2))
    )
    stages["situation testing (ST+CST+CF)"] = situation
    begun = clock()
    ids = sum(len(tests) for tests in result.multiple_testing["families"].values())
    stages[f"{ids:,} test ids for results.json"] = clock() - begun
    stages["total with the data"] = clock() - started
    return data, result, stages


def list_megabytes(result) -> tuple[float, str]:
    """The neighbour lists' memory (each array counted once: the k's lists are views of one array per search)
    and their id type."""
    bases, dtype = {}, ""
    for groups in result.neighbours.values():
        for ids in groups.values():
            base = ids if ids.base is None else ids.base
            bases[id(base)] = base.nbytes
            dtype = str(ids.dtype)
    return sum(bases.values()) / 1e6, dtype


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DEFAULT), help="the LSAC law-school CSV (clean_LawSchool.csv)")
    parser.add_argument("--n", type=int, default=100_000, help="synthetic rows (1000000 for the one-million figure)")
    parser.add_argument(
        "--synthetic-only", action="store_true", help="skip the law-school runs (1., 2.) and the n / 4 scaling run"
    )
    parser.add_argument("--continuous-only", action="store_true", help="only the continuous synthetic data (4.)")
    args = parser.parse_args()
    print(f"load average (1, 5, 15 min) at start: {os.getloadavg()}, {os.cpu_count()} cores")
    if not args.synthetic_only:
        law_school_ratio(args.data)
        law_school_experiment(args.data)
    kinds = ((4, False),) if args.continuous_only else ((3, True), (4, False))
    for number, discrete in kinds:
        quarter = (
            None if args.synthetic_only else synthetic_run(args.n // 4, discrete)[2]["situation testing (ST+CST+CF)"]
        )
        data, result, stages = synthetic_run(args.n, discrete)
        kind = "discrete features (ties, like LSAT and UGPA)" if discrete else "continuous features (no ties)"
        print(
            f"{number}. synthetic, {kind}: rows = {len(data)}, k = {', '.join(map(str, law_school.K_LIST))}, "
            f"{int(data['group'].sum())} complainants, ST+CST+CF:"
        )
        for name, value in stages.items():
            print(f"   {name:<44} {show(value)}{'  parallel' if name in PARALLEL else ''}")
        wall = stages["situation testing (ST+CST+CF)"]
        parallel = sum(stages[name][1] for name in PARALLEL)
        idle = parallel / (os.cpu_count() or 1) + (wall[1] - parallel)
        megabytes, dtype = list_megabytes(result)
        print(
            f"   ratio to the {GOAL:.0f} s goal: {wall[0] / GOAL:.2f} wall, {wall[1] / GOAL:.2f} CPU "
            f"({'met' if wall[0] < GOAL else 'NOT met'} in wall time); load average now {os.getloadavg()[0]:.1f}\n"
            f"   idle-machine projection: parallel CPU / {os.cpu_count()} cores + the serial CPU = {idle:.1f} s\n"
            f"   neighbour lists: {megabytes:,.0f} MB ({dtype} ids); peak memory of this process (ru_maxrss) "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB"
        )
        if quarter is not None:
            exponent = np.log(wall[1] / quarter[1]) / np.log(4)
            print(f"   n = {args.n // 4}: {show(quarter)}; scaling exponent (CPU) {exponent:.2f} (2 = quadratic)")
        print(result.counts.to_string(index=False))
    print(f"load average (1, 5, 15 min) at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
