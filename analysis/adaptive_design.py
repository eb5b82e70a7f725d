"""Adaptive design of paired comparisons: which pair to ask about next, given a Bradley-Terry fit.

Plain Python (no numpy): the web worker scores candidate pairs with it while serving participant pages
(``participation.adaptive``), and the simulation of adaptive elicitation (``simulation.adaptive``) uses
the same functions.

With strengths s of the subjects and their covariance V (both centred on the subjects' mean, so no
subject is a reference), p = expit(s_a - s_b) and w = p (1 - p), the Fisher information of one choice
between a and b (Bradley & Terry 1952), one more choice x = e_a - e_b updates V to
V - w V x x'V / (1 + w x'Vx) (Sherman-Morrison), lowering subject i's variance by
w (V x)_i^2 / (1 + w x'Vx) and so, to first order, its standard deviation by that / (2 sd_i). A pair
scores the drop in the sum of the standard deviations (twice it, a constant that changes no choice):

    score = w sum_i (V x)_i^2 / sd_i / (1 + w x'Vx),

a weighted A-optimality criterion (Chaloner & Verdinelli 1995, section 2.2) for the mean CI width of
the strengths, which the benchmark compares: pairs whose outcome is uncertain (w near 1/4) and whose
difference is uncertain and moves the other strengths. Pairs already assigned since the fit count as
W = the sum of their w (the same update applied to x again: (V x)_i and x'Vx shrink by 1 + W x'Vx), so
the decisions made under one fit do not all go to the same best pair; other pairs' assignments are left
out until the next fit. Without a fit the score is -(times the pair was assigned so far): balanced.
"""

import math
import random
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Fit:
    """A stored fit as the scoring reads it: the subjects' strengths and their covariance matrix, both
    centred on the subjects' mean (:func:`centred`), as plain lists in the order of ``subjects``."""

    id: int
    subjects: list[str]
    strength: list[float]
    covariance: list[list[float]]

    @cached_property
    def index(self) -> dict[str, int]:
        return {subject: i for i, subject in enumerate(self.subjects)}

    @cached_property
    def sd(self) -> list[float]:
        """The strengths' standard deviations."""
        return [math.sqrt(self.covariance[i][i]) for i in range(len(self.subjects))]


def pair_information(fit: Fit, a: str, b: str) -> float:
    """w = p (1 - p), p = expit(s_a - s_b): the Fisher information of one choice between a and b."""
    i, j = fit.index.get(a), fit.index.get(b)
    d = (0.0 if i is None else fit.strength[i]) - (0.0 if j is None else fit.strength[j])
    p = 1.0 / (1.0 + math.exp(-d))
    return p * (1.0 - p)


def pair_score(fit: Fit, pending: dict[str, float], item: str, a: str, b: str) -> float:
    """The first-order drop in the sum of the strengths' standard deviations by one more choice between a
    and b (see the module docstring): w sum_i (V x)_i^2 / sd_i / ((1 + W x'Vx) (1 + (W + w) x'Vx)),
    x = e_a - e_b, W = ``pending[item]``; infinite for a subject the fit has no choice of."""
    i, j = fit.index.get(a), fit.index.get(b)
    if i is None or j is None:
        return math.inf
    v = fit.covariance
    w, assigned = pair_information(fit, a, b), pending.get(item, 0.0)
    xvx = v[i][i] + v[j][j] - 2 * v[i][j]
    spread = sum((row[i] - row[j]) ** 2 / sd for row, sd in zip(v, fit.sd, strict=True))
    return w * spread / ((1.0 + assigned * xvx) * (1.0 + (assigned + w) * xvx))


def draw_candidates(items: list[str], given: set[str], limit: int, seed: str) -> list[str]:
    """The items not ``given`` in an order drawn from ``seed``; at most ``limit`` of them."""
    rng = random.Random(seed)
    rest = [item for item in items if item not in given]
    return rng.sample(rest, limit) if len(rest) > limit else rng.sample(rest, len(rest))


def score_candidates(
    candidates: list[str], pairs: dict[str, tuple[str, str]], fit: Fit | None, counts: dict, pending: dict
) -> list[list]:
    """[[item, score], ...] for each candidate (the balanced fallback without a fit)."""
    if fit is None:
        return [[item, -counts.get(item, 0)] for item in candidates]
    return [[item, pair_score(fit, pending, item, *pairs[item])] for item in candidates]


def best(scored: list[list]) -> str:
    """The first candidate with the highest score."""
    top = max(score for _, score in scored)
    return next(item for item, score in scored if score == top)


def next_item(
    pairs: dict[str, tuple[str, str]],
    given: set[str],
    fit: Fit | None,
    counts: dict,
    pending: dict,
    *,
    limit: int,
    seed: str,
) -> tuple[str, list[list]]:
    """The next item and the scored candidates: of the items not ``given``, in an order drawn from
    ``seed``, at most ``limit``: with a fit the first ones, without one the least assigned ones (a stable
    sort by count, so the first of them is the least-assigned item overall: balanced); the first
    best-scoring wins."""
    if fit is not None:
        candidates = draw_candidates(list(pairs), given, limit, seed)
    else:
        shuffled = draw_candidates(list(pairs), given, len(pairs), seed)
        candidates = sorted(shuffled, key=lambda item: counts.get(item, 0))[:limit]
    scored = score_candidates(candidates, pairs, fit, counts, pending)
    return best(scored), scored


def record(item: str, pair: tuple[str, str], fit: Fit | None, counts: dict, pending: dict) -> None:
    """Count a decided item, and add its information to its subjects' since the fit."""
    counts[item] = counts.get(item, 0) + 1
    if fit is not None:
        pending[item] = pending.get(item, 0.0) + pair_information(fit, *pair)


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


def fit_for_design(comparisons, *, virtual_games: int = 1) -> tuple[list[str], list[float], list[list[float]]]:
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
