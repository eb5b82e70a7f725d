"""Audits with what people said (no Django): how each audited model compares with the stakeholders'
utility model from ``choose`` blocks, and how much it relies on features people judged unfair to use.

* :func:`utility_agreement`: per model and rater group, Spearman's rank correlation between the model's
  scores and the stakeholders' utility of the audited subjects. The stakeholders' utility is the mean of
  the raters' own utilities, u(s) = mean_r w_r . x_s (WeBuildAI: Lee et al., CSCW 2019, each rater's
  weights from ``analysis.paired_comparison.utility_model``'s ``per_rater``; the mean of linear utilities
  is the utility of the mean weights). Its confidence interval is the percentile interval over
  ``n_resamples`` rater resamples (raters drawn with replacement within the group, the mean weights and
  the correlation recomputed; the subjects and scores are fixed). rho near 1: the model ranks the subjects
  as the stakeholders would; near 0 or below: most unlike them.
* :func:`unfair_feature_reliance`: the audit has each model's scores only, not the model, so each model is
  replaced by a surrogate fitted on the audited subjects (numeric columns as they are, text columns
  one-hot), whose R^2 is reported next to it. ``surrogate="linear"`` (the default): a least-squares linear
  regression, with its in-sample R^2 (a low R^2 means the importances describe only the part of the scores
  the features explain linearly). ``surrogate="forest"``: a random forest (Breiman 2001; scikit-learn's
  ``RandomForestRegressor``, 300 trees, at least 5 subjects a leaf, seeded), which also follows thresholds
  and interactions; its R^2 is the out-of-bag one (each subject predicted by the trees that did not see
  it), since a forest's in-sample R^2 flatters it.
  The permutation importance of feature j (Breiman 2001; Fisher, Rudin & Dominici 2019;
  scikit-learn's ``permutation_importance``) is the mean absolute change of the surrogate's scores when
  column j alone is permuted across subjects, I_j = mean over ``n_repeats`` seeded permutations of
  mean_i |f(x_i) - f(x_i with x_ij permuted)|, in score units. It is weighted by the share of raters'
  answers judging the feature unfair to use, u_j = 1 - share judging it fair (Grgic-Hlaca et al., WWW 2018;
  ``fairness.feature_fairness.feature_fairness_shares``): weighted_j = u_j I_j, with the interval
  u_j's interval times I_j (the judgement's uncertainty; I_j is the surrogate's, fixed). Per model and rater
  group, ``reliance`` = sum_j u_j I_j and ``unfair_fraction`` = sum_j u_j I_j / sum_j I_j, the share of
  the model's reliance on the judged features that falls where people judged the use unfair.
"""

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from fairness.individual import LearnedMetric, lipschitz_violations, require_subjects

Surrogate = Literal["linear", "forest"]
SURROGATES: tuple[Surrogate, ...] = ("linear", "forest")  # runs.human_source_options.SURROGATES lists the same
BATCH = 200  # rater resamples per vectorised batch (resamples x subjects utilities at once)


class ConfidenceInterval(NamedTuple):
    low: pd.Series
    high: pd.Series


@dataclass(frozen=True, eq=False)
class UtilityAgreement:
    """:func:`utility_agreement`'s result: ``table`` has model, rater_group, statistic (Spearman's rho),
    ci_low, ci_high, n_raters, n_subjects, one row per model and rater group."""

    table: pd.DataFrame
    n_resamples: int
    confidence_level: float
    seed: int

    @property
    def statistic(self) -> pd.Series:
        return self.table.set_index(["model", "rater_group"])["statistic"]

    def confidence_interval(self) -> ConfidenceInterval:
        frame = self.table.set_index(["model", "rater_group"])
        return ConfidenceInterval(frame["ci_low"].rename("low"), frame["ci_high"].rename("high"))


