"""How long `make test` takes with 1..N xdist workers on C cores, simulated from `bench/suite_cpu.py`'s records.

Run (records of one or more profiled runs, any load; see bench/suite_cpu.py):
    .venv/bin/python bench/suite_makespan.py /tmp/cpu.jsonl [--cores 2] [--workers 1 2 3 4 6] [--slowdown S]

A loaded machine stretches every test's CPU work by the load, so its wall time cannot be used as it is. Each
test is modelled by its CPU seconds c (the test process and the children it waited for) and its waiting
w = max(0, wall - S * c): the time it spends on something that is not this machine's CPU (sleeps, polling,
timeouts), S being the slowdown the load imposed on CPU work when the record was taken: each phase's
``stretch`` (load average / cores), or for records without it (older runs) or with ``--slowdown`` a single S
(default: the median wall / cpu of the tests with at least 0.3 CPU seconds; tests that wait lie above it).
On an idle machine a test then lasts c + w, using a share c / (c + w) of one core.

The parallel part (every test not marked ``serial``) is list-scheduled in the records' order on N workers: a
test sharing an xdist_group goes with its whole group to one worker (``--dist loadgroup``), every other test
to the first free worker; whenever the running tests ask for more than C cores they all slow down in
proportion (processor sharing). Each worker first pays ``--worker-setup`` CPU seconds (its test database's
migrations). The serial part (tests marked ``serial``) runs after it on one worker. Prints, per N, the
parallel and the serial minutes, the total and the cores used; then the largest groups against the parallel
part's total / N (a group longer than that is the long pole no worker count removes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

from bench.suite_cpu import Phase, read  # noqa: E402


@dataclass(frozen=True)
class Test:
    """One test on an idle machine: its CPU seconds and its idle duration (CPU plus waiting)."""

    name: str
    cpu: float
    duration: float
    group: str | None
    serial: bool


@dataclass(frozen=True)
class Makespan:
    """The simulated `make test` with ``workers`` workers: seconds of its parallel and serial parts."""

    workers: int
    parallel: float
    serial: float
    cpu: float

    @property
    def total(self) -> float:
        return self.parallel + self.serial


def slowdown(phases: list[Phase]) -> float:
    """The median wall / cpu of the tests with at least 0.3 CPU seconds (the load's stretch of CPU work)."""
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for p in phases:
        cpu[p.test] += p.cpu
        wall[p.test] += p.wall
    ratios = [wall[t] / c for t, c in cpu.items() if c >= 0.3]
    return max(1.0, statistics.median(ratios)) if ratios else 1.0


def idle_tests(phases: list[Phase], stretch: float, *, recorded: bool = True) -> list[Test]:
    """Each test's CPU and idle duration: the sum over its phases of c + max(0, wall - S * c), S the phase's
    recorded stretch (``recorded`` and present) or ``stretch``; in the records' order."""
    cpu: dict[str, float] = defaultdict(float)
    duration: dict[str, float] = defaultdict(float)
    first: dict[str, Phase] = {}
    for p in phases:
        s = p.stretch if recorded and p.stretch is not None else stretch
        cpu[p.test] += p.cpu
        duration[p.test] += p.cpu + max(0.0, p.wall - s * p.cpu)
        first.setdefault(p.test, p)
    return [Test(name, cpu[name], duration[name], p.group, "serial" in p.marks) for name, p in first.items()]


def units(tests: list[Test]) -> list[list[Test]]:
    """Work units as ``--dist loadgroup`` hands them out: a group's tests together, every other test alone."""
    grouped: dict[str, list[Test]] = {}
    out: list[list[Test]] = []
    for t in tests:
        if t.group is None:
            out.append([t])
        elif t.group in grouped:
            grouped[t.group].append(t)
        else:
            grouped[t.group] = [t]
            out.append(grouped[t.group])
    return out


def simulate(work: list[list[Test]], *, workers: int, cores: float, worker_setup: float) -> float:
    """Seconds until the last worker finishes: list scheduling of ``work`` on ``workers`` processes sharing
    ``cores`` (processor sharing: when the running tests' CPU shares sum to more than ``cores``, each
    progresses at cores / that sum)."""
    queue = list(reversed(work))
    # per worker: the tests left of its unit, the running test's remaining idle seconds and its CPU share
    left: list[list[tuple[float, float]]] = [[(worker_setup, 1.0)] for _ in range(workers)]
    now = 0.0
    while True:
        for todo in left:
            if not todo and queue:
                todo.extend((t.duration, t.cpu / t.duration if t.duration > 0 else 0.0) for t in queue.pop())
        running = [todo for todo in left if todo]
        if not running:
            return now
        demand = sum(todo[0][1] for todo in running)
        rate = 1.0 if demand <= cores else cores / demand
        step = min(todo[0][0] for todo in running) / rate
        now += step
        for todo in running:
            remaining, share = todo[0]
            remaining -= step * rate
            if remaining <= 1e-9:
                todo.pop(0)
            else:
                todo[0] = (remaining, share)


def makespans(tests: list[Test], workers: list[int], *, cores: float, worker_setup: float) -> list[Makespan]:
    """The parallel part on each worker count, then the serial part alone."""
    parallel = units([t for t in tests if not t.serial])
    serial = sum(t.duration for t in tests if t.serial)
    cpu = sum(t.cpu for t in tests)
    return [
        Makespan(n, simulate(parallel, workers=n, cores=cores, worker_setup=worker_setup), serial, cpu) for n in workers
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="JSON-lines files written by bench.suite_cpu")
    parser.add_argument("--cores", type=float, default=2.0, help="cores of the machine simulated")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3, 4, 6], help="worker counts to simulate")
    parser.add_argument("--slowdown", type=float, help="the load's stretch of CPU work when recorded (default: median)")
    parser.add_argument("--worker-setup", type=float, default=5.0, help="CPU seconds each worker pays first")
    parser.add_argument("--top", type=int, default=8, help="how many of the largest groups to list")
    args = parser.parse_args()
    phases = read(args.files)
    stretch = args.slowdown or slowdown(phases)
    tests = idle_tests(phases, stretch, recorded=args.slowdown is None)
    cpu, idle = sum(t.cpu for t in tests), sum(t.duration for t in tests)
    recorded = sum(p.stretch is not None for p in phases) if args.slowdown is None else 0
    print(f"{len(tests)} tests; slowdown: recorded in {recorded} of {len(phases)} phases, else {stretch:.1f}")
    print(f"cpu {cpu:.0f} s; idle durations {idle:.0f} s")
    print(f"waiting (idle duration - cpu): {idle - cpu:.0f} s; marked serial: {sum(t.serial for t in tests)} tests")
    print("\nworkers  parallel min  serial min  total min  cores busy  serial share")
    results = makespans(tests, args.workers, cores=args.cores, worker_setup=args.worker_setup)
    for m in results:
        busy = (m.cpu - sum(t.cpu for t in tests if t.serial) + m.workers * args.worker_setup) / m.parallel
        print(
            f"{m.workers:7d}  {m.parallel / 60:12.1f}  {m.serial / 60:10.1f}  {m.total / 60:9.1f}"
            f"  {busy:10.2f}  {m.serial / m.total:12.0%}"
        )
    groups: dict[str, float] = defaultdict(float)
    for t in tests:
        if t.group is not None and not t.serial:
            groups[t.group] += t.duration
    share = sum(t.duration for t in tests if not t.serial) / args.cores
    print(f"\nlargest groups (idle s) against the parallel part / cores = {share:.0f} s:")
    for group, seconds in sorted(groups.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{seconds:8.0f}  {seconds / share:5.0%}  {group}")


if __name__ == "__main__":
    main()
