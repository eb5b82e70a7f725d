"""Correlations and comparisons of dependent correlations (written from the original formulas).

Notation: compare r_jk with r_jh, which share variable j (overlapping), or r_jk with r_hm
(non-overlapping), in one sample of size n. z(r) = atanh(r) is Fisher's transform.

* Hotelling (1940):  t = (r_jk - r_jh) sqrt((n - 3)(1 + r_kh) / (2 |R|)), df = n - 3,
  |R| = 1 - r_jk^2 - r_jh^2 - r_kh^2 + 2 r_jk r_jh r_kh.
* Williams (1959):   t = (r_jk - r_jh) sqrt((n - 1)(1 + r_kh) / (2 (n-1)/(n-3) |R| + rbar^2 (1 - r_kh)^3)),
  rbar = (r_jk + r_jh) / 2, df = n - 3.
* Dunn & Clark (1969): z = (z_jk - z_jh) sqrt(n - 3) / sqrt(2 - 2 c), with the Pearson-Filon
  c = [r_kh (1 - r_jk^2 - r_jh^2) - r_jk r_jh (1 - r_jk^2 - r_jh^2 - r_kh^2) / 2] / ((1 - r_jk^2)(1 - r_jh^2)).
* Steiger (1980) Z1*: as Dunn & Clark with r_jk and r_jh in c replaced by the pooled rbar:
  c = [r_kh (1 - 2 rbar^2) - rbar^2 (1 - 2 rbar^2 - r_kh^2) / 2] / (1 - rbar^2)^2.
* Meng, Rosenthal & Rubin (1992): with r2 = (r_jk^2 + r_jh^2) / 2, f = min(1, (1 - r_kh) / (2 (1 - r2))),
  h = (1 - f r2) / (1 - r2):  Z = (z_jk - z_jh) sqrt((n - 3) / (2 (1 - r_kh) h)).
* Zou (2007): L = r1 - r2 - sqrt((r1 - l1)^2 + (u2 - r2)^2 - 2 c (r1 - l1)(u2 - r2)),
  U = r1 - r2 + sqrt((u1 - r1)^2 + (r2 - l2)^2 - 2 c (u1 - r1)(r2 - l2)), with (l, u) each
  correlation's Fisher interval and c the Pearson-Filon correlation of the two estimates.
* Non-overlapping, Steiger (1980): Z = (z_jk - z_hm) sqrt(n - 3) / sqrt(2 - 2 c), c from the
  Pearson-Filon covariance of r_jk and r_hm with both replaced by their mean; Zou (2007) as above.

Spearman correlations (documented choice): the formulas assume Pearson correlations. With
``spearman=True`` the Fisher-z variance 1/(n - 3) becomes 1.06/(n - 3) (Fieller, Hartley &
Pearson 1957): every z statistic is divided by sqrt(1.06), Zou's Fisher intervals are widened by
the same factor, and the t statistics of Hotelling and Williams are divided by sqrt(1.06) as well.
"""

import gc
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

SPEARMAN_VARIANCE_FACTOR = 1.06
OVERLAPPING_METHODS = ("hotelling", "williams", "steiger", "meng", "dunn_clark", "zou")
NONOVERLAPPING_METHODS = ("steiger", "zou")


@dataclass(frozen=True)
class CorrelationResult:
    statistic: float
    pvalue: float
    ci: tuple[float, float]
    n: int
    method: str


@dataclass(frozen=True)
class ComparisonResult:
    statistic: float
    pvalue: float
    method: str
    df: float | None = None
    ci: tuple[float, float] | None = None
    spearman: bool = False


def _fisher_ci(r: float, n: int, level: float, factor: float) -> tuple[float, float]:
    half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(factor / (n - 3))
    return float(np.tanh(np.arctanh(r) - half)), float(np.tanh(np.arctanh(r) + half))


