"""Feature fairness: is it fair to use a feature to decide, and why (Grgic-Hlaca, Redmiles, Gummadi &
Weller, "Human perceptions of fairness in algorithmic decision making", WWW 2018).

* :func:`feature_fairness_shares`: per feature, the share of answers judging its use fair (a rating of
  at least ``fair_from`` on the 7-point scale, 5 = "Somewhat fair"), for all raters and per rater group,
  with the percentile CI resampling raters and the permutation test of "no difference between the rater
  groups" of the other rater-group analyses (``fairness.task_blocks.rater_group_means``:
  T = max_r share_r - min_r share_r, rater-group labels permuted across raters).
* :func:`latent_property_model`: the fair / not fair judgement on the eight latent properties the paper
  rated (relevance, reliability, privacy, volitionality, causes the outcome, causes a vicious cycle, causes
  disparity, caused by group membership), a logit model logit P(fair) = b0 + sum_j b_j (rating_j - 4) with
  each rating on 1..7 (4 the scale's midpoint), its standard errors cluster-robust by rater (every rater
  judges several features): CR1 G/(G-1) with t on G - 1 df (``analysis.clustered``). A pooled logit's
  coefficients are population-averaged: when raters differ in leniency they are attenuated towards 0
  relative to a single rater's (rater-specific) log-odds.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.tools.tools import add_constant

from analysis.clustered import clustered_logit
from fairness.task_blocks import rater_group_means

FAIR_FROM = 5  # "Somewhat fair" and above on the 7-point scale
MIDPOINT = 4


def feature_fairness_shares(
    answers: pd.DataFrame,
    *,
    fair_from: int = FAIR_FROM,
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The share of raters who judge each feature fair to use (a rating of ``fair_from`` or more), overall
    and per rater group, with bootstrap intervals and a permutation test of equal shares across groups.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``participant_id``, ``rater_group`` (may be missing), ``feature``, ``value`` (the 1..7 rating).
    fair_from : int
        The lowest rating that counts as "fair" (5: "somewhat fair").
    n_resamples : int
        Bootstrap resamples of the raters (0: no intervals).
    n_permutations : int
        Permutations of the group test (at least 1).
    seed : int
        The seed of the bootstrap and the permutations.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        shares: feature, rater_group, share, ci_low, ci_high, n_raters, n_answers; tests: feature,
        difference, pvalue, n_permutations, NaN with fewer than two rater groups.

    Examples
    --------
    Ratings 6, 5, 2, 7 of age: 3 of 4 raters rate it 5 or more (share 0.75), both of group x and 1 of 2 of y:

    >>> import pandas as pd
    >>> answers = pd.DataFrame({"participant_id": [1, 2, 3, 4], "rater_group": ["x", "x", "y", "y"],
    ...                         "feature": "age", "value": [6, 5, 2, 7]})
    >>> shares, tests = feature_fairness_shares(answers, n_resamples=0, n_permutations=10)
    >>> shares.set_index("rater_group")["share"].to_dict()
    {'all participants': 0.75, 'x': 1.0, 'y': 0.5}
    >>> float(tests.loc[0, "difference"])
    0.5
    """
    missing = {"participant_id", "rater_group", "feature", "value"} - set(answers.columns)
    if missing:
        raise ValueError(f"answers need the columns {', '.join(sorted(missing))}")
    frame = answers.assign(fair=(answers["value"] >= fair_from).astype(float))
    shares, tests = [], []
    for feature, part in frame.groupby("feature", sort=True):
        table, test = rater_group_means(part, "fair", n_resamples=n_resamples, n_permutations=n_permutations, seed=seed)
        shares.append(table.rename(columns={"mean": "share"}).assign(feature=feature))
        tests.append({"feature": feature, **test.row()})
    columns = ["feature", "rater_group", "share", "ci_low", "ci_high", "n_raters", "n_answers"]
    return pd.concat(shares, ignore_index=True)[columns], pd.DataFrame(tests)


@dataclass(frozen=True, eq=False)
class LatentPropertyModel:
    """The logit model of the fairness judgement on the properties (module doc): ``coefficients`` has
    term (``intercept`` and each property), statistic (the coefficient, log-odds per scale point),
    standard_error (cluster-robust), pvalue, ci_low, ci_high."""

    coefficients: pd.DataFrame
    n_judgements: int
    n_raters: int
    confidence_level: float

    @property
    def statistic(self) -> pd.Series:
        return self.coefficients.set_index("term")["statistic"]

    def confidence_interval(self) -> tuple[pd.Series, pd.Series]:
        table = self.coefficients.set_index("term")
        return table["ci_low"], table["ci_high"]


def latent_property_model(
    judgements: pd.DataFrame,
    properties: Sequence[str],
    *,
    fair_from: int = FAIR_FROM,
    confidence_level: float = 0.95,
) -> LatentPropertyModel:
    """``judgements``: one row per rater and feature with participant_id, value (the 1..7 fairness rating)
    and one column per property (its 1..7 rating); rows missing a rating are left out. ValueError with
    fewer than two raters, no variation in the judgement or a property without variation."""
    columns = ["participant_id", "value", *properties]
    missing = [c for c in columns if c not in judgements.columns]
    if missing:
        raise ValueError(f"judgements need the columns {', '.join(missing)}")
    frame = judgements[columns].dropna()
    fair = (frame["value"] >= fair_from).astype(float)
    if frame["participant_id"].nunique() < 2:
        raise ValueError("the property model needs the judgements of at least two raters")
    if fair.nunique() < 2:
        raise ValueError("every judgement is the same (all fair or all unfair): no model")
    constant = [p for p in properties if frame[p].nunique() < 2]
    if constant:
        raise ValueError(f"properties rated the same by everyone: {', '.join(constant)}")
    design = add_constant(frame[list(properties)].astype(float) - MIDPOINT, has_constant="add")
    _, clusters = np.unique(frame["participant_id"].astype(str), return_inverse=True)
    fit = clustered_logit(fair.to_numpy(), design.to_numpy(), clusters, level=confidence_level)
    table = pd.DataFrame(
        {
            "term": ["intercept", *properties],
            "statistic": fit.params,
            "standard_error": fit.standard_error,
            "pvalue": fit.pvalue,
            "ci_low": fit.ci_low,
            "ci_high": fit.ci_high,
        }
    )
    return LatentPropertyModel(table, len(frame), int(clusters.max()) + 1, confidence_level)
