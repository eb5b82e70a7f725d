"""Simulated elicitation of paired choices, adaptive against balanced (``bench/adaptive.py`` and the tests).

Simulated raters choose between subjects with known Bradley-Terry strengths s ~ N(0, spread^2):
P(a chosen over b) = expit(s_a - s_b). Raters arrive one after another and each judges ``per_rater``
different pairs of all the pairs of ``n_subjects`` subjects, chosen as the platform chooses them
(``analysis.adaptive_design``, the same functions the web worker runs):

* balanced: the least-assigned pair first (the adaptive block's fallback, for ever);
* adaptive: the balanced fallback until a Bradley-Terry fit exists, then the best-scoring of
  ``candidates`` pairs drawn per decision, refitted every ``refit_every`` answers
  (``analysis.paired_comparison.bradley_terry``; a fit it refuses keeps the previous one).

Every ``step`` judgements the answers so far are fitted and the mean 95% CI width of the subjects'
strengths (centred on their mean, so no subject is a reference with width 0) is recorded: the
judgements each design needs to bring it down to a target width are compared.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.adaptive_design import Fit, centred, fit_for_design, next_item, record
from analysis.paired_comparison import bradley_terry

Z95 = 1.959963984540054


@dataclass(frozen=True)
class ElicitationRun:
    """Mean CI width after each ``judgements[i]`` judgements (NaN while the answers cannot be fitted)."""

    design: str
    judgements: list[int]
    mean_ci_width: list[float]

    def judgements_to_reach(self, width: float) -> int | None:
        """The first recorded number of judgements at which the mean CI width is at most ``width``."""
        return next((n for n, w in zip(self.judgements, self.mean_ci_width, strict=True) if w <= width), None)


def _fit(winners: list[str], losers: list[str]):
    try:
        return bradley_terry(pd.DataFrame({"winner": winners, "loser": losers}))
    except ValueError:  # not yet strongly connected
        return None


def mean_ci_width(result) -> float:
    """Mean over subjects of 2 z_0.975 sqrt(Var of the centred strength)."""
    _, _, covariance = centred(result.strength, result.covariance)
    return float(np.mean(2 * Z95 * np.sqrt(np.diagonal(covariance))))


def simulate_elicitation(
    design: str,
    *,
    n_subjects: int = 30,
    spread: float = 1.5,
    per_rater: int = 10,
    judgements: int = 3000,
    step: int = 100,
    refit_every: int = 20,
    candidates: int = 50,
    seed: int = 0,
) -> ElicitationRun:
    """One simulated study of ``design`` ("adaptive" or "balanced"); see the module docstring."""
    rng = np.random.default_rng(seed)
    subjects = [f"s{i:03d}" for i in range(n_subjects)]
    truth = dict(zip(subjects, rng.normal(0.0, spread, n_subjects), strict=True))
    pairs = {f"{a}~{b}": (a, b) for i, a in enumerate(subjects) for b in subjects[i + 1 :]}
    counts: dict[str, int] = {}
    pending: dict[str, float] = {}
    fit: Fit | None = None
    winners: list[str] = []
    losers: list[str] = []
    given: set[str] = set()
    recorded, widths = [], []
    for n in range(judgements):
        if n % per_rater == 0:
            given = set()
        item, _ = next_item(pairs, given, fit, counts, pending, limit=candidates, seed=f"{seed}:{n}")
        record(item, pairs[item], fit, counts, pending)
        given.add(item)
        a, b = pairs[item]
        a_wins = rng.random() < 1.0 / (1.0 + np.exp(truth[b] - truth[a]))
        winners.append(a if a_wins else b)
        losers.append(b if a_wins else a)
        answered = n + 1
        if design == "adaptive" and answered % refit_every == 0:
            comparisons = pd.DataFrame({"winner": winners, "loser": losers})
            fit, pending = Fit(answered, *fit_for_design(comparisons)), {}
        if answered % step == 0:
            result = _fit(winners, losers)
            recorded.append(answered)
            widths.append(mean_ci_width(result) if result is not None else float("nan"))
    return ElicitationRun(design, recorded, widths)
