"""Simulated elicitation, adaptive against balanced (``bench/adaptive.py`` and the tests).

Raters arrive one after another and each answers ``per_rater`` different items, chosen as the platform
chooses them (``analysis.adaptive_design``, the same functions the web worker runs):

* balanced: the least-assigned item first (the adaptive block's fallback, for ever);
* adaptive: the balanced fallback until a fit exists, then the best-scoring of ``candidates`` items
  drawn per decision, refitted every ``refit_every`` answers.

Every ``step`` judgements the answers so far are fitted and the mean 95% CI width of the estimated
parameters is recorded: the judgements each design needs to bring it down to a target width are compared.
The task types (``task``):

* ``choose``: subjects with known Bradley-Terry strengths s ~ N(0, spread^2) (``n_subjects``; the items
  all their pairs), P(a chosen over b) = expit(s_a - s_b); refits by ``fit_for_design``, widths of the
  strengths (centred on their mean, so no subject is a reference with width 0) from ``bradley_terry``.
* ``pair_comparable`` and ``triplet``: subjects with ``n_features`` features uniform on [0, 1], scaled as
  ``fairness.human_metric`` scales them; the raters' metric is ``simulation.metric``'s (M =
  TRIPLET_SLOPE / k I on the k scaled columns) with each weight multiplied by exp(N(0, spread^2)), so
  M = diag(m) (with ``rater_spread``, each rater's own: m times exp(N(0, rater_spread^2)) per weight,
  raters who disagree, which the design's one fit for all does not model); P("treat alike") =
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
    """Mean CI width after each ``judgements[i]`` judgements (NaN while the answers cannot be fitted)."""

    design: str
    judgements: list[int]
    mean_ci_width: list[float]

    def judgements_to_reach(self, width: float) -> int | None:
        """The first recorded number of judgements at which the mean CI width is at most ``width``."""
        return next((n for n, w in zip(self.judgements, self.mean_ci_width, strict=True) if w <= width), None)


def mean_ci_width(result) -> float:
    """Mean over subjects of 2 z_0.975 sqrt(Var of the centred strength) (a ``bradley_terry`` result)."""
    _, _, covariance = centred(result.strength, result.covariance)
    return float(np.mean(2 * Z95 * np.sqrt(np.diagonal(covariance))))


@dataclass
class _Task:
    """A simulated task: its design, items (id -> subjects), how a rater (their number) answers an item
    (given a uniform draw), the design's fit of the answers so far and the mean CI width of their estimate."""

    design: Design
    items: dict[str, tuple[str, ...]]
    answer: Callable[[int, tuple[str, ...], float], float]
    fit: Callable[[list[tuple]], tuple]
    width: Callable[[list[tuple]], float]


def _choice_task(rng: np.random.Generator, n_subjects: int, spread: float) -> _Task:
    subjects = [f"s{i:03d}" for i in range(n_subjects)]
    truth = dict(zip(subjects, rng.normal(0.0, spread, n_subjects), strict=True))

    def comparisons(answers: list[tuple]) -> pd.DataFrame:
        winners = [a if value else b for _, (a, b), value in answers]
        losers = [b if value else a for _, (a, b), value in answers]
        return pd.DataFrame({"winner": winners, "loser": losers})

    def width(answers: list[tuple]) -> float:
        try:
            return mean_ci_width(bradley_terry(comparisons(answers)))
        except ValueError:  # not yet strongly connected
            return float("nan")

    return _Task(
        CHOICE,
        {f"{a}~{b}": (a, b) for a, b in combinations(subjects, 2)},
        lambda rater, ends, u: float(u < 1.0 / (1.0 + np.exp(truth[ends[1]] - truth[ends[0]]))),
        lambda answers: fit_for_design(comparisons(answers)),
        width,
    )


def _metric_task(
    rng: np.random.Generator, n_subjects: int, spread: float, n_features: int, rater_spread: float, kind: Kind
) -> _Task:
    subjects = pd.DataFrame(
        rng.random((n_subjects, n_features)),
        index=[f"s{i:03d}" for i in range(n_subjects)],
        columns=[f"f{k}" for k in range(n_features)],
    )
    features = list(subjects.columns)
    scaled = dict(zip(subjects.index, feature_scaling(subjects, features).transform(subjects), strict=True))
    weights = TRIPLET_SLOPE / n_features * np.exp(rng.normal(0.0, spread, n_features))
    own = np.random.default_rng(int(rng.integers(2**32))) if rater_spread else None  # drawn only when used
    raters: dict[int, np.ndarray] = {}

    def d2(rater: int, x: str, y: str) -> float:
        if own is not None and rater not in raters:
            raters[rater] = weights * np.exp(own.normal(0.0, rater_spread, n_features))
        return float(raters.get(rater, weights) @ (scaled[x] - scaled[y]) ** 2)

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

    def width(answers: list[tuple]) -> float:
        try:
            _, _, covariance, _ = metric_for_design(judgements(answers), subjects, features, kind=kind, prior=0.0)
        except (ValueError, np.linalg.LinAlgError):
            return float("nan")
        return float(np.mean(2 * Z95 * np.sqrt(np.diagonal(covariance))))

    return _Task(
        design,
        items,
        answer,
        lambda answers: metric_for_design(judgements(answers), subjects, features, kind=kind),
        width,
    )


def simulation_task(
    task: str, rng: np.random.Generator, n_subjects: int, spread: float, n_features: int, rater_spread: float = 0.0
) -> _Task:
    """The simulated ``task`` (module doc), its truth drawn from ``rng``."""
    if task == "choose":
        return _choice_task(rng, n_subjects, spread)
    if task in ("pair_comparable", "triplet"):
        kind: Kind = "comparable" if task == "pair_comparable" else "triplet"
        return _metric_task(rng, n_subjects, spread, n_features, rater_spread, kind)
    raise ValueError(f"task must be one of {', '.join(TASKS)}, not {task!r}")


def simulate_elicitation(
    design: str,
    *,
    task: str = "choose",
    n_subjects: int = 30,
    spread: float = 1.5,
    n_features: int = 4,
    rater_spread: float = 0.0,
    per_rater: int = 10,
    judgements: int = 3000,
    step: int = 100,
    refit_every: int = 20,
    candidates: int = 50,
    seed: int = 0,
) -> ElicitationRun:
    """One simulated study of ``design`` ("adaptive" or "balanced") on ``task``; see the module docstring."""
    rng = np.random.default_rng(seed)
    sim = simulation_task(task, rng, n_subjects, spread, n_features, rater_spread)
    counts: dict[str, int] = {}
    pending: dict[str, float] = {}
    fit: Fit | None = None
    answers: list[tuple] = []
    given: set[str] = set()
    recorded, widths = [], []
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
            widths.append(sim.width(answers))
    return ElicitationRun(design, recorded, widths)
