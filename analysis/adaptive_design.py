"""Adaptive design of paired comparisons and similarity judgements: which item to ask about next, given a fit.

Plain Python (no numpy): the web worker scores candidate items with it while serving participant pages
(``participation.adaptive``), and the simulation of adaptive elicitation (``simulation.adaptive``) uses
the same functions.

Every design is a model whose answer to item x (a vector over the fit's parameters theta) has a
linear predictor t = x' theta, and one answer's Fisher information about theta is w(t) x x'
(McCullagh & Nelder 1989, section 2.5: a generalised linear model's information). With the fit's
estimate theta, its covariance V and sd_i = sqrt(V_ii), one more answer updates V to
V - w V x x'V / (1 + w x'Vx) (Sherman-Morrison), lowering parameter i's variance by
w (V x)_i^2 / (1 + w x'Vx) and so, to first order, its standard deviation by that / (2 sd_i). An item
scores the drop in the sum of the standard deviations (twice it, a constant that changes no choice):

    score = w sum_i (V x)_i^2 / sd_i / (1 + w x'Vx),

a weighted A-optimality criterion (Chaloner & Verdinelli 1995, section 2.2) for the mean CI width of
the parameters, which the benchmark compares. Items already assigned since the fit count as W = the
sum of their w (the same update applied to x again: (V x)_i and x'Vx shrink by 1 + W x'Vx), so the
decisions made under one fit do not all go to the same best item; other items' assignments are left
out until the next fit. Without a fit the score is -(times the item was assigned so far): balanced.
Every score is finite (a decision stores its candidates' scores as JSON, which holds no Infinity): a
subject the fit has not seen yet is scored from its prior (:func:`pair_direction`).

Each task type that may be adaptive names its :class:`Design` (``tasks.base.Adaptive``):

* :data:`CHOICE` (``choose``): theta the subjects' Bradley-Terry strengths (Bradley & Terry 1952),
  centred on their mean so no subject is a reference; x = e_a - e_b, p = expit(s_a - s_b), w = p (1 - p).
* :data:`COMPARABLE` (``pair_comparable``): theta = m, the diagonal of the learned metric's matrix M
  over the scaled feature columns (``fairness.human_metric``), so d^2 = sum_k m_k delta_k^2 = m'x with
  x = the pair's squared scaled differences; EXPLORE's link P(alike) = 2 expit(-t) (Mukherjee et al.
  2020), whose Bernoulli information is w = pi'(t)^2 / (pi (1 - pi)) = 2 s^2 (1 - s) / (2 s - 1),
  s = expit(t) (:func:`comparable_information`).
* :data:`TRIPLET` (``triplet``): theta = m as for COMPARABLE; x = (anchor - c)^2 - (anchor - b)^2
  (squared scaled differences), P(b more similar to the anchor) = expit(t), w = p (1 - p).
"""

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

Direction = tuple[list[float], list[float], float]  # (V x, the SDs of its parameters, x'Vx)
Terms = tuple[float, float, float]  # (w, sum_i (V x)_i^2 / sd_i, x'Vx) of an item under a fit


@dataclass(frozen=True)
class Fit:
    """A stored fit as the scoring reads it: the estimate of the design's ``parameters`` and their
    covariance matrix (plain lists in the order of ``parameters``), and for the metric designs each
    subject's scaled feature vector (``vectors``, subject id -> list; empty for CHOICE, whose
    parameters are the subjects' strengths, centred on their mean: :func:`centred`)."""

    id: int
    parameters: list[str]
    estimate: list[float]
    covariance: list[list[float]]
    vectors: dict[str, list[float]] = field(default_factory=dict)

    @cached_property
    def index(self) -> dict[str, int]:
        return {parameter: i for i, parameter in enumerate(self.parameters)}

    @cached_property
    def sd(self) -> list[float]:
        """The estimates' standard deviations."""
        return [math.sqrt(self.covariance[i][i]) for i in range(len(self.parameters))]

    @cached_property
    def terms(self) -> dict[tuple, Terms]:
        """:func:`item_terms` already computed under this fit, by (design, subjects): filled as items are
        scored, so it holds at most the items this process scored under the fit."""
        return {}


