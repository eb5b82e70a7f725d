"""What a task type's estimators yield for audits and calibrations (``BlockTask.yields``).

A type declares ``yields = {Yield.X: "measure", ...}``: each estimate its block analysis makes that a later job can
use, with the measure of its answers the estimate is fitted to. The audit's source options
(``runs.human_source_options.OPTIONS``: ``--metric-from``, ``--utility-from``, ``--features-from``) each need one
yield and take any block whose type declares it, so a new task type that yields a learned metric is usable by
``--metric-from`` with no other change. A new kind of estimate is one member here with its meaning.
Light: no scientific import (the web form lists the yields).
"""

from enum import StrEnum


class Yield(StrEnum):
    """One kind of estimate a task type's answers give."""

    STRENGTHS = "strengths"
    UTILITIES = "utilities"
    METRIC = "metric"
    FEATURE_SHARES = "feature_shares"
    DISAGREEMENT = "disagreement"
    ALPHA = "alpha"
    PARITY = "parity"
    TRADEOFF_WEIGHTS = "tradeoff_weights"

    @property
    def meaning(self) -> str:
        """The estimate in words ("a learned fair metric"), for forms, help texts and errors."""
        return MEANINGS[self]


MEANINGS: dict[Yield, str] = {
    Yield.STRENGTHS: "Bradley-Terry strengths of the subjects",
    Yield.UTILITIES: "a utility model of the subjects' features",
    Yield.METRIC: "a learned fair metric",
    Yield.FEATURE_SHARES: "feature-fairness shares",
    Yield.DISAGREEMENT: "disagreement notions",
    Yield.ALPHA: "the effort weight alpha",
    Yield.PARITY: "differential parity against the AI",
    Yield.TRADEOFF_WEIGHTS: "trade-off weights of models' accuracy and error-rate gaps",
}
