"""Simulated elicitation, adaptive against balanced (``bench/adaptive.py`` and the tests).

Raters arrive one after another and each answers ``per_rater`` different items, chosen as the platform
chooses them (``analysis.adaptive_design``, the same functions the web worker runs):

* balanced: the least-assigned item first (the adaptive block's fallback, for ever);
* adaptive: the balanced fallback until a fit exists, then the best-scoring of ``candidates`` items
  drawn per decision, refitted every ``refit_every`` answers.

Every ``step`` judgements the answers so far are fitted and three things are recorded: the mean 95% CI
width of the estimated parameters, their squared error against the truth (summed over the parameters) and
the share of the parameters whose 95% interval holds the true value (the design intervals' coverage): the
judgements each design needs to bring the width (or the squared error) down to a target are compared.
The task types (``task``):

* ``choose``: subjects with known Bradley-Terry strengths s ~ N(0, spread^2) (``n_subjects``; the items
  all their pairs), P(a chosen over b) = expit(s_a - s_b); refits by ``fit_for_design``, widths of the
  strengths (centred on their mean, so no subject is a reference with width 0) from ``bradley_terry``.
* ``pair_comparable`` and ``triplet``: subjects with ``n_features`` features uniform on [0, 1], scaled as
  ``fairness.human_metric`` scales them; the raters' metric is ``simulation.metric``'s (M =
  TRIPLET_SLOPE / k I on the k scaled columns) with each weight multiplied by exp(N(0, spread^2)), so
  M = diag(m) (with ``rater_spread``, each rater's own: m times exp(N(0, rater_spread^2)) per weight,
  raters who disagree, which the design's one fit for all does not model); with ``off_diagonal`` rho the
  true metric is not diagonal: M = D^1/2 ((1 - rho) I + rho J) D^1/2, D = diag(m), which the design's
  diagonal model leaves out (its truth is still diag(M) = m); P("treat alike") =
  2 expit(-d_M^2) over all pairs, P(b more similar to the anchor than c) =
  expit(d_M(anchor, c)^2 - d_M(anchor, b)^2) over all triplets. Refits by
  ``fairness.human_metric.metric_for_design``; widths of the weights m_k from the Fisher information of
  the same diagonal model without its prior (Wald intervals, 2 z_0.975 sd; NaN while it is singular).
"""

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from analysis.adaptive_design import (
    CHOICE,
    COMPARABLE,
    TRIPLET,
    Design,
    Fit,
    centred,
    fit_for_design,
    next_item,
    record,
)
from analysis.paired_comparison import bradley_terry
from fairness.human_metric import COLUMNS, Kind, feature_scaling, metric_for_design
from simulation.metric import TRIPLET_SLOPE

Z95 = 1.959963984540054
TASKS = ("choose", "pair_comparable", "triplet")


@dataclass(frozen=True)
class ElicitationRun:
    """After each ``judgements[i]`` judgements: the mean CI width, the squared error of the estimates against
    the truth (summed over the parameters) and the share of the parameters whose 95% interval holds the
    truth (each NaN while the answers cannot be fitted)."""

    design: str
    judgements: list[int]
    mean_ci_width: list[float]
    squared_error: list[float]
    coverage: list[float]

    def judgements_to_reach(self, width: float) -> int | None:
        """The first recorded number of judgements at which the mean CI width is at most ``width``."""
        return next((n for n, w in zip(self.judgements, self.mean_ci_width, strict=True) if w <= width), None)


UNFITTED = (float("nan"),) * 3


def against_truth(estimate, covariance, truth) -> tuple[float, float, float]:
    """Mean width of the Wald intervals estimate +- z_0.975 sd, the squared error sum (estimate - truth)^2
    and the share of the intervals that hold the truth."""
    estimate, truth = np.asarray(estimate, float), np.asarray(truth, float)
    sd = np.sqrt(np.diagonal(np.asarray(covariance, float)))
    covered = np.abs(estimate - truth) <= Z95 * sd
    return float(np.mean(2 * Z95 * sd)), float(np.sum((estimate - truth) ** 2)), float(np.mean(covered))


@dataclass
class _Task:
    """A simulated task: its design, items (id -> subjects), how a rater (their number) answers an item
    (given a uniform draw), the design's fit of the answers so far and :func:`against_truth` of their
    estimate (width, squared error, coverage)."""

    design: Design
    items: dict[str, tuple[str, ...]]
    answer: Callable[[int, tuple[str, ...], float], float]
    fit: Callable[[list[tuple]], tuple]
    measure: Callable[[list[tuple]], tuple[float, float, float]]


def _choice_task(rng: np.random.Generator, n_subjects: int, spread: float) -> _Task:
    subjects = [f"s{i:03d}" for i in range(n_subjects)]
    truth = dict(zip(subjects, rng.normal(0.0, spread, n_subjects), strict=True))

    def comparisons(answers: list[tuple]) -> pd.DataFrame:
        winners = [a if value else b for _, (a, b), value in answers]
        losers = [b if value else a for _, (a, b), value in answers]
        return pd.DataFrame({"winner": winners, "loser": losers})

    def measure(answers: list[tuple]) -> tuple[float, float, float]:
        try:
            result = bradley_terry(comparisons(answers))
        except ValueError:  # not yet strongly connected
            return UNFITTED
        names, estimate, covariance = centred(result.strength, result.covariance)
        true = np.array([truth[name] for name in names])
        return against_truth(estimate, covariance, true - true.mean())

    return _Task(
        CHOICE,
        {f"{a}~{b}": (a, b) for a, b in combinations(subjects, 2)},
        lambda rater, ends, u: float(u < 1.0 / (1.0 + np.exp(truth[ends[1]] - truth[ends[0]]))),
        lambda answers: fit_for_design(comparisons(answers)),
        measure,
    )