@dataclass(frozen=True)
class Design:
    """How a task type's items are scored: ``information(fit, subjects)`` is w of one answer on the item
    showing ``subjects`` (a pair's a and b, a triplet's anchor, b and c), ``direction(fit, subjects)`` its
    V x, the standard deviations of the parameters V x runs over, and x'Vx."""

    name: str
    information: Callable[[Fit, Sequence[str]], float]
    direction: Callable[[Fit, Sequence[str]], Direction]


def expit(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def pair_information(fit: Fit, subjects: Sequence[str]) -> float:
    """w = p (1 - p), p = expit(s_a - s_b): the Fisher information of one choice between a and b."""
    a, b = subjects
    i, j = fit.index.get(a), fit.index.get(b)
    d = (0.0 if i is None else fit.estimate[i]) - (0.0 if j is None else fit.estimate[j])
    p = 1.0 / (1.0 + math.exp(-d))
    return p * (1.0 - p)


def pair_direction(fit: Fit, subjects: Sequence[str]) -> Direction:
    """V x, the SDs and x'Vx for x = e_a - e_b (the columns' difference: no product with the zeros of x).

    A subject the fit has not seen (no answer on it when the fit was made) is a parameter of its own with
    its prior, independent of the fitted ones: strength 0 (the fitted subjects' mean, as
    :func:`pair_information` takes it) and variance :data:`UNSEEN_VARIANCE` (what :func:`fit_for_design`'s
    virtual games alone give). Its entry of V x is +-UNSEEN_VARIANCE and it adds UNSEEN_VARIANCE to x'Vx,
    so the pair scores finite and, with the largest variance of all, usually first."""
    a, b = subjects
    i, j = fit.index.get(a), fit.index.get(b)
    v = fit.covariance
    if i is not None and j is not None:
        return [row[i] - row[j] for row in v], fit.sd, v[i][i] + v[j][j] - 2 * v[i][j]
    vx = [(0.0 if i is None else row[i]) - (0.0 if j is None else row[j]) for row in v]
    unseen = [sign * UNSEEN_VARIANCE for sign, k in ((1.0, i), (-1.0, j)) if k is None]
    xvx = sum(v[k][k] for k in (i, j) if k is not None) + UNSEEN_VARIANCE * len(unseen)
    return vx + unseen, fit.sd + [math.sqrt(UNSEEN_VARIANCE)] * len(unseen), xvx


CHOICE = Design("choice", pair_information, pair_direction)

# Floor of t = d^2 in the comparable information, which grows as 1/t towards identical subjects (where
# "treat alike" is certain, so one "not alike" would be infinitely informative): at most about 50, so a
# weight fitted at 0 does not make the pairs that differ only in its feature look settled.
MIN_PREDICTOR = 0.01


def comparable_information(t: float) -> float:
    """w(t) = pi'(t)^2 / (pi (1 - pi)) for pi = 2 expit(-t): 2 s^2 (1 - s) / (2 s - 1), s = expit(t)
    (1 - s = expit(-t), 2 s - 1 = tanh(t / 2): no cancellation)."""
    t = max(t, MIN_PREDICTOR)
    s, q = expit(t), expit(-t)
    return 2.0 * s * s * q / math.tanh(t / 2)  # 2 s - 1 = s - q = tanh(t / 2)


def logistic_information(t: float) -> float:
    """w(t) = p (1 - p), p = expit(t): a logistic model's information."""
    return expit(t) * expit(-t)


def metric_vector(fit: Fit, subjects: Sequence[str]) -> list[float]:
    """x of a pair (the squared scaled differences) or a triplet ((anchor - c)^2 - (anchor - b)^2). The fit
    holds every subject of the pool (the refit scales them all), so a subject without a vector is a KeyError."""
    rows = [fit.vectors[s] for s in subjects]
    if len(rows) == 2:
        a, b = rows
        return [(u - v) ** 2 for u, v in zip(a, b, strict=True)]
    anchor, b, c = rows
    return [(u - z) ** 2 - (u - y) ** 2 for u, y, z in zip(anchor, b, c, strict=True)]


def metric_information(link: Callable[[float], float]) -> Callable[[Fit, Sequence[str]], float]:
    """w of an item under a metric design: ``link``'s information at t = m'x."""

    def information(fit: Fit, subjects: Sequence[str]) -> float:
        x = metric_vector(fit, subjects)
        return link(sum(m * u for m, u in zip(fit.estimate, x, strict=True)))

    return information


def metric_direction(fit: Fit, subjects: Sequence[str]) -> Direction:
    """V x, the SDs and x'Vx of the item's x (:func:`metric_vector`)."""
    x = metric_vector(fit, subjects)
    vx = [sum(v * u for v, u in zip(row, x, strict=True)) for row in fit.covariance]
    return vx, fit.sd, sum(u * v for u, v in zip(x, vx, strict=True))


COMPARABLE = Design("comparable", metric_information(comparable_information), metric_direction)
TRIPLET = Design("triplet", metric_information(logistic_information), metric_direction)
DESIGNS = {design.name: design for design in (CHOICE, COMPARABLE, TRIPLET)}


def item_terms(design: Design, fit: Fit, subjects: Sequence[str]) -> Terms:
    """The parts of an item's score that depend on the fit alone: w, sum_i (V x)_i^2 / sd_i and x'Vx.
    Computed once per fit and item in a process (``Fit.terms``): the same arithmetic every time, so a
    memoised score equals a fresh one bit for bit."""
    key = (design.name, *subjects)
    if key not in fit.terms:
        vx, sd, xvx = design.direction(fit, subjects)
        spread = sum(u**2 / s for u, s in zip(vx, sd, strict=True))
        fit.terms[key] = design.information(fit, subjects), spread, xvx
    return fit.terms[key]


def item_score(design: Design, fit: Fit, pending: dict[str, float], item: str, subjects: Sequence[str]) -> float:
    """The first-order drop in the sum of the parameters' standard deviations by one more answer on the
    item (see the module docstring): w sum_i (V x)_i^2 / sd_i / ((1 + W x'Vx) (1 + (W + w) x'Vx)),
    W = ``pending[item]``."""
    w, spread, xvx = item_terms(design, fit, subjects)
    assigned = pending.get(item, 0.0)
    return w * spread / ((1.0 + assigned * xvx) * (1.0 + (assigned + w) * xvx))


def draw_candidates(items: list[str], given: set[str], limit: int, seed: str) -> list[str]:
    """The items not ``given`` in an order drawn from ``seed``; at most ``limit`` of them."""
    rng = random.Random(seed)
    rest = [item for item in items if item not in given]
    return rng.sample(rest, limit) if len(rest) > limit else rng.sample(rest, len(rest))


def score_candidates(
    design: Design,
    candidates: list[str],
    items: dict[str, tuple[str, ...]],
    fit: Fit | None,
    counts: dict,
    pending: dict,
) -> list[list]:
    """[[item, score], ...] for each candidate (the balanced fallback without a fit)."""
    if fit is None:
        return [[item, -counts.get(item, 0)] for item in candidates]
    return [[item, item_score(design, fit, pending, item, items[item])] for item in candidates]


def best(scored: list[list]) -> str:
    """The first candidate with the highest score."""
    top = max(score for _, score in scored)
    return next(item for item, score in scored if score == top)


def next_item(
    design: Design,
    items: dict[str, tuple[str, ...]],
    given: set[str],
    fit: Fit | None,
    counts: dict,
    pending: dict,
    *,
    limit: int,
    seed: str,
) -> tuple[str, list[list]]:
    """The next item and the scored candidates: ``items`` maps each item id to the subjects it shows; of
    the items not ``given``, in an order drawn from ``seed``, at most ``limit``: with a fit the first
    ones, without one the least assigned ones (a stable sort by count, so the first of them is the
    least-assigned item overall: balanced); the first best-scoring wins."""
    if fit is not None:
        candidates = draw_candidates(list(items), given, limit, seed)
    else:
        shuffled = draw_candidates(list(items), given, len(items), seed)
        candidates = sorted(shuffled, key=lambda item: counts.get(item, 0))[:limit]
    scored = score_candidates(design, candidates, items, fit, counts, pending)
    return best(scored), scored


def record(design: Design, item: str, subjects: Sequence[str], fit: Fit | None, counts: dict, pending: dict) -> None:
    """Record a decided item: without a fit count it (``counts``, which only the balanced fallback reads),
    with one add its information to the item's since the fit (``pending``). A block's fits only succeed
    each other, so its decisions without a fit all come before its first fit: the counts are never read
    again once a fit exists, and are not kept up from then on."""
    if fit is None:
        counts[item] = counts.get(item, 0) + 1
        return
    pending[item] = pending.get(item, 0.0) + item_terms(design, fit, subjects)[0]


def centred(strength, covariance) -> tuple[list[str], list[float], list[list[float]]]:
    """A fit's subjects, strengths (a pandas Series by subject) minus their mean, and the covariance of
    those (from the strengths' covariance V, a DataFrame): C V C with C = I - J/n, the same whichever
    subject was the fit's reference."""
    values = covariance.to_numpy()
    row = values.mean(axis=1, keepdims=True)
    centred_covariance = values - row - row.T + values.mean()
    names = [str(item) for item in strength.index]
    return names, (strength - strength.mean()).astype(float).tolist(), centred_covariance.tolist()


PRIOR = "\x00prior"  # the virtual subject of :func:`fit_for_design` (no subject id is this)
VIRTUAL_GAMES = 1  # :func:`fit_for_design`'s wins and losses per subject against PRIOR
# The variance of a strength only the virtual games inform: 1 / (2 VIRTUAL_GAMES p (1 - p)) at p = 1/2, the
# prior of a subject the fit has not seen (:func:`pair_direction`).
UNSEEN_VARIANCE = 2.0 / VIRTUAL_GAMES


def fit_for_design(
    comparisons, *, virtual_games: int = VIRTUAL_GAMES
) -> tuple[list[str], list[float], list[list[float]]]:
    """The Bradley-Terry fit the design scores with, as :func:`centred` gives it: ``comparisons``
    (``winner``, ``loser`` and optionally ``tie``, as ``bradley_terry`` takes them) plus, per subject,
    ``virtual_games`` wins and losses against a virtual subject of strength 0 (Coulom 2008's virtual
    draws of Whole-History Rating): a prior that keeps every strength finite, so a design fit exists from
    the first answers on (the estimates the analysis reports use no such games). Raises ValueError
    only without any comparison."""
    import pandas as pd

    from analysis.paired_comparison import bradley_terry

    subjects = sorted(set(comparisons["winner"]) | set(comparisons["loser"]))
    if not subjects:
        raise ValueError("no comparisons to fit")
    games = pd.DataFrame(
        {
            "winner": [*subjects, *[PRIOR] * len(subjects)] * virtual_games,
            "loser": [*[PRIOR] * len(subjects), *subjects] * virtual_games,
        }
    )
    fit = bradley_terry(pd.concat([comparisons, games], ignore_index=True).fillna({"tie": 0}), reference=PRIOR)
    kept = [subject for subject in fit.strength.index if subject != PRIOR]
    return centred(fit.strength[kept], fit.covariance.loc[kept, kept])


DesignFit = tuple[list[str], list[float], list[list[float]], dict[str, list[float]]]  # as Fit stores them


def choice_fit(answers: Sequence[tuple], pool: dict) -> DesignFit:
    """:data:`CHOICE`'s fit of a choose block's answers ((rater, "a~b", choice: 1 = a, 0 = b, 0.5 =
    "Equally", a Davidson tie)): :func:`fit_for_design`, no vectors. ``pool`` is not needed."""
    import pandas as pd

    rows = [(str(key).split("~"), float(value)) for _, key, value in answers]
    comparisons = pd.DataFrame(
        {
            "winner": [a if value >= 0.5 else b for (a, b), value in rows],
            "loser": [b if value >= 0.5 else a for (a, b), value in rows],
            "tie": [int(value == 0.5) for _, value in rows],
        }
    )
    return (*fit_for_design(comparisons), {})
