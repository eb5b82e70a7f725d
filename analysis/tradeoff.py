"""Which differences between two models people weigh when they choose the fairer one (the model trade-off
task: Srivastava et al. KDD 2019; Harrison et al. FAccT 2020), and the models' strengths.

Trade-off weights: a conditional logit (McFadden 1974) of the choice between models A and B on their
features x = (accuracy, FPR gap, FNR gap, selection-rate gap), gap = max - min of the rate over the subject
groups. With two alternatives it is a logit without intercept on the differenced design:

    P(A chosen) = exp(w . x_A) / (exp(w . x_A) + exp(w . x_B)) = expit(w . (x_A - x_B))

fitted by maximum likelihood with the project's rater-clustered CR1 intervals (``analysis.clustered``: t on
G - 1 df, G raters). A model's trade-off score is w . x (its utility; only differences between models mean
anything), with the interval of a difference from the weights' covariance.
Model strengths: Bradley-Terry over the models (``analysis.paired_comparison.bradley_terry_by_group``).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from analysis.clustered import clustered_logit
from analysis.paired_comparison import ALL_RATERS, rater_group_parts

FEATURES = ("accuracy", "fpr_gap", "fnr_gap", "selection_rate_gap")
WEIGHT_COLUMNS = [
    "rater_group",
    "feature",
    "weight",
    "ci_low",
    "ci_high",
    "standard_error",
    "statistic",
    "pvalue",
    "n_raters",
    "n_choices",
]


@dataclass(frozen=True, eq=False)
class TradeoffWeights:
    """``table``: one row per rater group (``ALL_RATERS`` first) and feature (columns ``WEIGHT_COLUMNS``);
    ``covariance``: rater group -> the weights' CR1 covariance (features x features); ``notes``: the groups
    that could not be fitted and why."""

    table: pd.DataFrame
    covariance: dict[str, pd.DataFrame]
    confidence_level: float
    notes: tuple[str, ...] = ()


def _check(choices: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in choices.columns]
    if missing:
        raise ValueError(f"choices lack the columns {missing} (columns: {', '.join(map(str, choices.columns))})")


def tradeoff_weights(
    choices: pd.DataFrame,
    *,
    features: tuple[str, ...] = FEATURES,
    chose: str = "chose_a",
    rater: str = "rater",
    by: str | None = None,
    confidence_level: float = 0.95,
) -> TradeoffWeights:
    """Trade-off weights (module docstring) from one row per choice: ``chose`` (1 = A chosen, 0 = B), the
    differences x_A - x_B in the ``features`` columns and the ``rater``; per group of ``by`` too.

    ValueError for missing columns or answers that are not 0/1. A group whose fit fails (one rater,
    perfect separation, differences that do not identify the weights) gets a note, not a row.

    A chosen in 3 of 4 choices where it is better by 1 and in 1 of 4 where it is worse by 1: expit(w) = 3/4,
    so w = log 3 = 1.0986:

    >>> frame = pd.DataFrame({"chose_a": [1, 1, 1, 0, 0, 0, 0, 1], "x": [1, 1, 1, 1, -1, -1, -1, -1],
    ...                       "rater": [1, 2, 1, 2, 1, 2, 1, 2]})
    >>> round(float(tradeoff_weights(frame, features=("x",)).table["weight"].iloc[0]), 4)
    1.0986
    """
    _check(choices, [chose, rater, *features, *([by] if by else [])])
    y = pd.to_numeric(choices[chose], errors="coerce")
    if not y.isin([0, 1]).all():
        raise ValueError(f"{chose!r} must be 0 or 1 in every row")
    rows, covariance, notes = [], {}, []
    for group, part in rater_group_parts(choices, by):
        codes = pd.factorize(part[rater])[0]
        design = part[list(features)].to_numpy(float)
        if np.linalg.matrix_rank(design) < len(features):
            notes.append(
                f"{group}: no trade-off weights (its choices' differences do not identify all {len(features)})"
            )
            continue
        try:
            fit = clustered_logit(part[chose].to_numpy(float), design, codes, level=confidence_level)
        except (ValueError, np.linalg.LinAlgError) as exc:
            notes.append(f"{group}: no trade-off weights ({exc})")
            continue
        covariance[group] = pd.DataFrame(fit.covariance, index=list(features), columns=list(features))
        for k, feature in enumerate(features):
            rows.append(
                {
                    "rater_group": group,
                    "feature": feature,
                    "weight": fit.params[k],
                    "ci_low": fit.ci_low[k],
                    "ci_high": fit.ci_high[k],
                    "standard_error": fit.standard_error[k],
                    "statistic": fit.statistic[k],
                    "pvalue": fit.pvalue[k],
                    "n_raters": fit.n_clusters,
                    "n_choices": len(part),
                }
            )
    return TradeoffWeights(
        pd.DataFrame(rows).reindex(columns=WEIGHT_COLUMNS), covariance, confidence_level, tuple(notes)
    )


@dataclass(frozen=True)
class ModelScores:
    """Trade-off scores w . x of models (``score``) and each one's difference from the ``reference`` model
    with its interval (t on raters - 1 df, from the weights' covariance)."""

    table: pd.DataFrame  # model, score, difference, ci_low, ci_high, standard_error
    reference: str
    rater_group: str


def model_scores(
    weights: TradeoffWeights, features: pd.DataFrame, *, rater_group: str = ALL_RATERS, reference: str | None = None
) -> ModelScores:
    """Score models (rows of ``features``: one column per feature) by a group's trade-off weights:
    score_m = w . x_m, and score_m - score_ref with CI -/+ t(G - 1) sqrt(d' V d), d = x_m - x_ref.
    ValueError when the group has no weights or ``features`` lacks a column."""
    table = weights.table[weights.table["rater_group"] == rater_group].set_index("feature")
    if table.empty:
        raise ValueError(f"rater group {rater_group!r} has no trade-off weights")
    names = list(table.index)
    _check(features, names)
    x = features[names].to_numpy(float)
    w = table["weight"].to_numpy(float)
    ref = features.index[0] if reference is None else reference
    if ref not in features.index:
        raise ValueError(f"reference model {ref!r} is not one of {', '.join(map(str, features.index))}")
    d = x - features.loc[ref, names].to_numpy(float)
    se = np.sqrt(np.einsum("mk,kl,ml->m", d, weights.covariance[rater_group].to_numpy(), d))
    half = stats.t.ppf(0.5 + weights.confidence_level / 2, int(table["n_raters"].iloc[0]) - 1) * se
    difference = d @ w
    frame = pd.DataFrame(
        {
            "model": features.index,
            "score": x @ w,
            "difference": difference,
            "ci_low": difference - half,
            "ci_high": difference + half,
            "standard_error": se,
        }
    )
    return ModelScores(frame, str(ref), rater_group)
