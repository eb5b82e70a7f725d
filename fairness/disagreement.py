"""Group fairness from yes/no disagreement feedback (Telukunta & Nadendla, disagreement feedback poster).

A critic sees the model's label yhat = k for a subject of group m and says whether they disagree:
s = 1 if their own label ytilde != yhat. From records (group, yhat, s):
    SP_{m,k} = P(yhat = k | m),   DR_{m,k} = P(s = 1 | yhat = k, m),   DR_m = P(s = 1 | m).
Every notion has the general form f = max_k max_{m,m'} (f_{m,k} - f_{m',k}) = max_k (max_m f_{m,k}
- min_m f_{m,k}) with the critic's label in place of the true label (the poster's Eq. 0). Derivations
(with a_{m,k} = (1 - DR_{m,k}) SP_{m,k} = P(ytilde = yhat = k | m) and b_{m,k} = DR_{m,k} SP_{m,k} =
P(yhat = k, ytilde != k | m)):

* Calibration C_{m,k} = P(ytilde = k | yhat = k, m) = 1 - DR_{m,k}; CA = max_k (max_m DR_{m,k} - min_m
  DR_{m,k}). The poster's Eq. 4 prints min over (m, m'), which gives a non-positive gap: a typo.
* Accuracy equality AE_m = P(yhat = ytilde | m) = 1 - sum_k DR_{m,k} SP_{m,k}; AE = max_m DR_m - min_m DR_m
  (Eq. 5, same typo; AE does not depend on k).
* Equal opportunity EO_{m,k} = P(yhat = k | ytilde = k, m) = a_{m,k} / (a_{m,k} + P(ytilde = k, yhat != k | m)),
  where P(ytilde = k, yhat = l | m) lies in [0, b_{m,l}]; hence EO_{m,k} in [a / (a + sum_{l != k} b_l), 1].
* Predictive equality PE_{m,k} = P(yhat = k | ytilde != k, m) = b_{m,k} / (b_{m,k} + sum_{l != k} P(ytilde != k,
  yhat = l | m)), each term in [a_{m,l}, a_{m,l} + b_{m,l}].
* Overall misclassification OMR_{m,k} = P(yhat != k | ytilde = k, m) = 1 - EO_{m,k}.
For binary labels the critic's label is the other label when they disagree, so P(ytilde = k, yhat = l) =
b_{m,l} and P(ytilde != k, yhat = l) = a_{m,l} exactly: every notion is identified (lower = upper), and
EO_{m,k} = a_{m,k} / (a_{m,k} + b_{m,l}) is defined wherever some critic holds k, also when the model gave
group m no k (a_{m,k} = 0, EO_{m,k} = 0); PE_{m,l} = 1 - EO_{m,k}, so EO = PE = OMR.
For more labels EO, PE and OMR are bounded: the gap lies in [max(0, max_k (max_m lo - min_m hi)),
max_k (max_m hi - min_m lo)]. ``poster_estimate`` applies the poster's Eq. 6-8 as printed:
1/2 [max_k (max_m rho(m,k) - 1) + max_k (1 - min_m rho(m,k))] with its ratios phi, mu, omega (the
other labels' SP in the denominator, i.e. DR_{m,l} replaced by 1).
"""

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

NOTIONS = ("CA", "AE", "EO", "PE", "OMR")


@dataclass(frozen=True)
class NotionValue:
    value: float  # exact value when identified, else the midpoint of the bounds
    lower: float
    upper: float
    exact: bool
    poster_estimate: float | None = None
    ci: tuple[float, float] | None = None
    pvalue: float | None = None  # permutation test of "no gap" (H0: the subject groups are exchangeable)


@dataclass(frozen=True)
class DisagreementNotions:
    rates: pd.DataFrame  # group, label, n, SP, DR
    dr_by_group: pd.Series
    overall_dr: float
    notions: dict[str, NotionValue]
    # signed f_{m,k} - f_{m',k} per notion, label and pair of groups, with simultaneous intervals
    differences: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getattr__(self, name):
        if name in NOTIONS:
            return self.notions[name]
        raise AttributeError(name)

    def as_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"notion": k, **v.__dict__} for k, v in self.notions.items()])