def correlation(
    x: Sequence[float], y: Sequence[float], *, method: str = "spearman", level: float = 0.95
) -> CorrelationResult:
    """Pearson or Spearman correlation with its p-value (H0: rho = 0) and a Fisher-z interval
    (variance 1/(n-3), or 1.06/(n-3) for Spearman).

    Parameters
    ----------
    x, y : sequences of numbers
        Paired observations; pairs with a NaN are dropped (at least 4 complete pairs).
    method : {"spearman", "pearson"}
    level : float
        Confidence level of the interval.

    Returns
    -------
    CorrelationResult
        ``statistic``, ``pvalue``, ``ci``, ``n`` and ``method``.

    Examples
    --------
    Ranks differing by 1 in four of five places: rho = 1 - 6 * 4 / (5 * 24) = 0.8.

    >>> result = correlation([1, 2, 3, 4, 5], [1, 3, 2, 5, 4])
    >>> round(result.statistic, 4), result.n
    (0.8, 5)
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    n = xs.size
    if n < 4:
        raise ValueError("a correlation with a confidence interval needs at least 4 complete pairs")
    if method == "spearman":
        res = stats.spearmanr(xs, ys)
        factor = SPEARMAN_VARIANCE_FACTOR
    elif method == "pearson":
        res = stats.pearsonr(xs, ys)
        factor = 1.0
    else:
        raise ValueError("method must be 'spearman' or 'pearson'")
    r = float(res.statistic)
    return CorrelationResult(r, float(res.pvalue), _fisher_ci(r, n, level, factor), n, method)


def _check_r(*rs: float) -> None:
    for r in rs:
        if not -1 < r < 1:
            raise ValueError(f"correlations must lie strictly between -1 and 1, got {r}")


def _two_sided_z(z: float) -> float:
    return float(2 * stats.norm.sf(abs(z)))


def _pearson_filon(r_jk: float, r_jh: float, r_kh: float) -> float:
    return r_kh * (1 - r_jk**2 - r_jh**2) - 0.5 * r_jk * r_jh * (1 - r_jk**2 - r_jh**2 - r_kh**2)


def compare_correlations(
    r_jk: float, r_jh: float, r_kh: float, n: int, *, method: str, level: float = 0.95, spearman: bool = False
) -> ComparisonResult:
    """Test r_jk = r_jh for two correlations sharing variable j (two-sided p-value).

    Hotelling's and Williams's t (n - 3 df), Steiger's, Meng-Rosenthal-Rubin's and Dunn-Clark's z on
    Fisher-transformed correlations, and Zou's (2007) interval for r_jk - r_jh. With ``spearman`` the
    variances are scaled by 1.06 (Fieller, Hartley & Pearson 1957), as in :func:`correlation`.

    Parameters
    ----------
    r_jk, r_jh : float
        The two correlations compared (each of j with another variable).
    r_kh : float
        The correlation of the two other variables.
    n : int
        The number of observations (at least 5).
    method : {"hotelling", "williams", "steiger", "meng", "dunn_clark", "zou"}
    level : float
        Confidence level of Zou's interval.
    spearman : bool
        Whether the correlations are Spearman's.

    Returns
    -------
    ComparisonResult
        ``statistic``, ``pvalue``, ``method``, ``df`` (t tests), ``ci`` (Zou's method).

    Examples
    --------
    Hotelling's t = (r_jk - r_jh) sqrt((n - 3)(1 + r_kh) / (2 det)) with
    det = 1 - 0.25 - 0.09 - 0.16 + 2 (0.5)(0.3)(0.4) = 0.62, so t = 0.2 sqrt(100 * 1.4 / 1.24) = 2.1251:

    >>> result = compare_correlations(0.5, 0.3, 0.4, 103, method="hotelling")
    >>> round(result.statistic, 4), result.df, round(result.pvalue, 3)
    (2.1251, 100, 0.036)
    """
    _check_r(r_jk, r_jh, r_kh)
    if n < 5:
        raise ValueError("n must be at least 5")
    if method not in OVERLAPPING_METHODS:
        raise ValueError(f"method must be one of {OVERLAPPING_METHODS}")
    factor = SPEARMAN_VARIANCE_FACTOR if spearman else 1.0
    shrink = 1 / np.sqrt(factor)
    z_jk, z_jh = np.arctanh(r_jk), np.arctanh(r_jh)
    det = 1 - r_jk**2 - r_jh**2 - r_kh**2 + 2 * r_jk * r_jh * r_kh
    if method == "hotelling":
        t = (r_jk - r_jh) * np.sqrt((n - 3) * (1 + r_kh) / (2 * det)) * shrink
        return ComparisonResult(float(t), float(2 * stats.t.sf(abs(t), n - 3)), method, df=n - 3, spearman=spearman)
    if method == "williams":
        rbar = (r_jk + r_jh) / 2
        t = (r_jk - r_jh) * np.sqrt((n - 1) * (1 + r_kh) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r_kh) ** 3))
        t *= shrink
        return ComparisonResult(float(t), float(2 * stats.t.sf(abs(t), n - 3)), method, df=n - 3, spearman=spearman)
    if method == "dunn_clark":
        c = _pearson_filon(r_jk, r_jh, r_kh) / ((1 - r_jk**2) * (1 - r_jh**2))
        z = (z_jk - z_jh) * np.sqrt(n - 3) / np.sqrt(2 - 2 * c) * shrink
        return ComparisonResult(float(z), _two_sided_z(z), method, spearman=spearman)
    if method == "steiger":
        rbar = (r_jk + r_jh) / 2
        c = _pearson_filon(rbar, rbar, r_kh) / (1 - rbar**2) ** 2
        z = (z_jk - z_jh) * np.sqrt(n - 3) / np.sqrt(2 - 2 * c) * shrink
        return ComparisonResult(float(z), _two_sided_z(z), method, spearman=spearman)
    if method == "meng":
        r2 = (r_jk**2 + r_jh**2) / 2
        f = min(1.0, (1 - r_kh) / (2 * (1 - r2)))
        h = (1 - f * r2) / (1 - r2)
        z = (z_jk - z_jh) * np.sqrt((n - 3) / (2 * (1 - r_kh) * h)) * shrink
        return ComparisonResult(float(z), _two_sided_z(z), method, spearman=spearman)
    # zou
    c = _pearson_filon(r_jk, r_jh, r_kh) / ((1 - r_jk**2) * (1 - r_jh**2))
    ci = _zou_interval(r_jk, r_jh, c, n, level, factor)
    z = (z_jk - z_jh) * np.sqrt(n - 3) / np.sqrt(2 - 2 * c) * shrink
    return ComparisonResult(float(z), _two_sided_z(z), method, ci=ci, spearman=spearman)


def _zou_interval(r1: float, r2: float, c: float, n: int, level: float, factor: float) -> tuple[float, float]:
    l1, u1 = _fisher_ci(r1, n, level, factor)
    l2, u2 = _fisher_ci(r2, n, level, factor)
    lower = r1 - r2 - np.sqrt((r1 - l1) ** 2 + (u2 - r2) ** 2 - 2 * c * (r1 - l1) * (u2 - r2))
    upper = r1 - r2 + np.sqrt((u1 - r1) ** 2 + (r2 - l2) ** 2 - 2 * c * (u1 - r1) * (r2 - l2))
    return float(lower), float(upper)


def _pearson_filon_nonoverlapping(r_jk, r_hm, r_jh, r_jm, r_kh, r_km) -> float:
    """Covariance term of r_jk and r_hm (Pearson & Filon 1898), times n."""
    return 0.5 * (
        (r_jh - r_jk * r_kh) * (r_km - r_kh * r_hm)
        + (r_jm - r_jh * r_hm) * (r_kh - r_jk * r_jh)
        + (r_jh - r_jm * r_hm) * (r_km - r_jk * r_jm)
        + (r_jm - r_jk * r_km) * (r_kh - r_km * r_hm)
    )


def compare_nonoverlapping_correlations(
    r_jk: float,
    r_hm: float,
    r_jh: float,
    r_jm: float,
    r_kh: float,
    r_km: float,
    n: int,
    *,
    method: str,
    level: float = 0.95,
    spearman: bool = False,
) -> ComparisonResult:
    """Test r_jk = r_hm for two correlations with no variable in common (two-sided p-value)."""
    _check_r(r_jk, r_hm, r_jh, r_jm, r_kh, r_km)
    if method not in NONOVERLAPPING_METHODS:
        raise ValueError(f"method must be one of {NONOVERLAPPING_METHODS}")
    factor = SPEARMAN_VARIANCE_FACTOR if spearman else 1.0
    shrink = 1 / np.sqrt(factor)
    dz = np.arctanh(r_jk) - np.arctanh(r_hm)
    if method == "steiger":
        rbar = (r_jk + r_hm) / 2
        c = _pearson_filon_nonoverlapping(rbar, rbar, r_jh, r_jm, r_kh, r_km) / (1 - rbar**2) ** 2
        z = dz * np.sqrt(n - 3) / np.sqrt(2 - 2 * c) * shrink
        return ComparisonResult(float(z), _two_sided_z(z), method, spearman=spearman)
    c = _pearson_filon_nonoverlapping(r_jk, r_hm, r_jh, r_jm, r_kh, r_km) / ((1 - r_jk**2) * (1 - r_hm**2))
    z = dz * np.sqrt(n - 3) / np.sqrt(2 - 2 * c) * shrink
    return ComparisonResult(
        float(z), _two_sided_z(z), method, ci=_zou_interval(r_jk, r_hm, c, n, level, factor), spearman=spearman
    )


def bonferroni(pvalues: Sequence[float]) -> np.ndarray:
    """Bonferroni-adjusted p-values, min(1, m p) (statsmodels' ``multipletests``).

    Parameters
    ----------
    pvalues : sequence of float
        One family's p-values; a NaN stays NaN and is not counted.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input's order.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(bonferroni([0.01, 0.04, 0.03]), 4).tolist()
    [0.03, 0.12, 0.09]
    """
    return adjust_pvalues(pvalues, method="bonferroni")


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (statsmodels' ``multipletests``).

    Parameters
    ----------
    pvalues : sequence of float
        One family's p-values; a NaN stays NaN and is not counted.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input's order.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(holm([0.01, 0.04, 0.03]), 4).tolist()
    [0.03, 0.06, 0.06]
    """
    return adjust_pvalues(pvalues, method="holm")


def adjust_pvalues(pvalues: Sequence[float], *, method: str) -> np.ndarray:
    """P-values adjusted over one family with ``statsmodels.stats.multitest.multipletests``.

    Parameters
    ----------
    pvalues : sequence of float
        The family; missing p-values (NaN) stay missing and do not count towards its size m.
    method : str
        A ``multipletests`` method: ``"bonferroni"``, ``"holm"``, ``"fdr_bh"`` (Benjamini-Hochberg), ...

    Returns
    -------
    numpy.ndarray
        One adjusted p-value per input, in order.

    Examples
    --------
    Benjamini-Hochberg over the three p-values: sorted, p_(i) * m / i is 0.03, 0.045, 0.04, and each
    adjusted value is the smallest of those at or above its rank (0.03, 0.04, 0.04); the NaN is not counted:

    >>> import numpy as np
    >>> np.round(adjust_pvalues([0.01, 0.04, float("nan"), 0.03], method="fdr_bh"), 4).tolist()
    [0.03, 0.04, nan, 0.04]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    keep = ~np.isnan(p)
    if keep.any():
        # statsmodels' Holm branch calls gc.collect() on every call (0.1-1 s in a process with a few hundred
        # thousand objects); frozen objects are left out of that collection
        gc.freeze()
        try:
            out[keep] = multipletests(p[keep], method=method)[1]
        finally:
            gc.unfreeze()
    return out


@dataclass(frozen=True)
class BootstrapResult:
    estimate: float
    ci: tuple[float, float]
    n_resamples: int
    seed: int
    distribution: np.ndarray


def bootstrap_correlation_difference(
    groups: Sequence,
    x1: Sequence[float],
    x2: Sequence[float],
    y: Sequence[float],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    method: str = "spearman",
    chunk: int = 500,
    progress=None,
    stimuli: Sequence | None = None,
) -> BootstrapResult:
    """Percentile bootstrap CI of r(x1, y) - r(x2, y) resampling *participants* (``groups``), not
    rows, because each participant rates many pairs.

    Vectorised without a loop over resamples: rows with the same (x, y) values form a cell, a
    sparse participant x cell count matrix C is built once, and a chunk of resamples (per-participant
    draw counts K, n_groups draws with replacement) gives cell weights K @ C. Correlations (Spearman: on
    mid-ranks recomputed within each resample) are weighted correlations over the cells, which
    equal those of the explicitly resampled rows.

    With ``stimuli`` (one value per row) the resamples are two-way (pigeonhole): participants and stimuli
    drawn with replacement independently, the row of (i, j) weighted by the product c_i d_j of their draw
    counts (Owen 2007, *Ann. Appl. Stat.* 1: 386-411; as ``analysis.repeated_measures.two_way_bootstrap_ols``):
    the interval includes the variation from drawing other stimuli, r for a population of stimuli like these.
    """
    a1, a2, b = (np.asarray(v, dtype=float) for v in (x1, x2, y))
    keep = ~(np.isnan(a1) | np.isnan(a2) | np.isnan(b))
    a1, a2, b = a1[keep], a2[keep], b[keep]
    codes = np.unique(np.asarray(groups)[keep], return_inverse=True)[1].ravel()
    n_groups = int(codes.max()) + 1
    if stimuli is None:
        units, n_units = codes, n_groups

        def draw(rng: np.random.Generator, size: int) -> np.ndarray:
            return resample_counts(rng, n_groups, size)
    else:  # the units are the rows, weighted c_i d_j
        cols = np.unique(np.asarray(stimuli)[keep], return_inverse=True)[1].ravel()
        units, n_units, n_stimuli = np.arange(codes.size), codes.size, int(cols.max()) + 1

        def draw(rng: np.random.Generator, size: int) -> np.ndarray:
            return resample_counts(rng, n_groups, size)[:, codes] * resample_counts(rng, n_stimuli, size)[:, cols]

    rng = np.random.default_rng(seed)
    first, second = _Cells(units, n_units, a1, b), _Cells(units, n_units, a2, b)
    ones = np.ones((1, n_units))
    estimate = float(first.corr(ones, method)[0] - second.corr(ones, method)[0])
    draws = []
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        counts = draw(rng, size)
        draws.append(first.corr(counts, method) - second.corr(counts, method))
        done += size
        if progress:
            progress(done)
    dist = np.concatenate(draws)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(dist, [alpha, 1 - alpha])
    return BootstrapResult(estimate, (float(lo), float(hi)), n_resamples, seed, dist)


def spearman_from_counts(counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's r (mid-ranks for ties) of data given as counts: ``counts[k]`` rows with the values
    (``a[k]``, ``b[k]``); equals ``scipy.stats.spearmanr`` on the rows written out."""
    weights = np.asarray(counts, dtype=float)[None, :]
    return float(_weighted_corr(weights, np.asarray(a, dtype=float), np.asarray(b, dtype=float), "spearman")[0])


class _Cells:
    """Distinct (a, b) value pairs and how many rows of each participant fall in each."""

    def __init__(self, codes: np.ndarray, n_groups: int, a: np.ndarray, b: np.ndarray):
        from scipy.sparse import csr_matrix

        values, cell = np.unique(np.column_stack([a, b]), axis=0, return_inverse=True)
        cell = cell.ravel()
        self.a, self.b = values[:, 0], values[:, 1]
        self.counts_t = csr_matrix((np.ones(cell.size), (cell, codes)), shape=(len(values), n_groups))

    def corr(self, participant_counts: np.ndarray, method: str) -> np.ndarray:
        weights = np.asarray(self.counts_t @ participant_counts.T).T
        return _weighted_corr(weights, self.a, self.b, method)


def _weighted_corr(weights: np.ndarray, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
    """Correlation of a and b in each resample, rows weighted by how often they were drawn."""
    if method == "spearman":
        a, b = _weighted_ranks(weights, a), _weighted_ranks(weights, b)
    else:
        a = np.broadcast_to(a, weights.shape)
        b = np.broadcast_to(b, weights.shape)
    total = weights.sum(axis=1, keepdims=True)
    ma = (weights * a).sum(axis=1, keepdims=True) / total
    mb = (weights * b).sum(axis=1, keepdims=True) / total
    da, db = a - ma, b - mb
    cov = (weights * da * db).sum(axis=1)
    return cov / np.sqrt((weights * da * da).sum(axis=1) * (weights * db * db).sum(axis=1))


def _weighted_ranks(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``values`` in each resample where row i appears weights[r, i] times.

    For distinct values v (sorted), rank(v) = (weight of rows < v) + (weight of rows == v + 1) / 2;
    the per-value weights are one sparse product with the row-to-value indicator matrix.
    """
    from scipy.sparse import csr_matrix

    levels, inverse = np.unique(values, return_inverse=True)
    indicator = csr_matrix((np.ones(values.size), (np.arange(values.size), inverse)), shape=(values.size, levels.size))
    per_level = np.asarray((indicator.T @ weights.T).T)
    below = np.cumsum(per_level, axis=1) - per_level
    mid = below + (per_level + 1) / 2
    return mid[:, inverse]


def resample_counts(rng: np.random.Generator, n_groups: int, size: int) -> np.ndarray:
    """How often each of n_groups participants is drawn in each of ``size`` bootstrap resamples
    (n_groups draws with replacement each)."""
    picks = rng.integers(0, n_groups, size=(size, n_groups)) + n_groups * np.arange(size)[:, None]
    return np.bincount(picks.ravel(), minlength=size * n_groups).reshape(size, n_groups).astype(float)
