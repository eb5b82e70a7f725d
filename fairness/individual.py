"""Effort-aware individual fairness, EaIF (effort-aware fairness paper, Eq. 12-13).

For subjects i, j with effort E, aggregate S and model risk r:
    d = sqrt(alpha (E_i - E_j)^2 + (1 - alpha) (S_i - S_j)^2),  D = |r_i - r_j|,
    F = 1 - max(0, D - d),   EaIF = mean of F over all n(n-1)/2 pairs.
alpha weighs effort (trajectory) against the aggregate: 0.5 for equal weights, or a Calibration.

The exact sum runs in memory-bounded blocks: a numba kernel (square roots only for violating pairs,
since D > d iff D^2 > d^2; parallel over rows, each row paired
with its mirror row so both threads get equal work) when numba is importable, else a pure-NumPy
blocked loop that gives the same result. Memory is O(n) plus one block.

Exact ties: a pair violates only when D - d > TIE_TOLERANCE (one constant for both backends and for
the sampled estimate). Without it, pairs with D = d in exact arithmetic (e.g. r = 0.8 E + 0.2 with
alpha = 0.64) counted as violations or not depending on the last bit of rounding, and the numba
kernel (comparing D^2 with d^2) and the NumPy loop (comparing D - d with 0) disagreed on them. Such
pairs add at most TIE_TOLERANCE each to the EaIF sum, so leaving them out does not change EaIF.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from fairness.jit import numba
from fairness.pair_sampling import CHUNK, bounded_mean, draw_pairs, eaif_pair_sums, pair_key, sequential_sums
from fairness.sampling_options import LEVEL

BLOCK = 2048
# D - d must exceed this for a pair to count as a violation (absolute; risks and distances are O(1),
# rounding errors O(1e-16)).
TIE_TOLERANCE = 1e-12
# the sampled worst-pair search's parallel runs per chunk (each keeps its own k worst pairs)
RUNS = 16


@dataclass(frozen=True)
class EaIFResult:
    eaif: float
    violation_share: float
    n_pairs: int
    alpha: float


@dataclass(frozen=True)
class EaIFEstimate:
    """A sampled EaIF: ``ci`` by ``bound`` (``fairness.pair_sampling``; its ``assumptions`` in words) for the
    exact EaIF of these subjects, at ``level``, from ``n_pairs`` pairs; ``half_width`` is the bound's (``ci`` is
    estimate +/- half_width clipped to [0, 1]); the violation share's own interval is by the same bound."""

    estimate: float
    ci: tuple[float, float]
    n_pairs: int
    seed: int
    violation_share: float
    bound: str = "normal"
    assumptions: str = ""
    violation_share_ci: tuple[float, float] = (0.0, 1.0)
    half_width: float = 0.5
    level: float = LEVEL

    def confidence_interval(self) -> tuple[float, float]:
        return self.ci


def _inputs(effort, aggregate, risk, alpha):
    e, s, r = (np.ascontiguousarray(v, dtype=np.float64).reshape(-1) for v in (effort, aggregate, risk))
    if not (e.size == s.size == r.size):
        raise ValueError(f"effort, aggregate and risk must have equal lengths ({e.size}, {s.size}, {r.size})")
    if e.size < 2:
        raise ValueError("EaIF needs at least two subjects")
    if not 0 <= alpha <= 1:
        raise ValueError("alpha must lie in [0, 1]")
    if not (np.isfinite(e).all() and np.isfinite(s).all() and np.isfinite(r).all()):
        raise ValueError("effort, aggregate and risk must be finite")
    return e, s, r


