"""Group metrics of a binary classifier in Fairlearn's vocabulary, with bootstrap intervals (no Django).

For predicted labels yhat (1 = the decision, e.g. "high risk"), the truth y (1 = the event) when known,
and a sensitive feature A (a group column), the metrics are Fairlearn's ``fairlearn.metrics``:

* ``selection_rate`` = P(yhat = 1) (needs no truth);
* ``accuracy`` = P(yhat = y);
* ``true_positive_rate`` = P(yhat = 1 | y = 1), ``false_negative_rate`` = P(yhat = 0 | y = 1) = 1 - TPR;
* ``false_positive_rate`` = P(yhat = 1 | y = 0).

As Fairlearn's ``MetricFrame``: ``overall`` is the metric over all subjects, ``by_group`` per value of A,
``difference()`` the largest minus the smallest group value and ``ratio()`` the smallest over the largest
(1 = parity for both readings: difference 0, ratio 1). A rate whose denominator is empty is NaN, and so are
the difference and ratio built on it.

Intervals (``ci_low``, ``ci_high``). Estimand: each quantity's value in the population the subjects were
drawn from, with every group's subjects an independent, identically distributed sample of that group and the
groups' sizes as observed (the overall metric weighs the groups as the file does). Method: percentile
bootstrap, resampling subjects with replacement within each group (stratified: group sizes stay fixed, so
no resample loses a group), ``n_resamples`` resamples from ``numpy.random.default_rng(seed)``; the interval
is the (1 - level) / 2 and (1 + level) / 2 quantiles of the resampled values (Efron & Tibshirani 1993,
ch. 13). Resamples in which a rate is undefined (no subject with y = 1 in a group, say) are left out of
that quantity's quantiles. The difference and the ratio are a maximum and a minimum over the groups, so their
percentile intervals could never reach "no gap" (difference 0, ratio 1): every resample's max - min is >= 0.
Their intervals are instead the projections of simultaneous (sup-t bootstrap) intervals of every pair of
groups' signed difference (``fairness.disagreement.gap_interval``), of the rates for the difference and of
their logarithms for the ratio (ratio = exp(-max_p |log f_i - log f_j|)); they cover the truth also when it
is "no gap" (the percentile interval of a metric is used when a group's rate is 0 and has no logarithm).
Coverage is measured by simulation (``analysis.coverage.REGISTRY``, ``simulation.coverage_studies``); a tiny
group still makes any interval unreliable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairness.disagreement import gap_interval

METRICS = ("selection_rate", "accuracy", "true_positive_rate", "false_positive_rate", "false_negative_rate")
NEEDS_TRUTH = METRICS[1:]
OVERALL = "overall"
_CELLS = 2_000_000  # bootstrap weights held at once (resamples x subjects)


def _rates(yhat: np.ndarray, y: np.ndarray | None, weight: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric over the last axis, the subjects weighted by ``weight`` (bootstrap counts; any leading axes
    are resamples); NaN where a denominator is 0."""
    total = weight.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = {"selection_rate": (weight * yhat).sum(axis=-1) / total}
        if y is not None:
            positives, negatives = (weight * y).sum(axis=-1), (weight * (1 - y)).sum(axis=-1)
            tp = (weight * (yhat * y)).sum(axis=-1)
            fp = (weight * (yhat * (1 - y))).sum(axis=-1)
            rates["accuracy"] = (weight * (yhat == y)).sum(axis=-1) / total
            rates["true_positive_rate"] = tp / positives
            rates["false_positive_rate"] = fp / negatives
            rates["false_negative_rate"] = (positives - tp) / positives
    return {name: np.where(np.isfinite(value), value, np.nan) for name, value in rates.items()}


@dataclass(frozen=True)
class GroupMetrics:
    """One classifier's metrics (Fairlearn's ``MetricFrame``): ``overall`` (metric -> value), ``by_group``
    (group rows x metric columns, with ``n``), the bootstrap ``intervals`` (one row per metric and quantity:
    a group, ``overall``, ``difference`` or ``ratio``; columns metric, quantity, value, ci_low, ci_high), the
    sensitive feature's name, the confidence level, the resamples and the seed."""

    overall: pd.Series
    by_group: pd.DataFrame
    intervals: pd.DataFrame
    sensitive_feature: str | None
    confidence_level: float
    n_resamples: int
    seed: int

    def difference(self) -> pd.Series:
        """Per metric: the largest group value minus the smallest (NaN with fewer than two groups)."""
        values = self.by_group[list(self.overall.index)]
        return (values.max() - values.min()).where(values.notna().sum() >= 2)

    def ratio(self) -> pd.Series:
        """Per metric: the smallest group value over the largest (NaN with fewer than two groups or a largest 0)."""
        values = self.by_group[list(self.overall.index)]
        high = values.max()
        return (values.min() / high.where(high > 0)).where(values.notna().sum() >= 2)


