"""The registry of the intervals and tests reports print: each with its estimand in one sentence and a
simulation that measures its coverage (an interval: the share of simulated studies whose interval holds
the estimand's true value) or its size (a test: the share of null studies it rejects at 5%).

A procedure is registered by the module that simulates it (``simulation.coverage_studies``: the science
packages import one way, and the simulations need both ``analysis`` and ``fairness``). The test suite runs
every simulation at its reduced size and fails when the measured rate is beyond the procedure's floor
(coverage) or ceiling (size); ``bench/coverage.py`` runs them at full size and prints one table. A
report table that prints an interval or p-value names its procedures (``core.report_texts.ReportTable``),
and a test checks that each is registered.

The Monte Carlo standard error of a measured rate p over R studies is sqrt(p (1 - p) / R).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

Kind = Literal["coverage", "size"]


@dataclass(frozen=True)
class Procedure:
    """An interval (``kind="coverage"``) or a test (``kind="size"``) and the simulation that measures it.

    ``simulate(rng)`` simulates one study and returns whether the interval held the truth (coverage) or
    the test rejected a true null at 5% (size). ``bound``: the least acceptable coverage or the largest
    acceptable size; ``reduced`` / ``full``: the number of studies in the test suite and the benchmark;
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
    procedure = REGISTRY[key]
    count = studies or procedure.full
    rate = _rate(procedure.simulate, count, seed)
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
    return _rate(procedure.contrast[1], studies or procedure.full, seed)


def _rate(simulate: Callable[[np.random.Generator], bool], count: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    return sum(bool(simulate(rng)) for _ in range(count)) / count
