"""Simulated studies of the trade-off task's intervals (``analysis.tradeoff``), registered in
``analysis.coverage.REGISTRY`` (imported by ``simulation.coverage_studies``).

Raters choose the fairer of two models with P(A) = expit(w_r . (x_A - x_B)), w_r ~ N(WEIGHTS, SPREAD^2 I):
x = (accuracy, FPR gap, FNR gap, selection-rate gap), the differences drawn as those of models on random
sub-pools (sd 0.05 for accuracy, 0.1 for the gaps). Raters differ, so the pooled conditional logit estimates
the population-averaged weights; the truth is that fit on TRUTH_RATERS raters (its large-sample limit). A
model's score difference w . (x_m - x_ref) has the truth w_truth . (x_m - x_ref).
"""

from functools import cache

import numpy as np
import pandas as pd
from scipy import special

from analysis.coverage import Procedure, Reading, Study, register
from analysis.tradeoff import FEATURES, TradeoffWeights, model_scores, tradeoff_weights

WEIGHTS = np.array([6.0, -8.0, -3.0, -5.0])
SPREAD = 2.0
SCALES = np.array([0.05, 0.1, 0.1, 0.1])
TRUTH_RATERS = 20_000
RATERS, PER_RATER = 60, 12
# Two audited models' features (score difference of the second from the first)
AUDITED = pd.DataFrame(
    [[0.70, 0.20, 0.10, 0.15], [0.66, 0.05, 0.08, 0.02]], index=["accurate", "fair"], columns=list(FEATURES)
)


def tradeoff_choices(rng: np.random.Generator, *, raters: int = RATERS, per_rater: int = PER_RATER) -> pd.DataFrame:
    """``per_rater`` choices per rater (module docstring): rater, chose_a and the differences."""
    n = raters * per_rater
    rater = np.repeat(np.arange(raters), per_rater)
    w = WEIGHTS + rng.normal(0, SPREAD, (raters, len(WEIGHTS)))
    d = rng.normal(0, SCALES, (n, len(FEATURES)))
    chose = rng.random(n) < special.expit(np.einsum("nk,nk->n", d, w[rater]))
    return pd.DataFrame(d, columns=list(FEATURES)).assign(chose_a=chose.astype(int), rater=rater)


@cache
def population_weights() -> pd.Series:
    """The pooled weights' limit: the fit on TRUTH_RATERS raters."""
    fit = tradeoff_weights(tradeoff_choices(np.random.default_rng(1), raters=TRUTH_RATERS))
    return fit.table.set_index("feature")["weight"]


def tradeoff_study(rng: np.random.Generator) -> tuple[TradeoffWeights, str]:
    """One study's fitted weights and a feature drawn at random."""
    return tradeoff_weights(tradeoff_choices(rng)), str(rng.choice(list(FEATURES)))


def weight_covers(study: tuple[TradeoffWeights, str]) -> bool:
    """The rater-clustered t interval of a random feature's weight holds its population average."""
    fit, feature = study
    table = fit.table.set_index("feature")
    return bool(table.loc[feature, "ci_low"] <= population_weights()[feature] <= table.loc[feature, "ci_high"])


def score_covers(study: tuple[TradeoffWeights, str]) -> bool:
    """The interval of the fair model's score difference from the accurate one holds its population value."""
    scores = model_scores(study[0], AUDITED).table.set_index("model")
    truth = float((AUDITED.loc["fair"] - AUDITED.loc["accurate"]) @ population_weights())
    return bool(scores.loc["fair", "ci_low"] <= truth <= scores.loc["fair", "ci_high"])


STUDY = Study(tradeoff_study)
SCENARIO = f"{RATERS} raters x {PER_RATER} choices, weights N((6, -8, -3, -5), 2^2 I), differences sd (0.05, 0.1 x 3)"
register(
    Procedure(
        "trade-off weights, rater-clustered",
        "analysis.tradeoff.tradeoff_weights",
        "the population-averaged weight of a difference: the pooled conditional logit's limit over the raters",
        "coverage",
        0.95,
        0.85,
        Reading(STUDY, weight_covers),
        100,
        1000,
        SCENARIO,
    )
)
register(
    Procedure(
        "trade-off score differences",
        "analysis.tradeoff.model_scores",
        "w . (x_m - x_ref) with w the population-averaged weights: how much fairer raters find model m than the "
        "reference model",
        "coverage",
        0.95,
        0.85,
        Reading(STUDY, score_covers),
        100,
        1000,
        SCENARIO,
    )
)