def _gap_rows(name: str, point: np.ndarray, boot: np.ndarray, level: float) -> list[dict]:
    """The difference and ratio rows of one metric (module doc): ``point`` the groups' values, ``boot`` per
    resample (resamples x groups)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        difference = np.max(point) - np.min(point)
        ratio = np.min(point) / np.max(point)
        (low, high), _ = gap_interval(point[:, None], boot[:, :, None], level)
        logs = np.log(np.where(boot > 0, boot, np.nan))
        if np.all(point > 0):
            (log_low, log_high), _ = gap_interval(np.log(point)[:, None], logs[:, :, None], level, largest=np.inf)
            ratio_ci = (float(np.exp(-log_high)), float(np.exp(-log_low)))
        else:
            ratios = np.min(boot, axis=1) / np.max(boot, axis=1)
            kept = ratios[np.isfinite(ratios)]
            tail = (1 - level) / 2
            ratio_ci = tuple(np.quantile(kept, [tail, 1 - tail])) if len(kept) else (np.nan, np.nan)
    return [
        {"metric": name, "quantity": quantity, "value": float(value) if np.isfinite(value) else np.nan}
        | {"ci_low": ci[0], "ci_high": ci[1]}
        for quantity, value, ci in (("difference", difference, (low, high)), ("ratio", ratio, ratio_ci))
    ]


def group_metrics(
    y_pred,
    *,
    y_true=None,
    sensitive_features=None,
    sensitive_name: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> GroupMetrics:
    """:class:`GroupMetrics` of 0/1 predictions ``y_pred`` against 0/1 ``y_true`` (None: the selection rate
    only) by ``sensitive_features`` (None: overall only), with stratified percentile bootstrap intervals
    (module docstring: the estimand and the method). ValueError for labels other than 0/1 or unequal lengths."""
    yhat = np.asarray(y_pred, dtype=float)
    y = None if y_true is None else np.asarray(y_true, dtype=float)
    groups = np.full(len(yhat), OVERALL, dtype=object) if sensitive_features is None else np.asarray(sensitive_features)
    for name, values in (("y_pred", yhat), ("y_true", y)):
        if values is not None and not np.isin(values, (0, 1)).all():
            raise ValueError(f"{name} must be 0 or 1 for every subject")
    if (y is not None and len(y) != len(yhat)) or len(groups) != len(yhat):
        raise ValueError("y_pred, y_true and sensitive_features must have equal lengths")
    names = METRICS if y is not None else METRICS[:1]
    labels, codes = np.unique(groups.astype(str), return_inverse=True)
    one = np.ones(len(yhat))
    members = [np.flatnonzero(codes == k) for k in range(len(labels))]

    def by_group(weight: np.ndarray) -> dict[str, np.ndarray]:  # metric -> (..., groups)
        parts = [_rates(yhat[i], None if y is None else y[i], weight[..., i]) for i in members]
        return {name: np.stack([part[name] for part in parts], axis=-1) for name in names}

    rng = np.random.default_rng(seed)
    chunks: list[tuple[dict, dict]] = []
    step = max(1, _CELLS // max(len(yhat), 1))  # resamples at a time: bounded memory for large files
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        counts = np.zeros((size, len(yhat)))  # bootstrap weights: subjects resampled within each group
        for index in members:
            drawn = rng.integers(0, len(index), size=(size, len(index)))
            np.add.at(counts, (np.arange(size)[:, None], index[drawn]), 1.0)
        chunks.append((by_group(counts), _rates(yhat, y, counts)))
    boot = {name: np.concatenate([c[0][name] for c in chunks]) for name in names}
    boot_overall = {name: np.concatenate([c[1][name] for c in chunks]) for name in names}
    point, overall = by_group(one), _rates(yhat, y, one)
    low_q, high_q = (1 - confidence_level) / 2, (1 + confidence_level) / 2
    rows = []
    for name in names:
        quantities = {
            str(label): (point[name][k], boot[name][:, k])
            for k, label in enumerate(labels)
            if sensitive_features is not None
        }
        quantities[OVERALL] = (overall[name], boot_overall[name])
        for quantity, (value, resampled) in quantities.items():
            kept = resampled[~np.isnan(resampled)]
            ci = np.quantile(kept, [low_q, high_q]) if len(kept) else (np.nan, np.nan)
            value = float(value) if np.isfinite(value) else np.nan
            rows.append({"metric": name, "quantity": quantity, "value": value, "ci_low": ci[0], "ci_high": ci[1]})
        if len(labels) >= 2:
            rows += _gap_rows(name, point[name], boot[name], confidence_level)
    table = pd.DataFrame({name: point[name] for name in names}, index=pd.Index(labels, name=sensitive_name))
    table["n"] = [len(index) for index in members]
    return GroupMetrics(
        overall=pd.Series({name: float(overall[name]) for name in names}),
        by_group=table if sensitive_features is not None else table.iloc[0:0],
        intervals=pd.DataFrame(rows, columns=["metric", "quantity", "value", "ci_low", "ci_high"]),
        sensitive_feature=sensitive_name,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
    )
