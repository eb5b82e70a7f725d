"""The registry of the intervals and tests reports print: each with its estimand in one sentence and a
simulation that measures its coverage (an interval: the share of simulated studies whose interval holds
the estimand's true value) or its size (a test: the share of null studies it rejects at 5%).

A procedure is registered by the module that simulates it (``simulation.coverage_studies``: the science
packages import one way, and the simulations need both ``analysis`` and ``fairness``). The test suite runs
every simulation at its reduced size and fails when the measured rate is beyond the procedure's floor
(coverage) or ceiling (size); ``bench/coverage.py`` runs them at full size and prints one table. A
report table that prints an interval or p-value names its procedures (``core.report_texts.ReportTable``),
and a test checks that each is registered.

Procedures that read one estimator's output (a table's several intervals, the same interval against two truths)
simulate a shared :class:`Study`: :func:`measure_many` draws each study once and lets every such procedure read it
(common random numbers). Each procedure still has its own generator seeded alike, so its rate is the one
:func:`measure` gives it alone.

The Monte Carlo standard error of a measured rate p over R studies is sqrt(p (1 - p) / R).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Kind = Literal["coverage", "size"]


@dataclass(frozen=True, eq=False)
class Study:
    """A simulated study that several procedures read: ``draw(rng)`` simulates one study, runs the estimator
    and returns what the procedures read (every draw from ``rng`` happens here)."""

    draw: Callable[[np.random.Generator], Any]


@dataclass(frozen=True)
class Reading:
    """A procedure's simulation that reads a shared :class:`Study`: ``read(outcome)`` says whether the interval
    held the truth (or the test rejected). Called with a generator, it draws the study and reads it."""

    study: Study
    read: Callable[[Any], bool]

    def __call__(self, rng: np.random.Generator) -> bool:
        return bool(self.read(self.study.draw(rng)))


@dataclass(frozen=True)
class Procedure:
    """An interval (``kind="coverage"``) or a test (``kind="size"``) and the simulation that measures it.

    ``simulate(rng)`` simulates one study and returns whether the interval held the truth (coverage) or
    the test rejected a true null at 5% (size); a :class:`Reading` of a shared :class:`Study` is one.
    ``bound``: the least acceptable coverage or the largest acceptable size; ``reduced`` / ``full``: the
    number of studies in the test suite and the benchmark;
    ``contrast``: (what it measures, its simulation) of a procedure the report prints beside this one that is not
    held to the bound (e.g. the unadjusted tests of a family, a paper's rule), which the benchmark also runs."""

    key: str
    function: str
    estimand: str
    kind: Kind
    nominal: float
    bound: float
    simulate: Callable[[np.random.Generator], bool]
    reduced: int
    full: int
    scenario: str = ""
    contrast: tuple[str, Callable[[np.random.Generator], bool]] | None = None


@dataclass(frozen=True)
class Measured:
    key: str
    function: str
    estimand: str
    scenario: str
    kind: Kind
    nominal: float
    rate: float
    mc_se: float
    studies: int

    @property
    def acceptable(self) -> bool:
        procedure = REGISTRY[self.key]
        return self.rate >= procedure.bound if self.kind == "coverage" else self.rate <= procedure.bound


REGISTRY: dict[str, Procedure] = {}


def register(procedure: Procedure) -> Procedure:
    if procedure.key in REGISTRY:
        raise ValueError(f"procedure {procedure.key!r} is registered twice")
    if procedure.kind not in ("coverage", "size"):
        raise ValueError(f"kind must be 'coverage' or 'size', not {procedure.kind!r}")
    REGISTRY[procedure.key] = procedure
    return procedure


def measure(key: str, *, studies: int | None = None, seed: int = 2026) -> Measured:
    """Run ``key``'s simulation over ``studies`` studies (default: its full size) and report the rate."""
    return measure_many({key: studies or REGISTRY[key].full}, seed=seed)[key]


def measure_many(counts: Mapping[str, int], *, seed: int = 2026) -> dict[str, Measured]:
    """Each procedure of ``counts`` (key -> number of studies) measured as :func:`measure` does, with the
    procedures that read one :class:`Study` reading each of its draws: the study is simulated once for them all
    (their generators, seeded alike, would draw the same studies)."""
    shared: dict[Study, dict[str, Callable[[Any], bool]]] = {}
    hits: dict[str, int] = {}
    for key in counts:
        simulate = REGISTRY[key].simulate
        if isinstance(simulate, Reading):
            shared.setdefault(simulate.study, {})[key] = simulate.read
        else:
            hits[key] = _hits(simulate, counts[key], seed)
    for study, reads in shared.items():
        rng = np.random.default_rng(seed)
        hits.update(dict.fromkeys(reads, 0))
        for index in range(max(counts[key] for key in reads)):
            outcome = study.draw(rng)
            for key, read in reads.items():
                if index < counts[key]:
                    hits[key] += bool(read(outcome))
    return {key: _measured(key, hits[key] / counts[key], counts[key]) for key in counts}


def _measured(key: str, rate: float, count: int) -> Measured:
    procedure = REGISTRY[key]
    return Measured(
        key=key,
        function=procedure.function,
        estimand=procedure.estimand,
        scenario=procedure.scenario,
        kind=procedure.kind,
        nominal=procedure.nominal,
        rate=rate,
        mc_se=float(np.sqrt(rate * (1 - rate) / count)),
        studies=count,
    )


def measure_contrast(key: str, *, studies: int | None = None, seed: int = 2026) -> float | None:
    """The rate of ``key``'s contrast over ``studies`` studies (default: its full size), None without one."""
    procedure = REGISTRY[key]
    if procedure.contrast is None:
        return None
    count = studies or procedure.full
    return _hits(procedure.contrast[1], count, seed) / count


def _hits(simulate: Callable[[np.random.Generator], bool], count: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    return sum(bool(simulate(rng)) for _ in range(count))
