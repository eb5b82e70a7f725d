"""Simulated null studies of situation testing's per-complainant exact test (``fairness.situation_testing``),
registered in ``analysis.coverage.REGISTRY`` (imported by ``simulation.coverage_studies``).

Null: decisions independent of the protected attribute. 400 individuals with two standard-normal features,
protected with probability 0.4 independently of them; the decision is positive with probability
expit(x1 - 0.5 x2), a function of the features only. ST at tau = 0 (CST would equal it: the protected attribute
moves no feature). One study rejects when a complainant drawn at random has exact p < 0.05 (the test's size),
or when any complainant's Holm-adjusted p is below 0.05 (the family's error rate); for contrast, when the drawn
complainant is significant by the paper's Wald rule (Eq. 10).
"""

from functools import partial

import numpy as np
import pandas as pd
from scipy.special import expit

from analysis.coverage import Procedure, Reading, Study, register
from fairness.situation_testing import situation_testing

INDIVIDUALS, PROTECTED_SHARE = 400, 0.4
REDUCED, FULL = 400, 2000
# the ceiling: the nominal 5% plus two Monte Carlo SEs at the reduced size, sqrt(.05 .95 / 400) = 0.011
CEILING = 0.05 + 2 * np.sqrt(0.05 * 0.95 / REDUCED)


def null_decisions(rng: np.random.Generator, n: int = INDIVIDUALS) -> pd.DataFrame:
    """Features x1, x2 ~ N(0, 1), protected g ~ Bernoulli(0.4) independent of them, decision y ~
    Bernoulli(expit(x1 - 0.5 x2)) (1 = positive) depending on the features only."""
    x = rng.normal(size=(n, 2))
    return pd.DataFrame(
        {
            "x1": x[:, 0],
            "x2": x[:, 1],
            "g": (rng.random(n) < PROTECTED_SHARE).astype(int),
            "y": (rng.random(n) < expit(x[:, 0] - 0.5 * x[:, 1])).astype(int),
        }
    )


def null_study(rng: np.random.Generator, *, k: int) -> tuple[pd.DataFrame, int]:
    """A null study's ST rows (one per complainant) and the position of one complainant drawn at random."""
    rows = situation_testing(null_decisions(rng), protected="g", target="y", negative_outcome=0, k=k).individuals
    return rows, int(rng.integers(len(rows)))


def rejects(study: tuple[pd.DataFrame, int], *, column: str) -> bool:
    """Whether a null study's ST rejects: ``column`` ``ST_sig_exact`` or ``ST_sig`` (the paper's rule) of the
    complainant drawn at random, or ``ST_sig_adjusted`` of any complainant (Holm over the family)."""
    rows, drawn = study
    if column == "ST_sig_adjusted":
        return bool(rows[column].any())
    return bool(rows[column].iloc[drawn])


FUNCTION = "fairness.situation_testing.situation_testing"
STUDIES = {k: Study(partial(null_study, k=k)) for k in (5, 15)}  # k = 15: the exact test's and the family's
SCENARIO = f"{INDIVIDUALS} individuals, 2 features, protected share {PROTECTED_SHARE} independent of them, ST"
for k in (5, 15):
    register(
        Procedure(
            f"situation testing exact test, k = {k}",
            f"{FUNCTION} (<method>_pvalue: one-sided Fisher exact test)",
            "H0: no difference in positive-decision rates between the complainant's protected and unprotected "
            "neighbourhoods; size at 5% for one complainant",
            "size",
            0.05,
            CEILING,
            Reading(STUDIES[k], partial(rejects, column="ST_sig_exact")),
            REDUCED,
            FULL,
            f"{SCENARIO}, k = {k}, a complainant at random",
            contrast=(
                "the paper's Wald rule (Eq. 10) rejects the same null",
                Reading(STUDIES[k], partial(rejects, column="ST_sig")),
            ),
        )
    )
register(
    Procedure(
        "situation testing exact family, Holm",
        f"{FUNCTION} (<method>_pvalue_adjusted)",
        "the family-wise error rate of the Holm-adjusted exact tests of every complainant (one method and k), "
        "in a null study",
        "size",
        0.05,
        CEILING,
        Reading(STUDIES[15], partial(rejects, column="ST_sig_adjusted")),
        REDUCED,
        FULL,
        f"{SCENARIO}, k = 15, about {int(INDIVIDUALS * PROTECTED_SHARE)} complainants",
    )
)