def _rank_correlations(utilities: np.ndarray, ranked_scores: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``utilities`` (draws x subjects) with each column of ``ranked_scores``
    (subjects x models, already ranked): Pearson's r of the ranks (ties: mid-ranks). NaN for a constant row."""
    ranks = stats.rankdata(utilities, axis=1)
    ranks = ranks - ranks.mean(axis=1, keepdims=True)
    centred = ranked_scores - ranked_scores.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ranks @ centred) / np.outer(np.linalg.norm(ranks, axis=1), np.linalg.norm(centred, axis=0))


def utility_agreement(
    scores: pd.DataFrame,
    rater_weights: pd.DataFrame,
    features: pd.DataFrame,
    *,
    groups: pd.Series | None = None,
    all_raters: str = "all raters",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> UtilityAgreement:
    """Spearman's rho between each model's scores and the stakeholders' utility (module doc).

    scores: indexed by subject id, one column per model. rater_weights: indexed by rater, one column per
    utility feature (each rater's weights w_r). features: indexed by subject id (every scored subject), the
    same columns, coded as the utility model coded them. groups: rater -> rater group (raters without one
    count in the ``all_raters`` rows only). ValueError for missing subjects or columns, fewer than two
    subjects or no rater."""
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1) (got {confidence_level})")
    columns = list(rater_weights.columns)
    missing = [c for c in columns if c not in features.columns]
    if missing:
        raise ValueError(f"utility features missing from the subjects: {', '.join(map(str, missing))}")
    require_subjects(scores.index, features.index, what="utility features", audit="the rank correlation")
    if rater_weights.empty:
        raise ValueError("no rater's utility weights")
    x = features.loc[scores.index, columns].to_numpy(float)
    ranked = stats.rankdata(scores.to_numpy(float), axis=0)
    weights = rater_weights.to_numpy(float)
    labels = pd.Series(np.nan, index=rater_weights.index, dtype=object) if groups is None else groups
    labels = labels.reindex(rater_weights.index)
    parts = [(all_raters, np.ones(len(weights), dtype=bool))]
    parts += [(g, (labels == g).to_numpy()) for g in sorted(labels.dropna().unique(), key=str)]
    rng = np.random.default_rng(seed)
    tail = (1 - confidence_level) / 2
    rows = []
    for group, chosen in parts:
        own = weights[chosen]
        estimate = _rank_correlations((own.mean(axis=0) @ x.T)[None, :], ranked)[0]
        low = high = np.full(len(scores.columns), np.nan)
        if n_resamples and len(own) > 1:
            rhos = np.vstack(
                [
                    _rank_correlations(own[draws].mean(axis=1) @ x.T, ranked)
                    for draws in np.array_split(
                        rng.integers(0, len(own), size=(n_resamples, len(own))), -(-n_resamples // BATCH)
                    )
                ]
            )
            low, high = np.nanquantile(rhos, tail, axis=0), np.nanquantile(rhos, 1 - tail, axis=0)
        rows += [
            {
                "model": model,
                "rater_group": group,
                "statistic": float(estimate[m]),
                "ci_low": float(low[m]),
                "ci_high": float(high[m]),
                "n_raters": len(own),
                "n_subjects": len(scores),
            }
            for m, model in enumerate(scores.columns)
        ]
    return UtilityAgreement(pd.DataFrame(rows), n_resamples, confidence_level, seed)


@dataclass(frozen=True, eq=False)
class FeatureReliance:
    """:func:`unfair_feature_reliance`'s result. ``features``: model, rater_group, feature, importance,
    importance_sd (over the repeats), unfair_share with ci_unfair_low/high, weighted with
    ci_weighted_low/high. ``models``: model, rater_group, reliance, unfair_fraction, surrogate, surrogate_r2."""

    features: pd.DataFrame
    models: pd.DataFrame
    n_repeats: int
    seed: int
    surrogate: Surrogate = "linear"

    @property
    def statistic(self) -> pd.Series:
        return self.models.set_index(["model", "rater_group"])["reliance"]


def surrogate_importance(
    scores: pd.Series,
    subjects: pd.DataFrame,
    features: list[str],
    *,
    n_repeats: int = 20,
    seed: int = 0,
    surrogate: Surrogate = "linear",
) -> tuple[pd.DataFrame, float]:
    """The ``surrogate`` ("linear" or "forest") of ``scores`` on ``features`` of ``subjects`` (same index) and
    each feature's permutation importance (module doc): (feature, importance, importance_sd) and the
    surrogate's R^2 (the forest's out of bag)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    if surrogate not in SURROGATES:
        raise ValueError(f"surrogate must be one of {', '.join(SURROGATES)}, not {surrogate!r}")

    frame = subjects.loc[scores.index, features].copy()
    numeric = [f for f in features if pd.to_numeric(frame[f], errors="coerce").notna().all()]
    for f in features:
        frame[f] = pd.to_numeric(frame[f]) if f in numeric else frame[f].astype(str)
    text = [f for f in features if f not in numeric]
    coding = ColumnTransformer(
        [("numeric", "passthrough", numeric), ("text", OneHotEncoder(handle_unknown="ignore"), text)]
    )
    y = scores.to_numpy(float)
    if surrogate == "forest":
        forest = RandomForestRegressor(n_estimators=300, min_samples_leaf=5, oob_score=True, random_state=seed)
        model = make_pipeline(coding, forest).fit(frame, y)
        r2 = float(forest.oob_score_)
    else:
        model = make_pipeline(coding, LinearRegression()).fit(frame, y)
        r2 = float(model.score(frame, y))
    importances = permutation_importance(model, frame, n_repeats=n_repeats, seed=seed)
    table = pd.DataFrame(
        {"feature": features, "importance": importances.mean(axis=1), "importance_sd": importances.std(axis=1)}
    )
    return table, r2


def permutation_importance(model: Any, frame: pd.DataFrame, *, n_repeats: int, seed: int) -> np.ndarray:
    """``sklearn.inspection.permutation_importance(model, frame, model.predict(frame),
    scoring="neg_mean_absolute_error", n_repeats=n_repeats, random_state=seed).importances``, (feature, repeat):
    the same permutations (each column from a fresh ``RandomState`` of one drawn seed, shuffled cumulatively),
    scored against the model's own predictions (the baseline error is 0: the drop is the mean |change|), with
    every permuted copy predicted in one call (a forest's per-call overhead is most of the work otherwise)."""
    from sklearn.metrics import mean_absolute_error
    from sklearn.utils import check_random_state

    seed_of_each = check_random_state(seed).randint(np.iinfo(np.int32).max + 1)
    copies = []
    for column in frame.columns:
        state, permuted, order = np.random.RandomState(seed_of_each), frame.copy(), np.arange(len(frame))
        for _ in range(n_repeats):
            state.shuffle(order)
            permuted[column] = permuted[column].iloc[order].set_axis(permuted.index)
            copies.append(permuted.copy())
    own = model.predict(frame)
    predicted = model.predict(pd.concat(copies, ignore_index=True)).reshape(len(copies), len(frame))
    drops = [mean_absolute_error(own, one) for one in predicted]
    return np.asarray(drops).reshape(frame.shape[1], n_repeats)


def unfair_feature_reliance(
    scores: pd.DataFrame,
    subjects: pd.DataFrame,
    shares: pd.DataFrame,
    *,
    n_repeats: int = 20,
    seed: int = 0,
    surrogate: Surrogate = "linear",
) -> FeatureReliance:
    """Each model's permutation importance of the judged features, under its ``surrogate``, weighted by the
    share judging each unfair (module doc). scores: indexed by subject id, one column per model; subjects: the
    same index with the judged features as columns; shares: ``feature_fairness_shares``' table (feature,
    rater_group, share, ci_low, ci_high). ValueError for a judged feature missing from the subjects or one
    without variation, or an unknown surrogate."""
    features = sorted(shares["feature"].astype(str).unique())
    missing = [f for f in features if f not in subjects.columns]
    if missing:
        raise ValueError(f"judged features missing from the subjects' columns: {', '.join(missing)}")
    constant = [f for f in features if subjects.loc[scores.index, f].astype(str).nunique() < 2]
    if constant:
        raise ValueError(f"judged features with one value for every audited subject: {', '.join(constant)}")
    unfair = shares.assign(
        feature=shares["feature"].astype(str),
        unfair_share=1 - shares["share"],
        ci_unfair_low=1 - shares["ci_high"],
        ci_unfair_high=1 - shares["ci_low"],
    )[["rater_group", "feature", "unfair_share", "ci_unfair_low", "ci_unfair_high"]]
    feature_rows, model_rows = [], []
    for model in scores.columns:
        importance, r2 = surrogate_importance(
            scores[model], subjects, features, n_repeats=n_repeats, seed=seed, surrogate=surrogate
        )
        table = unfair.merge(importance, on="feature").assign(model=model)
        table = table.assign(
            weighted=table["unfair_share"] * table["importance"],
            ci_weighted_low=table["ci_unfair_low"] * table["importance"],
            ci_weighted_high=table["ci_unfair_high"] * table["importance"],
        )
        feature_rows.append(table)
        for group, part in table.groupby("rater_group", sort=False):
            total = part["importance"].sum()
            model_rows.append(
                {
                    "model": model,
                    "rater_group": group,
                    "reliance": float(part["weighted"].sum()),
                    "unfair_fraction": float(part["weighted"].sum() / total) if total > 0 else np.nan,
                    "surrogate": surrogate,
                    "surrogate_r2": r2,
                }
            )
    columns = ["model", "rater_group", "feature", "importance", "importance_sd", "unfair_share", "ci_unfair_low"]
    columns += ["ci_unfair_high", "weighted", "ci_weighted_low", "ci_weighted_high"]
    return FeatureReliance(
        pd.concat(feature_rows, ignore_index=True)[columns], pd.DataFrame(model_rows), n_repeats, seed, surrogate
    )


@dataclass(frozen=True, eq=False)
class HumanAudit:
    """The audit's parts that use what people said (each None when its source was not given): ``lipschitz``
    (model, statistic, ci_low, ci_high, n_pairs, L: :func:`fairness.individual.lipschitz_violations` under the
    learned metric) and its ``worst`` pairs per model, the ``utility`` agreement and the ``reliance`` on
    features judged unfair, the models' ``tradeoff`` scores; ``sources`` describes each source (option -> text)."""

    lipschitz: pd.DataFrame | None = None
    worst: dict[str, pd.DataFrame] | None = None
    utility: UtilityAgreement | None = None
    reliance: FeatureReliance | None = None
    sources: dict[str, str] = field(default_factory=dict)
    tradeoff: pd.DataFrame | None = None  # the models' trade-off scores (analysis.tradeoff.model_scores), by group


def lipschitz_table(
    scores: pd.DataFrame, subjects: pd.DataFrame, metric: LearnedMetric, *, L: float = 1.0, k: int = 20
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """:func:`fairness.individual.lipschitz_violations` for each model (a column of ``scores``, indexed like
    ``subjects``): one row per model (model, statistic, ci_low, ci_high, n_pairs, L) and its worst pairs."""
    rows, worst = [], {}
    for model in scores.columns:
        result = lipschitz_violations(scores[model], subjects, metric, L=L, k=k)
        low, high = result.confidence_interval or (np.nan, np.nan)
        rows.append(
            {
                "model": model,
                "statistic": result.statistic,
                "ci_low": low,
                "ci_high": high,
                "n_pairs": result.n_pairs,
                "n_draws": len(result.draws),
                "L": L,
            }
        )
        worst[model] = result.worst
    return pd.DataFrame(rows), worst
