"""CPU seconds per test: on a shared machine wall time is several times the idle figure, CPU time is not.

Run (a pytest plugin; each xdist worker appends its records to SUITE_CPU_OUT, default suite_cpu.jsonl):
    SUITE_CPU_OUT=/tmp/cpu.jsonl .venv/bin/python -m pytest -p bench.suite_cpu -n 2 --dist loadgroup tests/analysis
then the table (total; by file; the slowest phases, setup showing the expensive fixtures):
    .venv/bin/python bench/suite_cpu.py /tmp/cpu.jsonl [--top 30]

A record is one phase (setup, call, teardown) of one test: user + system CPU of the test process and of
the child processes it waited for (servers and workers it started and stopped), its wall time, its
xdist worker and group, its markers among browser, slow, faults, serial and postgres, and the load's stretch
(1-minute load average / cores, at least 1: bench/suite_makespan.py uses it to tell waiting from load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

MARKERS = {"browser", "slow", "faults", "serial", "postgres"}


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _record(item: pytest.Item, phase: str) -> Iterator[None]:
    own, children = _cpu()
    start = time.perf_counter()
    yield
    own_after, children_after = _cpu()
    record = {
        "id": item.nodeid,
        "phase": phase,
        "cpu": round(own_after - own, 4),
        "child": round(children_after - children, 4),
        "wall": round(time.perf_counter() - start, 4),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "group": next((mark.args[0] for mark in item.iter_markers("xdist_group")), None),
        "marks": sorted({mark.name for mark in item.iter_markers()} & MARKERS),
        "stretch": round(max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)), 2),
    }
    with open(os.environ.get("SUITE_CPU_OUT", "suite_cpu.jsonl"), "a") as out:
        out.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _record(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _record(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _record(item, "teardown")


@dataclass(frozen=True)
class Phase:
    """One phase of one test: CPU seconds (own + waited children) and wall seconds."""

    test: str
    phase: str
    cpu: float
    wall: float
    worker: str
    marks: tuple[str, ...]
    group: str | None = None  # its xdist_group (tests sharing a module-scoped set-up run on one worker)
    stretch: float | None = None  # load average / cores at its end: how much the load stretched CPU work


def read(paths: list[Path]) -> list[Phase]:
    """The records of one or more runs."""
    phases = []
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            cpu = r["cpu"] + r["child"]
            marks = tuple(r["marks"])
            phases.append(
                Phase(r["id"], r["phase"], cpu, r["wall"], r["worker"], marks, r.get("group"), r.get("stretch"))
            )
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="JSON-lines files written by the plugin")
    parser.add_argument("--top", type=int, default=30, help="how many files and phases to list")
    args = parser.parse_args()
    phases = read(args.files)
    tests = {p.test for p in phases}
    cpu, wall = sum(p.cpu for p in phases), sum(p.wall for p in phases)
    print(f"{len(tests)} tests, cpu {cpu:.1f} s, summed wall {wall:.1f} s")
    by: dict[str, float] = defaultdict(float)
    for p in phases:
        by[f"worker {p.worker}"] += p.cpu
        by["marked " + (",".join(p.marks) or "(none)")] += p.cpu
    for key, seconds in sorted(by.items()):
        print(f"{seconds:8.1f}  {key}")
    files: dict[str, float] = defaultdict(float)
    for p in phases:
        files[p.test.split("::")[0]] += p.cpu
    print("\ncpu s   file")
    for name, seconds in sorted(files.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{seconds:7.1f}  {name}")
    print("\ncpu s   wall s  phase     test")
    for p in sorted(phases, key=lambda p: -p.cpu)[: args.top]:
        print(f"{p.cpu:6.1f}  {p.wall:7.1f}  {p.phase:8s}  {p.test} {','.join(p.marks)}")


if __name__ == "__main__":
    main()