def _metric_task(
    rng: np.random.Generator,
    n_subjects: int,
    spread: float,
    n_features: int,
    rater_spread: float,
    kind: Kind,
    off_diagonal: float = 0.0,
) -> _Task:
    subjects = pd.DataFrame(
        rng.random((n_subjects, n_features)),
        index=[f"s{i:03d}" for i in range(n_subjects)],
        columns=[f"f{k}" for k in range(n_features)],
    )
    features = list(subjects.columns)
    scaled = dict(zip(subjects.index, feature_scaling(subjects, features).transform(subjects), strict=True))
    weights = TRIPLET_SLOPE / n_features * np.exp(rng.normal(0.0, spread, n_features))
    if not -1.0 / max(n_features - 1, 1) < off_diagonal < 1.0 and off_diagonal:
        raise ValueError(f"off_diagonal must lie in (-1/(k - 1), 1) for M to be positive definite, not {off_diagonal}")
    shape = (1.0 - off_diagonal) * np.eye(n_features) + off_diagonal
    own = np.random.default_rng(int(rng.integers(2**32))) if rater_spread else None  # drawn only when used
    raters: dict[int, np.ndarray] = {}

    def d2(rater: int, x: str, y: str) -> float:
        if own is not None and rater not in raters:
            raters[rater] = weights * np.exp(own.normal(0.0, rater_spread, n_features))
        root = np.sqrt(raters.get(rater, weights)) * (scaled[x] - scaled[y])
        return float(root @ shape @ root)

    items: dict[str, tuple[str, ...]]
    if kind == "comparable":
        items = {f"{a}~{b}": (a, b) for a, b in combinations(subjects.index, 2)}
        design = COMPARABLE

        def answer(rater: int, ends: tuple[str, ...], u: float) -> float:
            return float(u < 2.0 / (1.0 + np.exp(d2(rater, *ends))))

    else:
        items = {
            f"{anchor}~{b}~{c}": (anchor, b, c)
            for anchor in subjects.index
            for b, c in combinations([s for s in subjects.index if s != anchor], 2)
        }
        design = TRIPLET

        def answer(rater: int, ends: tuple[str, ...], u: float) -> float:
            anchor, b, c = ends
            return float(u < 1.0 / (1.0 + np.exp(d2(rater, anchor, b) - d2(rater, anchor, c))))

    def judgements(answers: list[tuple]) -> pd.DataFrame:
        return pd.DataFrame([(rater, *ends, value) for rater, ends, value in answers], columns=list(COLUMNS[kind]))

    def measure(answers: list[tuple]) -> tuple[float, float, float]:
        try:
            _, m, covariance, _ = metric_for_design(judgements(answers), subjects, features, kind=kind, prior=0.0)
        except (ValueError, np.linalg.LinAlgError):
            return UNFITTED
        return against_truth(m, covariance, weights)

    return _Task(
        design,
        items,
        answer,
        lambda answers: metric_for_design(judgements(answers), subjects, features, kind=kind),
        measure,
    )


def simulation_task(
    task: str,
    rng: np.random.Generator,
    n_subjects: int,
    spread: float,
    n_features: int,
    rater_spread: float = 0.0,
    off_diagonal: float = 0.0,
) -> _Task:
    """The simulated ``task`` (module doc), its truth drawn from ``rng``."""
    if task == "choose":
        return _choice_task(rng, n_subjects, spread)
    if task in ("pair_comparable", "triplet"):
        kind: Kind = "comparable" if task == "pair_comparable" else "triplet"
        return _metric_task(rng, n_subjects, spread, n_features, rater_spread, kind, off_diagonal)
    raise ValueError(f"task must be one of {', '.join(TASKS)}, not {task!r}")


def simulate_elicitation(
    design: str,
    *,
    task: str = "choose",
    n_subjects: int = 30,
    spread: float = 1.5,
    n_features: int = 4,
    rater_spread: float = 0.0,
    off_diagonal: float = 0.0,
    per_rater: int = 10,
    judgements: int = 3000,
    step: int = 100,
    refit_every: int = 20,
    candidates: int = 50,
    seed: int = 0,
) -> ElicitationRun:
    """One simulated study of ``design`` ("adaptive" or "balanced") on ``task``; see the module docstring."""
    rng = np.random.default_rng(seed)
    sim = simulation_task(task, rng, n_subjects, spread, n_features, rater_spread, off_diagonal)
    counts: dict[str, int] = {}
    pending: dict[str, float] = {}
    fit: Fit | None = None
    answers: list[tuple] = []
    given: set[str] = set()
    recorded: list[int] = []
    measured: list[tuple[float, float, float]] = []
    for n in range(judgements):
        if n % per_rater == 0:
            given = set()
        item, _ = next_item(sim.design, sim.items, given, fit, counts, pending, limit=candidates, seed=f"{seed}:{n}")
        ends = sim.items[item]
        record(sim.design, item, ends, fit, counts, pending)
        given.add(item)
        rater = n // per_rater
        answers.append((rater, ends, sim.answer(rater, ends, rng.random())))
        answered = n + 1
        if design == "adaptive" and answered % refit_every == 0:
            fit, pending = Fit(answered, *sim.fit(answers)), {}
        if answered % step == 0:
            recorded.append(answered)
            measured.append(sim.measure(answers))
    widths, errors, coverage = (list(column) for column in zip(*measured, strict=True)) if measured else ([], [], [])
    return ElicitationRun(design, recorded, widths, errors, coverage)
