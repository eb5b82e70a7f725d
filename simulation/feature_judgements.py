"""Simulated judgements of whether it is fair to use a feature, from its eight latent properties.

Each feature (by its column name, seeded by its CRC-32) has a mean rating 2..6 on each property
(``property_means``). A rater rates property j at round(mean_j + N(0, 1)) clipped to 1..7, and judges the
feature's use on the 7-point fairness scale by an ordinal logit: z = eta + Logistic(0, 1) with
eta = sum_j PROPERTY_EFFECTS_j (rating_j - 4) + leniency + N(0, noise^2), rating = 1 + #{k: z > CUTS_k};
the cut between 4 and 5 is 0, so P(rating >= 5, "fair") = expit(eta): a logit model on the properties,
as ``fairness.feature_fairness.latent_property_model`` fits it. The effects' signs follow what
Grgic-Hlaca et al. (WWW 2018) found (relevance, reliability, volitionality and causing the outcome
make using a feature fairer; privacy, a vicious cycle, disparity and being caused by group membership
less fair); their sizes are this simulation's. NumPy only: ``tasks.feature_fairness`` takes the
property names from here when a web worker loads it.
"""

import zlib

import numpy as np

PROPERTIES = (
    "relevance",
    "reliability",
    "privacy",
    "volitionality",
    "causes_outcome",
    "vicious_cycle",
    "causes_disparity",
    "caused_by_group",
)
PROPERTY_EFFECTS = np.array([0.5, 0.3, -0.3, 0.3, 0.3, -0.3, -0.4, -0.5])
CUTS = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0])  # ordinal-logit cuts of the 7-point scale
MIDPOINT = 4


def property_means(column: str) -> np.ndarray:
    """The feature's mean rating of each property, 2..6, fixed by its name."""
    return np.random.default_rng(zlib.crc32(column.encode())).uniform(2, 6, len(PROPERTIES))


def draw_feature_judgement(
    means: np.ndarray,
    rng: np.random.Generator,
    *,
    leniency: float = 0.0,
    noise: float = 0.0,
    effects: np.ndarray = PROPERTY_EFFECTS,
) -> tuple[int, np.ndarray, float]:
    """(fairness rating 1..7, the eight property ratings 1..7, P(rating >= 5) without the noise)."""
    ratings = np.clip(np.round(means + rng.normal(0, 1, len(means))), 1, 7).astype(int)
    eta = float(effects @ (ratings - MIDPOINT)) + leniency
    z = eta + rng.normal(0, noise) + rng.logistic()
    return 1 + int(np.sum(z > CUTS)), ratings, float(1 / (1 + np.exp(-eta)))