def _numpy_sums(e, s, r, alpha, block=BLOCK):
    """(sum of max(0, D - d), number of violating pairs) over i < j, blockwise."""
    n = e.size
    total, violations = 0.0, 0
    for start in range(0, n - 1, block):
        stop = min(start + block, n - 1)
        rows = slice(start, stop)
        cols = np.arange(start + 1, n)
        de = e[rows, None] - e[None, cols]
        ds = s[rows, None] - s[None, cols]
        excess = np.abs(r[rows, None] - r[None, cols]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
        upper = cols[None, :] > np.arange(start, stop)[:, None]
        violating = upper & (excess > TIE_TOLERANCE)
        total += float(excess[violating].sum())
        violations += int(violating.sum())
    return total, violations


def _numpy_cross_sums(e1, s1, r1, e2, s2, r2, alpha, block=BLOCK):
    """(sum of max(0, D - d), number of violating pairs) over every pair (i in set 1, j in set 2), blockwise."""
    total, violations = 0.0, 0
    for start in range(0, e1.size, block):
        rows = slice(start, start + block)
        de, ds = e1[rows, None] - e2[None, :], s1[rows, None] - s2[None, :]
        excess = np.abs(r1[rows, None] - r2[None, :]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
        violating = excess > TIE_TOLERANCE
        total += float(excess[violating].sum())
        violations += int(violating.sum())
    return total, violations


if numba is not None:
    from fairness.pair_sampling import draw_pair

    @numba.njit(fastmath=True, cache=True, inline="always")
    def _row_sums(ei, si, ri, e, s, r, start, alpha, beta, tol):  # pragma: no cover - compiled
        # subject (ei, si, ri) against subjects start.. of (e, s, r).
        # D - d > tol  <=>  D - tol > 0 and (D - tol)^2 > d^2: the square root only for violating pairs
        total = 0.0
        violations = 0
        for j in range(start, e.size):
            de = ei - e[j]
            ds = si - s[j]
            d2 = alpha * de * de + beta * ds * ds
            big_d = abs(ri - r[j])
            shifted = big_d - tol
            if shifted > 0.0 and shifted * shifted > d2:
                excess = big_d - np.sqrt(d2)
                if excess > tol:  # the same test as the NumPy loop, on the same numbers
                    total += excess
                    violations += 1
        return total, violations

    @numba.njit(parallel=True, fastmath=True, cache=True)
    def _numba_sums(e, s, r, alpha, tol):  # pragma: no cover - compiled
        n = e.size
        beta = 1.0 - alpha
        total = 0.0
        violations = 0
        for k in numba.prange((n + 1) // 2):
            t1, v1 = _row_sums(e[k], s[k], r[k], e, s, r, k + 1, alpha, beta, tol)
            total += t1
            violations += v1
            mirror = n - 1 - k
            if mirror != k:
                t2, v2 = _row_sums(e[mirror], s[mirror], r[mirror], e, s, r, mirror + 1, alpha, beta, tol)
                total += t2
                violations += v2
        return total, violations

    @numba.njit(parallel=True, fastmath=True, cache=True)
    def _numba_cross_sums(e1, s1, r1, e2, s2, r2, alpha, tol):  # pragma: no cover - compiled
        beta = 1.0 - alpha
        total = 0.0
        violations = 0
        for i in numba.prange(e1.size):
            t, v = _row_sums(e1[i], s1[i], r1[i], e2, s2, r2, 0, alpha, beta, tol)
            total += t
            violations += v
        return total, violations

    @numba.njit(parallel=True, cache=True)
    def _numba_row_worst(e, s, r, alpha, k, tol):  # pragma: no cover - compiled
        # per subject i: its k largest violations D - d > tol over j > i (ties: the smaller j first), -inf padded;
        # no fastmath: the NumPy loop's operations in its order, so the same numbers
        n = e.size
        values = np.full((n, k), -np.inf)
        partners = np.zeros((n, k), dtype=np.int64)
        for i in numba.prange(n - 1):
            kept = 0
            for j in range(i + 1, n):
                de = e[i] - e[j]
                ds = s[i] - s[j]
                v = abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
                if v <= tol or (kept == k and v <= values[i, k - 1]):
                    continue
                at = kept if kept < k else k - 1
                while at > 0 and values[i, at - 1] < v:
                    if at < k:
                        values[i, at] = values[i, at - 1]
                        partners[i, at] = partners[i, at - 1]
                    at -= 1
                values[i, at] = v
                partners[i, at] = j
                kept = min(kept + 1, k)
        return values, partners

    @numba.njit(cache=True, inline="always")
    def _before(v, i, j, w, a, b):  # pragma: no cover - compiled
        # _Best's order: the larger violation first, then the pair (i, j) first in row order
        return v > w or (v == w and (i < a or (i == a and j < b)))

    @numba.njit(parallel=True, cache=True)
    def _numba_sampled_worst(e, s, r, alpha, first, count, key, k, floor, runs):  # pragma: no cover - compiled
        # pairs first .. first + count - 1 of the stream of key, cut into `runs` runs: per run its k first distinct
        # pairs (i < j) in _Best's order with D - d > floor, -inf padded; no fastmath: the NumPy loop's
        # operations in its order, so the same numbers
        n = e.size
        values = np.full((runs, k), -np.inf)
        rows = np.zeros((runs, k), dtype=np.int64)
        cols = np.zeros((runs, k), dtype=np.int64)
        size = (count + runs - 1) // runs
        for p in numba.prange(runs):
            kept = 0
            for t in range(first + p * size, min(first + (p + 1) * size, first + count)):
                a, b = draw_pair(t, key, n)
                i, j = min(a, b), max(a, b)
                de = e[i] - e[j]
                ds = s[i] - s[j]
                v = abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
                if v <= floor or (kept == k and not _before(v, i, j, values[p, k - 1], rows[p, k - 1], cols[p, k - 1])):
                    continue
                at = kept
                while at > 0 and _before(v, i, j, values[p, at - 1], rows[p, at - 1], cols[p, at - 1]):
                    at -= 1
                if at > 0 and rows[p, at - 1] == i and cols[p, at - 1] == j:
                    continue  # drawn before in this run
                for q in range(min(kept, k - 1), at, -1):
                    values[p, q], rows[p, q], cols[p, q] = values[p, q - 1], rows[p, q - 1], cols[p, q - 1]
                values[p, at], rows[p, at], cols[p, at] = v, i, j
                kept = min(kept + 1, k)
        return values, rows, cols


def pair_sums(block_i, block_j=None, *, alpha: float, backend: str = "auto") -> tuple[float, int]:
    """The exact kernel on one tile of the pair matrix: (sum of max(0, D - d), violating pairs) over the pairs
    i < j of ``block_i`` when ``block_j`` is None, else over every pair (i in ``block_i``, j in ``block_j``).
    A block is an array of shape (3, m): effort, aggregate and risk rows (``fairness.distributed``'s tiles)."""
    e1, s1, r1 = (np.ascontiguousarray(row, dtype=np.float64) for row in block_i)
    if block_j is None:
        return _sums(e1, s1, r1, alpha, backend)
    e2, s2, r2 = (np.ascontiguousarray(row, dtype=np.float64) for row in block_j)
    if _use_numba(backend):
        return _numba_cross_sums(e1, s1, r1, e2, s2, r2, float(alpha), TIE_TOLERANCE)
    return _numpy_cross_sums(e1, s1, r1, e2, s2, r2, float(alpha))


def _use_numba(backend: str) -> bool:
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError("backend must be 'auto', 'numba' or 'numpy'")
    if backend == "numba" and numba is None:
        raise RuntimeError("numba is not installed; use backend='numpy'")
    return backend == "numba" or (backend == "auto" and numba is not None)


def _sums(e, s, r, alpha, backend) -> tuple[float, int]:
    """(sum of max(0, D - d), violating pairs) over i < j by the chosen backend."""
    if _use_numba(backend):
        return _numba_sums(e, s, r, float(alpha), TIE_TOLERANCE)
    return _numpy_sums(e, s, r, float(alpha))


def eaif_details(effort, aggregate, risk, *, alpha: float, backend: str = "auto") -> EaIFResult:
    """Exact EaIF (:func:`eaif`, Eq. 13) with the share of pairs whose output gap exceeds their input distance.

    Parameters
    ----------
    effort, aggregate, risk : arrays of n subjects
        Effort E, aggregate S and the model's risk score r of each subject.
    alpha : float
        The weight of effort against the aggregate, in [0, 1].
    backend : {"auto", "numba", "numpy"}
        The pairwise sum's implementation ("auto": numba when installed).

    Returns
    -------
    EaIFResult
        ``eaif``, ``violation_share`` (pairs with D > d), ``n_pairs`` = n (n - 1) / 2, ``alpha``.

    Examples
    --------
    Of the three pairs, only (0, 1) violates: scores 1 apart for efforts 0.5 apart (by 0.5), so
    EaIF = 1 - 0.5 / 3:

    >>> result = eaif_details([0, 0.5, 1], [0, 0, 0], [0, 1, 1], alpha=1.0)
    >>> round(result.eaif, 4), round(result.violation_share, 4), result.n_pairs
    (0.8333, 0.3333, 3)
    """
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    total, violations = _sums(e, s, r, alpha, backend)
    n_pairs = e.size * (e.size - 1) // 2
    return EaIFResult(1.0 - total / n_pairs, float(violations) / n_pairs, n_pairs, float(alpha))


def eaif(effort, aggregate, risk, *, alpha: float) -> float:
    """The exact EaIF of one model (Eq. 13): the mean over subject pairs of 1 - max(0, D - d), with
    D = |r_i - r_j| and d = sqrt(alpha (E_i - E_j)^2 + (1 - alpha) (S_i - S_j)^2).

    Parameters
    ----------
    effort, aggregate, risk : arrays of n subjects
        Effort E, aggregate S and the model's risk score r of each subject.
    alpha : float
        The weight of effort against the aggregate, in [0, 1] (a human-calibrated one: ``Calibration.alpha``).

    Returns
    -------
    float
        EaIF in [0, 1]; 1 when no pair's scores differ by more than their distance.

    Examples
    --------
    Scores 1 apart for subjects 0.5 apart in effort violate by 0.5; 0.5 apart for subjects 1 apart do not:

    >>> eaif([0, 0.5], [0, 0], [0, 1], alpha=1.0)
    0.5
    >>> eaif([0, 1], [0, 0], [0, 0.5], alpha=1.0)
    1.0
    """
    return eaif_details(effort, aggregate, risk, alpha=alpha).eaif


def eaif_sampled(
    effort,
    aggregate,
    risk,
    *,
    alpha: float,
    n_pairs: int = 1_000_000,
    seed: int = 0,
    level: float = LEVEL,
    bound: str = "bernstein",
    backend: str = "auto",
    half_width: float | None = None,
    max_pairs: int = 10**10,
) -> EaIFEstimate:
    """EaIF estimated from ``n_pairs`` unordered pairs drawn uniformly with replacement, in constant memory
    (``fairness.pair_sampling``), for populations too large for the exact sum. The estimand is the exact EaIF
    of these subjects (the sampling is the only randomness); each pair's term F lies in [0, 1], so ``bound``
    "hoeffding" (mean +/- sqrt(ln(2/delta) / (2 m))) and "bernstein" (empirical Bernstein, the default) hold
    for every m with no other assumption, "normal" approximately. The violation share gets its interval by the
    same bound. With ``half_width`` the draws go on until the interval is that narrow, checked at n_pairs 2^j
    with delta / 2^(j + 1) each (``fairness.pair_sampling.sequential_sums``): the interval where it stops still
    covers at least at ``level`` (a union bound, valid under this optional stopping).

    Parameters
    ----------
    effort, aggregate, risk, alpha
        As in :func:`eaif`.
    n_pairs : int
        Pairs drawn (at least 2).
    seed : int
        The draws' seed.
    level : float
        The intervals' confidence level.
    bound : str
        "bernstein" (default), "hoeffding" or "normal".
    backend : str
        "numba", "numpy" or "auto"; both draw the same pairs.
    half_width : float, optional
        Stop as soon as the interval's half-width is at most this (then ``n_pairs`` is the first check).
    max_pairs : int
        With ``half_width``: draw no more than this (the interval is then wider than asked).

    Returns
    -------
    EaIFEstimate
        ``estimate``, ``ci``, ``n_pairs`` (the pairs used), ``seed``, ``violation_share`` (of the drawn pairs),
        ``bound``, ``assumptions``, ``violation_share_ci``, ``half_width`` (the bound's, before clipping to
        [0, 1]) and ``level`` (with ``half_width``, the interval is stated at the stopping check's 1 - delta_j and
        covers at least at ``level``).

    Examples
    --------
    With two subjects every draw is the one pair, so the estimate is the exact EaIF,
    1 - max(0, 1 - 0.5) = 0.5, and Hoeffding's half-width at 100 pairs is sqrt(ln(40) / 200) = 0.136:

    >>> result = eaif_sampled([0, 0.5], [0, 0], [0, 1], alpha=1.0, n_pairs=100, bound="hoeffding")
    >>> result.estimate, result.violation_share
    (0.5, 1.0)
    >>> [round(x, 3) for x in result.ci]
    [0.364, 0.636]
    """
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    if n_pairs < 2:
        raise ValueError("a sampled EaIF needs at least two pairs")
    stated = level  # with half_width: the stopping check's 1 - delta_j (the union bound's share of delta)
    if half_width is None:
        total, squares, violations = eaif_pair_sums(e, s, r, alpha, n_pairs, seed, TIE_TOLERANCE, backend)
    else:
        run = sequential_sums(
            lambda start, count: eaif_pair_sums(e, s, r, alpha, count, seed, TIE_TOLERANCE, backend, start),
            half_width=half_width,
            first=n_pairs,
            max_pairs=max_pairs,
            level=level,
            bound=bound,
        )
        total, squares, violations, n_pairs, stated = run.total, run.squares, run.violations, run.m, run.level
    mean = bounded_mean(total, squares, n_pairs, level=stated, bound=bound)
    share = bounded_mean(violations, violations, n_pairs, level=stated, bound=bound)  # indicators: x^2 = x
    return EaIFEstimate(
        mean.estimate,
        mean.ci,
        n_pairs,
        seed,
        share.estimate,
        bound,
        mean.assumptions,
        share.ci,
        mean.half_width,
        level,
    )


def subject_violations(effort, aggregate, risk, *, alpha: float, subjects=None) -> np.ndarray:
    """Per subject: the mean over its pairs with every other subject of max(0, D - d).
    ``subjects`` (indices) restricts the rows computed; O(len(subjects) x n) time, O(n) memory."""
    return subject_violation_curves(effort, aggregate, risk, alphas=[alpha], subjects=subjects)[0]


def subject_violation_curves(effort, aggregate, risk, *, alphas, subjects=None) -> np.ndarray:
    """:func:`subject_violations` at every alpha of ``alphas`` (alphas x subjects), each block's pairwise
    differences computed once for all of them."""
    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    e, s, r = _inputs(effort, aggregate, risk, 0.0)
    if not ((alphas >= 0) & (alphas <= 1)).all():
        raise ValueError("alpha must lie in [0, 1]")
    rows = np.arange(e.size) if subjects is None else np.asarray(subjects)
    out = np.empty((alphas.size, rows.size))
    for start in range(0, rows.size, 256):
        idx = rows[start : start + 256]
        de, ds = e[idx, None] - e[None, :], s[idx, None] - s[None, :]
        dr = np.abs(r[idx, None] - r[None, :])
        for a, alpha in enumerate(alphas):
            excess = np.maximum(dr - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds), 0.0)
            out[a, start : start + 256] = excess.sum(axis=1) / (e.size - 1)  # the self-pair contributes 0
    return out


def worst_pairs(effort, aggregate, risk, *, alpha: float, ids=None, k: int = 20, backend: str = "auto"):
    """The k pairs with the largest violation D - d > 0 (exact; ties: the pair (i, j) first in row order), as a
    DataFrame with both ids, D, d and the violation, for an auditor to act on. ``backend`` as
    :func:`eaif_details`': numba keeps each subject's k worst pairs in one pass (O(n k) memory), NumPy runs
    blockwise; both give the same pairs and numbers."""
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    best = _Best(k)
    n = e.size
    if _use_numba(backend) and k > 0:
        values, partners = _numba_row_worst(e, s, r, float(alpha), k, TIE_TOLERANCE)
        rows, ranks = np.nonzero(values > TIE_TOLERANCE)
        best.add(values[rows, ranks], rows.astype(np.int64), partners[rows, ranks])
        return best.frame(e, s, r, alpha, np.arange(n) if ids is None else np.asarray(ids))
    for start in range(0, n - 1, BLOCK):
        stop = min(start + BLOCK, n - 1)
        cols = np.arange(start + 1, n)
        de = e[start:stop, None] - e[None, cols]
        ds = s[start:stop, None] - s[None, cols]
        excess = np.abs(r[start:stop, None] - r[None, cols]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
        excess[cols[None, :] <= np.arange(start, stop)[:, None]] = -np.inf
        flat = excess.ravel()
        enter = np.flatnonzero(flat > best.floor)
        best.add(flat[enter], start + enter // cols.size, cols[enter % cols.size])
    return best.frame(e, s, r, alpha, np.arange(n) if ids is None else np.asarray(ids))


class _Best:
    """The k distinct pairs (i < j) with the largest violation seen so far."""

    def __init__(self, k: int) -> None:
        self.k, self.v = k, np.empty(0)
        self.i, self.j = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)

    @property
    def floor(self) -> float:
        """What a violation must exceed to enter: the k-th kept one, else the tie tolerance."""
        return float(self.v[-1]) if self.k and self.v.size == self.k else TIE_TOLERANCE

    def add(self, v: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        """Keep the k largest violations of the kept pairs and the pairs (i, j) with violations ``v``."""
        take = v > self.floor
        if not take.any():
            return
        v, i, j = (
            np.concatenate([self.v, v[take]]),
            np.concatenate([self.i, i[take]]),
            np.concatenate([self.j, j[take]]),
        )
        _, first = np.unique(i * (int(j.max()) + 1) + j, return_index=True)  # a pair drawn twice counts once
        keep = first[np.argsort(-v[first], kind="stable")[: self.k]]
        self.v, self.i, self.j = v[keep], i[keep], j[keep]

    def frame(self, e, s, r, alpha: float, ids: np.ndarray) -> pd.DataFrame:
        """The kept pairs, worst first: both ids, D, d and the violation D - d."""
        bi, bj = self.i, self.j
        d = np.sqrt(alpha * (e[bi] - e[bj]) ** 2 + (1 - alpha) * (s[bi] - s[bj]) ** 2)
        return pd.DataFrame({"id_i": ids[bi], "id_j": ids[bj], "D": np.abs(r[bi] - r[bj]), "d": d, "violation": self.v})


@dataclass(frozen=True)
class SampledWorstPairs:
    """The worst of ``n_pairs`` uniform pairs (``pairs``: as :func:`worst_pairs` gives them, each a real pair with
    its exact D - d). Worse pairs may be missed: ``miss_probability`` = (1 - 1/N)^m is the chance that a given pair
    (the worst of all, say) is never drawn among the m pairs, N = n(n - 1)/2; and with probability 95% the worst
    drawn pair is among the worst ``top_share`` = 1 - 0.05^(1/m) of all pairs ((1 - q)^m: no draw in the top q)."""

    pairs: pd.DataFrame
    n_pairs: int
    seed: int
    miss_probability: float
    top_share: float


def worst_pairs_sampled(
    effort,
    aggregate,
    risk,
    *,
    alpha: float,
    ids=None,
    k: int = 20,
    n_pairs: int = 2_000_000,
    seed: int = 0,
    backend: str = "auto",
) -> SampledWorstPairs:
    """The k worst pairs among ``n_pairs`` uniform pairs (the stream of ``seed`` that :func:`eaif_sampled` draws,
    ``fairness.pair_sampling``), for populations too large for :func:`worst_pairs`' exact search; O(n) memory
    plus one chunk, with the probability of missing a pair (:class:`SampledWorstPairs`). The pairs are searched
    chunk by chunk (``CHUNK`` pairs), each chunk against the k worst kept so far; ``backend`` as
    :func:`eaif_details`: numba draws each chunk in parallel runs that keep their k worst pairs (O(k) memory per
    run), NumPy draws a chunk's pairs as arrays; both give the same pairs and numbers, ties included.

    Examples
    --------
    Two subjects have one pair, drawn every time; a third pair of 3 subjects is missed by 100 draws with
    probability (2/3)^100:

    >>> found = worst_pairs_sampled([0, 0.5], [0, 0], [0, 1], alpha=1.0, n_pairs=100)
    >>> found.pairs["violation"].tolist(), found.miss_probability
    ([0.5], 0.0)
    >>> f"{worst_pairs_sampled([0, 1, 2], [0, 0, 0], [0, 0, 0], alpha=1.0, n_pairs=100).miss_probability:.3g}"
    '2.46e-18'
    """
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}")
    best, key = _Best(k), pair_key(seed)
    compiled = _use_numba(backend) and k > 0
    for first in range(0, n_pairs, CHUNK):
        count = min(CHUNK, n_pairs - first)
        if compiled:
            args = (float(alpha), np.int64(first), np.int64(count), key, np.int64(k), best.floor, np.int64(RUNS))
            values, rows, cols = _numba_sampled_worst(e, s, r, *args)
            best.add(values.ravel(), rows.ravel(), cols.ravel())
            continue
        i, j = draw_pairs(e.size, first, count, key)
        i, j = np.minimum(i, j), np.maximum(i, j)
        de, ds = e[i] - e[j], s[i] - s[j]
        best.add(np.abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds), i, j)
    all_pairs = e.size * (e.size - 1) / 2
    return SampledWorstPairs(
        best.frame(e, s, r, alpha, np.arange(e.size) if ids is None else np.asarray(ids)),
        n_pairs,
        seed,
        0.0 if all_pairs == 1 else float(np.exp(n_pairs * np.log1p(-1 / all_pairs))),
        float(-np.expm1(np.log(0.05) / n_pairs)),
    )


class LearnedMetric(Protocol):
    """What :func:`lipschitz_violations` needs of a metric learned from people
    (``fairness.human_metric.fit_metric``'s result): the positive semi-definite ``matrix`` M over the
    scaled feature columns, ``scaled(subjects)`` giving those columns as an n x d array, and ``draws``,
    the matrices of its rater-bootstrap refits (may be empty)."""

    @property
    def matrix(self) -> Any: ...  # an array or a DataFrame

    @property
    def draws(self) -> Sequence[np.ndarray]: ...

    def scaled(self, subjects: pd.DataFrame) -> np.ndarray: ...


@dataclass(frozen=True)
class LipschitzResult:
    """``statistic``: share of subject pairs with |s_i - s_j| > L d(x_i, x_j); ``confidence_interval``: the
    percentile interval of that share over the metric's bootstrap draws (None without draws);
    ``worst``: the pairs with the largest excess |s_i - s_j| - L d, for an auditor to act on."""

    statistic: float
    confidence_interval: tuple[float, float] | None
    n_pairs: int
    L: float
    worst: pd.DataFrame
    draws: np.ndarray


def _square_root(matrix: np.ndarray) -> np.ndarray:
    """A with A^T A = M for a symmetric positive semi-definite M (eigenvalues below 0 from rounding
    are set to 0), so that (x - y)^T M (x - y) = |A (x - y)|^2."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return (vectors * np.sqrt(np.clip(values, 0, None))).T


def _excess_blocks(z: np.ndarray, s: np.ndarray, matrix: np.ndarray, L: float):
    """For each block of rows i (pairs j > i): the row indices, the column indices and the excess
    |s_i - s_j| - L sqrt((z_i - z_j)^T M (z_i - z_j)). Memory: one block of BLOCK x n."""
    y = z @ _square_root(matrix).T
    norms = np.einsum("ij,ij->i", y, y)
    n = len(s)
    for start in range(0, n - 1, BLOCK):
        stop = min(start + BLOCK, n - 1)
        cols = np.arange(start + 1, n)
        squared = norms[start:stop, None] + norms[None, cols] - 2 * y[start:stop] @ y[cols].T
        excess = np.abs(s[start:stop, None] - s[None, cols]) - L * np.sqrt(np.clip(squared, 0, None))
        excess[cols[None, :] <= np.arange(start, stop)[:, None]] = -np.inf  # each pair once
        yield start, cols, excess


def _share(z: np.ndarray, s: np.ndarray, matrix: np.ndarray, L: float) -> float:
    n = len(s)
    violating = sum(int((excess > TIE_TOLERANCE).sum()) for _, _, excess in _excess_blocks(z, s, matrix, L))
    return violating / (n * (n - 1) / 2)


def require_subjects(needed: pd.Index, present: pd.Index, *, what: str, audit: str) -> None:
    """ValueError naming up to three subjects of ``needed`` missing from ``present``, or saying that ``audit``
    needs at least two subjects."""
    missing = needed.difference(present)
    if len(missing):
        raise ValueError(f"no {what} for {len(missing)} subject(s), e.g. {list(missing[:3])}")
    if len(needed) < 2:
        raise ValueError(f"{audit} needs at least two subjects")


def lipschitz_violations(
    scores: pd.Series,
    subjects: pd.DataFrame,
    metric: LearnedMetric,
    *,
    L: float = 1.0,
    k: int = 20,
    confidence_level: float = 0.95,
) -> LipschitzResult:
    """Individual fairness under a metric learned from people (Dwork et al. 2012's Lipschitz condition
    |f(x) - f(y)| <= L d(x, y), with d the human metric d(x, y) = sqrt((x - y)^T M (x - y))): the share of
    the n(n - 1)/2 pairs of ``subjects`` whose ``scores`` differ by more than L times their distance (a
    pair counts when the excess passes TIE_TOLERANCE, as EaIF's violations), the k worst pairs, and the
    share's percentile interval over the metric's bootstrap draws (the metric's uncertainty; the
    subjects and scores are fixed). ``scores`` is indexed by subject id, ``subjects`` by the same ids.
    Exact over all pairs, in blocks: O(n^2 d) time, O(n d) memory.

    Parameters
    ----------
    scores : pandas.Series
        The model's score of each subject, indexed by subject id.
    subjects : pandas.DataFrame
        The subjects' features, indexed by the same ids.
    metric : LearnedMetric
        The metric: ``fairness.human_metric.fit_metric``'s result, or anything with ``matrix``, ``draws``
        and ``scaled(subjects)``.
    L : float
        The Lipschitz constant, >= 0.
    k : int
        How many worst pairs to keep.
    confidence_level : float
        The level of the interval over the metric's draws.

    Returns
    -------
    LipschitzResult
        ``statistic`` (the share of violating pairs), ``confidence_interval``, ``n_pairs``, ``worst``.

    Examples
    --------
    The plain distance |x - y| on one feature: of the pairs (p, q), (p, r), (q, r), only (q, r)'s
    scores differ by more than their distance (1.5 > 1):

    >>> import pandas as pd
    >>> class Plain:  # M = [[1]] on the column x, no bootstrap draws
    ...     matrix, draws = [[1.0]], ()
    ...     def scaled(self, subjects):
    ...         return subjects[["x"]].to_numpy(float)
    >>> people = pd.DataFrame({"x": [0, 1, 2]}, index=["p", "q", "r"])
    >>> result = lipschitz_violations(pd.Series([0, 0.5, 2], index=people.index), people, Plain())
    >>> round(result.statistic, 4), result.worst[["id_i", "id_j", "excess"]].values.tolist()
    (0.3333, [['q', 'r', 0.5]])
    """
    if L < 0 or not np.isfinite(L):
        raise ValueError(f"L must be a finite number >= 0 (got {L})")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1) (got {confidence_level})")
    require_subjects(subjects.index, scores.index, what="score", audit="the Lipschitz audit")
    s = scores.reindex(subjects.index).to_numpy(dtype=float)
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite numbers")
    z = np.asarray(metric.scaled(subjects), dtype=float)
    matrix = np.asarray(metric.matrix, dtype=float)
    best_v, best_i, best_j = np.empty(0), np.empty(0, dtype=int), np.empty(0, dtype=int)
    violating = 0
    for start, cols, excess in _excess_blocks(z, s, matrix, L):
        violating += int((excess > TIE_TOLERANCE).sum())
        flat = excess.ravel()
        top = np.argpartition(flat, -min(k, flat.size))[-min(k, flat.size) :]
        best_v = np.concatenate([best_v, flat[top]])
        best_i = np.concatenate([best_i, start + top // cols.size])
        best_j = np.concatenate([best_j, cols[top % cols.size]])
        keep = np.argsort(best_v)[::-1][:k]
        best_v, best_i, best_j = best_v[keep], best_i[keep], best_j[keep]
    n_pairs = len(s) * (len(s) - 1) // 2
    mask = best_v > TIE_TOLERANCE
    bi, bj, ids = best_i[mask], best_j[mask], subjects.index.to_numpy()
    apart = z[bi] - z[bj]
    worst = pd.DataFrame(
        {
            "id_i": ids[bi],
            "id_j": ids[bj],
            "score_difference": np.abs(s[bi] - s[bj]),
            "distance": np.sqrt(np.clip(np.einsum("ij,jk,ik->i", apart, matrix, apart), 0, None)),
            "excess": best_v[mask],
        }
    )
    draws = np.array([_share(z, s, np.asarray(matrix, dtype=float), L) for matrix in metric.draws])
    tail = (1 - confidence_level) / 2
    interval = (float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail))) if draws.size else None
    return LipschitzResult(violating / n_pairs, interval, n_pairs, L, worst, draws)