def _counts(groups, labels, s, group_levels, label_levels, weights=None) -> np.ndarray:
    """N[m, k, s]: (weighted) number of records per group, model label and disagreement."""
    gi = pd.Index(group_levels).get_indexer(groups)
    ki = pd.Index(label_levels).get_indexer(labels)
    flat = (gi * len(label_levels) + ki) * 2 + np.asarray(s, dtype=int)
    counts = np.bincount(flat, weights=weights, minlength=len(group_levels) * len(label_levels) * 2)
    return counts.reshape(len(group_levels), len(label_levels), 2)


def _gap(lo: np.ndarray, hi: np.ndarray, sure: np.ndarray | bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of max_k (max_m f - min_m f) given f_{m,k} in [lo, hi]; arrays (..., M, K).

    NaN marks an undefined f_{m,k}; ``sure`` marks the cells certainly defined (with more than two labels
    a cell may be defined or not). The upper bound takes every cell that may be defined, the lower bound
    only the sure ones: max over a superset is larger and min smaller, so both stay valid."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a label no group received gives an all-NaN column
        upper = np.nanmax(np.nanmax(hi, axis=-2) - np.nanmin(lo, axis=-2), axis=-1)
        lo_sure, hi_sure = np.where(sure, lo, np.nan), np.where(sure, hi, np.nan)
        lower = np.maximum(0.0, np.nanmax(np.nanmax(lo_sure, axis=-2) - np.nanmin(hi_sure, axis=-2), axis=-1))
    return np.where(np.isnan(lower) & ~np.isnan(upper), 0.0, lower), upper


def _poster(rho: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return 0.5 * (np.nanmax(np.nanmax(rho, axis=-2) - 1, axis=-1) + np.nanmax(1 - np.nanmin(rho, axis=-2), axis=-1))


def notion_cells(counts: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | bool]]:
    """Each notion's per-cell bounds f_{m,k} in [lo, hi] from N[..., m, k, s] (module doc): name -> (lo, hi,
    sure), arrays (..., M, K) (AE's K axis has length 1: AE_m does not depend on k); ``sure`` as in
    :func:`_gap`."""
    n0, n1 = counts[..., 0], counts[..., 1]
    n_mk = n0 + n1
    n_m = n_mk.sum(axis=-1, keepdims=True)
    binary = counts.shape[-2] == 2
    with np.errstate(all="ignore"):
        dr = np.where(n_mk > 0, n1 / n_mk, np.nan)
        a, b = n0 / n_m, n1 / n_m
        others_b = b.sum(axis=-1, keepdims=True) - b
        others_a = a.sum(axis=-1, keepdims=True) - a
        # EO_{m,k} is undefined only where no critic of group m can hold label k (a + others_b = 0),
        # not where the model never gave k: a disagreeing critic's label k counts even then.
        critic_k = a + others_b > 0
        eo_lo = np.where(critic_k, a / (a + others_b), np.nan)
        eo_hi = eo_lo if binary else np.where(critic_k, np.where(a > 0, 1.0, 0.0), np.nan)
        pe_hi = b / (b + others_a)
        pe_lo = pe_hi if binary else b / (b + others_a + others_b)
        # with b = 0 the value is 0 whenever defined, also where b / (b + others_a) is 0 / 0
        pe_hi = pe_hi if binary else np.where(b > 0, pe_hi, pe_lo)
        dr_m = n1.sum(axis=-1, keepdims=True) / n_m
    return {
        "CA": (dr, dr, True),
        "AE": (dr_m, dr_m, True),
        "EO": (eo_lo, eo_hi, binary or a > 0),
        "PE": (pe_lo, pe_hi, binary or b + others_a > 0),
        "OMR": (1 - eo_hi, 1 - eo_lo, binary or a > 0),
    }


def notions_from_counts(counts: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """All notions from N[..., m, k, s] (a leading batch axis is allowed): name -> (lower, upper, poster)."""
    n_mk = counts.sum(axis=-1)
    n_m = n_mk.sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        sp = n_mk / n_m
        a, b = counts[..., 0] / n_m, counts[..., 1] / n_m
        others_sp = sp.sum(axis=-1, keepdims=True) - sp
        phi, mu, omega = a / (a + others_sp), b / (b + others_sp), others_sp / (a + others_sp)
    posters = {"CA": None, "AE": None, "EO": _poster(phi), "PE": _poster(mu), "OMR": _poster(omega)}
    return {name: (*_gap(lo, hi, sure), posters[name]) for name, (lo, hi, sure) in notion_cells(counts).items()}


def disagreement_notions(
    groups: Sequence | np.ndarray,
    model_labels: Sequence | np.ndarray,
    disagreements: Sequence[int] | np.ndarray,
    *,
    labels: Sequence | None = None,
    subjects: Sequence | None = None,
    n_resamples: int = 0,
    seed: int = 0,
    level: float = 0.95,
    items: Sequence | None = None,
    n_permutations: int = 0,
) -> DisagreementNotions:
    """Rates and notions from one record per answer (or per subject after :func:`majority`).

    With ``n_resamples`` > 0 each identified notion gets an interval (:func:`gap_interval`) from a cluster
    bootstrap over ``subjects`` (the clusters: each cluster's records together, e.g. a rater's answers;
    every record its own cluster when none are given), and ``differences`` the signed pairwise
    differences between groups with simultaneous intervals. Estimand: the notion's gap among the
    populations the clusters are drawn from. With more than two labels EO, PE and OMR are only bounded
    and get no interval. With ``n_permutations`` > 0 each notion gets the permutation p-value of "no gap"
    (:func:`_permutation_pvalues`), shuffling the groups among ``items`` (the decision subjects; every
    record its own item when none are given).

    Parameters
    ----------
    groups : sequence
        Each record's group m (at least two groups).
    model_labels : sequence
        The model's label yhat shown in each record.
    disagreements : sequence of int
        s = 1 when the critic disagreed with the label, else 0.
    labels : sequence, optional
        The possible labels (default: those seen).
    subjects : sequence, optional
        The bootstrap's clusters (e.g. the rater of each record).
    n_resamples : int
        Bootstrap resamples for the intervals (0: none).
    seed : int
        The seed of the bootstrap and the permutations.
    level : float
        The intervals' confidence level.
    items : sequence, optional
        The permutation test's units (the decision subject of each record).
    n_permutations : int
        Permutations for the p-values (0: none).

    Returns
    -------
    DisagreementNotions
        ``rates`` (SP and DR per group and label), ``dr_by_group``, ``overall_dr``, ``notions``
        (CA, AE, EO, PE, OMR: value, bounds, CI, p-value), ``differences``.

    Examples
    --------
    Critics disagree with 1 of group a's 4 labels and 3 of group b's: AE = DR_b - DR_a = 0.5. By label,
    DR is 0 (a) and 0.5 (b) for label 0 and 0.5 and 1 for label 1, so CA = max_k (max_m DR - min_m DR) = 0.5:

    >>> result = disagreement_notions(["a"] * 4 + ["b"] * 4, [1, 1, 0, 0] * 2, [1, 0, 0, 0, 1, 1, 1, 0])
    >>> result.dr_by_group.to_dict(), result.AE.value, result.CA.value
    ({'a': 0.25, 'b': 0.75}, 0.5, 0.5)
    """
    g = np.asarray(groups)
    y = np.asarray(model_labels)
    s = np.asarray(disagreements, dtype=int)
    if not (g.size == y.size == s.size):
        raise ValueError("groups, model_labels and disagreements must have equal lengths")
    if not set(np.unique(s)) <= {0, 1}:
        raise ValueError("disagreements must be 0 or 1")
    group_levels = sorted(pd.unique(g).tolist(), key=str)
    label_levels = sorted(pd.unique(y).tolist()) if labels is None else list(labels)
    if len(group_levels) < 2:
        raise ValueError("notions compare groups: need at least two groups")
    if len(label_levels) < 2:
        raise ValueError("need at least two possible labels")
    counts = _counts(g, y, s, group_levels, label_levels)
    point = notions_from_counts(counts)
    cis, differences = {}, pd.DataFrame()
    if n_resamples:
        ids = np.arange(g.size) if subjects is None else pd.factorize(np.asarray(subjects))[0]
        cells = counts_per_cluster(ids, ids.max() + 1, g, y, s, group_levels, label_levels)
        cis, differences = _intervals(counts, cells, n_resamples, seed, level, group_levels, label_levels)
    pvalues = {}
    if n_permutations:
        observed = {name: float((low + high) / 2) for name, (low, high, _) in point.items()}
        pvalues = _permutation_pvalues(g, y, s, items, group_levels, label_levels, n_permutations, seed, observed)
    n_mk = counts.sum(axis=-1)
    rates = pd.DataFrame(
        [
            {
                "group": m,
                "label": k,
                "n": int(n_mk[i, j]),
                "SP": n_mk[i, j] / n_mk[i].sum(),
                "DR": counts[i, j, 1] / n_mk[i, j] if n_mk[i, j] else np.nan,
            }
            for i, m in enumerate(group_levels)
            for j, k in enumerate(label_levels)
        ]
    )
    dr_m = pd.Series(counts[..., 1].sum(axis=-1) / n_mk.sum(axis=-1), index=group_levels, name="DR")
    notions = {}
    for name, (low, high, poster) in point.items():
        lo, hi = float(low), float(high)
        notions[name] = NotionValue(
            value=(lo + hi) / 2,
            lower=lo,
            upper=hi,
            exact=bool(np.isclose(lo, hi)),
            poster_estimate=None if poster is None else float(poster),
            ci=cis.get(name),
            pvalue=pvalues.get(name),
        )
    return DisagreementNotions(rates, dr_m, float(s.mean()), notions, differences)


def _resampled_counts(cells: np.ndarray, n_resamples: int, rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """N[m, k, s] of ``n_resamples`` cluster bootstrap resamples from per-cluster counts (n x M K 2)."""
    n = len(cells)
    picks = rng.integers(0, n, size=(n_resamples, n)) + n * np.arange(n_resamples)[:, None]
    weights = np.bincount(picks.ravel(), minlength=n_resamples * n).reshape(n_resamples, n)
    return (weights @ cells).reshape(n_resamples, *shape)


def gap_interval(
    point: np.ndarray, resampled: np.ndarray, level: float, *, largest: float = 1.0
) -> tuple[tuple[float, float], list[tuple]]:
    """An interval for the gap max_k max_{m,m'} (f_{m,k} - f_{m',k}) = max over pairs of |d_p|, d_p =
    f_{m,k} - f_{m',k} (m < m'), that covers it also when the true gap is 0.

    The percentile interval of a resampled max cannot reach 0 (every resample's max is >= 0). Instead:
    simultaneous intervals for all the signed differences d_p (sup-t bootstrap: d_p +- c se_p, se_p the
    resamples' standard deviation, c the ``level`` quantile of max_p |d*_p - d_p| / se_p), projected on
    the gap: [max_p dist(0, [L_p, U_p]), max_p max(|L_p|, |U_p|)]. When the intervals hold jointly the
    gap lies in the projection, so its coverage is at least theirs whatever the true gap (0 included;
    conservative when one pair dominates). ``point``: f (M, K); ``resampled``: f per resample (R, M, K);
    ``largest``: the largest gap there can be (1 for rates; ``np.inf``: unbounded).
    Returns the interval and the rows (k, m, m', d, L, U)."""
    m_count, k_count = point.shape
    pairs = [(k, i, j) for k in range(k_count) for i in range(m_count) for j in range(i + 1, m_count)]
    pairs = [(k, i, j) for k, i, j in pairs if np.isfinite(point[i, k]) and np.isfinite(point[j, k])]
    if not pairs or len(resampled) < 2:
        return (np.nan, np.nan), []
    k, i, j = (np.array(column) for column in zip(*pairs, strict=True))
    d = point[i, k] - point[j, k]
    boot = resampled[:, i, k] - resampled[:, j, k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a pair undefined in every resample
        se = np.nanstd(boot, axis=0, ddof=1)
        se = np.where(np.isfinite(se), se, 0.0)
        varying = se > 0
        if varying.any():
            t = np.nanmax(np.abs(boot[:, varying] - d[varying]) / se[varying], axis=1)
            c = float(np.nanquantile(t, level))
        else:
            c = 0.0
    low, high = d - c * se, d + c * se
    gap_low = float(np.max(np.maximum(0.0, np.maximum(low, -high))))
    gap_high = float(min(largest, np.max(np.maximum(np.abs(low), np.abs(high)))))
    rows = list(zip(k.tolist(), i.tolist(), j.tolist(), d.tolist(), low.tolist(), high.tolist(), strict=True))
    return (gap_low, gap_high), rows


def _identified(lo: np.ndarray, hi: np.ndarray) -> bool:
    return bool(np.allclose(lo, hi, equal_nan=True))


def _intervals(counts, cells, n_resamples, seed, level, group_levels, label_levels):
    """Each identified notion's gap interval (:func:`gap_interval`) and the table of signed differences."""
    rng = np.random.default_rng(seed)
    batch = _resampled_counts(cells, n_resamples, rng, counts.shape)
    point, resampled = notion_cells(counts), notion_cells(batch)
    out, rows = {}, []
    for name, (lo, hi, _) in point.items():
        if not _identified(lo, hi):  # more than two labels: EO, PE, OMR only bounded, no interval
            continue
        out[name], pairs = gap_interval(lo, resampled[name][0], level)
        labels = label_levels if lo.shape[-1] == len(label_levels) else [None]
        for k, i, j, d, low, high in pairs:
            rows.append(
                {
                    "notion": name,
                    "label": labels[k],
                    "group": group_levels[i],
                    "other_group": group_levels[j],
                    "difference": d,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return out, pd.DataFrame(
        rows, columns=["notion", "label", "group", "other_group", "difference", "ci_low", "ci_high"]
    )


def _permutation_pvalues(g, y, s, items, group_levels, label_levels, n_permutations, seed, observed) -> dict:
    """Permutation p-values of "no gap": the subject groups are shuffled among the items (each item's
    records keep their model label and disagreements and move together), the notions recomputed, and
    p = (1 + #{permuted gap >= observed}) / (1 + n_permutations). Exact under H0: the groups are
    exchangeable (the same distribution of model labels and disagreement in every group)."""
    ids, _ = pd.factorize(np.arange(g.size) if items is None else np.asarray(items))
    n_items = ids.max() + 1
    group_of = pd.Index(group_levels).get_indexer(g)
    item_group = np.full(n_items, -1)
    item_group[ids] = group_of
    if (item_group[ids] != group_of).any():
        raise ValueError("every item (subject) must belong to one group")
    ki = pd.Index(label_levels).get_indexer(y)
    per_item = np.zeros((n_items, len(label_levels) * 2))
    np.add.at(per_item, (ids, ki * 2 + s), 1)
    rng = np.random.default_rng(seed)
    beaten = dict.fromkeys(observed, 0)
    done = 0
    while done < n_permutations:
        size = min(200, n_permutations - done)
        shuffled = np.stack([rng.permutation(item_group) for _ in range(size)])
        onehot = np.eye(len(group_levels))[shuffled].transpose(0, 2, 1)  # size x M x items
        batch = (onehot @ per_item).reshape(size, len(group_levels), len(label_levels), 2)
        for name, (lo, hi, _) in notions_from_counts(batch).items():
            if name in beaten:
                beaten[name] += int(np.sum((lo + hi) / 2 >= observed[name] - 1e-12))
        done += size
    return {name: (1 + beaten[name]) / (1 + n_permutations) for name in observed}


def counts_per_cluster(ids, n_subjects, g, y, s, group_levels, label_levels) -> np.ndarray:
    """Record counts per cluster (subject or rater, ``ids`` in 0..n-1) and cell (m, k, s), flattened:
    n x (M K 2), so that any weighting of clusters gives N[m, k, s] by one matrix product."""
    gi = pd.Index(group_levels).get_indexer(g)
    ki = pd.Index(label_levels).get_indexer(y)
    cell = (gi * len(label_levels) + ki) * 2 + s
    n_cells = len(group_levels) * len(label_levels) * 2
    out = np.zeros((n_subjects, n_cells))
    np.add.at(out, (ids, cell), 1)
    return out


def majority(records: pd.DataFrame, *, subject: str = "subject", disagreement: str = "disagreement") -> pd.DataFrame:
    """One row per subject with the majority disagreement: s = 1 when more than half of the answers
    disagree; a tie counts as agreement (s = 0), the conservative reading that the model's label stands.
    Other columns keep the subject's first value."""
    share = records.groupby(subject)[disagreement].mean()
    first = records.groupby(subject).first().drop(columns=[disagreement])
    return first.assign(
        **{
            disagreement: (share > 0.5).astype(int),
            "answers": records.groupby(subject).size(),
            "disagreement_rate": share,
        }
    ).reset_index()
