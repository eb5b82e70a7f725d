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

from dataclasses import dataclass

import numpy as np
from scipy import stats

try:  # pragma: no cover - exercised by whichever branch is installed
    import numba
except ImportError:  # pragma: no cover
    numba = None

BLOCK = 2048
# D - d must exceed this for a pair to count as a violation (absolute; risks and distances are O(1),
# rounding errors O(1e-16)).
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class EaIFResult:
    eaif: float
    violation_share: float
    n_pairs: int
    alpha: float


@dataclass(frozen=True)
class EaIFEstimate:
    estimate: float
    ci: tuple[float, float]
    n_pairs: int
    seed: int
    violation_share: float


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


if numba is not None:

    @numba.njit(fastmath=True, cache=True, inline="always")
    def _row_sums(e, s, r, alpha, beta, i, tol):  # pragma: no cover - compiled
        # D - d > tol  <=>  D - tol > 0 and (D - tol)^2 > d^2: the square root only for violating pairs
        n = e.size
        ei, si, ri = e[i], s[i], r[i]
        total = 0.0
        violations = 0
        for j in range(i + 1, n):
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
            t1, v1 = _row_sums(e, s, r, alpha, beta, k, tol)
            total += t1
            violations += v1
            mirror = n - 1 - k
            if mirror != k:
                t2, v2 = _row_sums(e, s, r, alpha, beta, mirror, tol)
                total += t2
                violations += v2
        return total, violations


def eaif_details(effort, aggregate, risk, *, alpha: float, backend: str = "auto") -> EaIFResult:
    """Exact EaIF with the share of pairs whose output gap exceeds their input distance."""
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    use_numba = backend == "numba" or (backend == "auto" and numba is not None)
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError("backend must be 'auto', 'numba' or 'numpy'")
    if use_numba and numba is None:
        raise RuntimeError("numba is not installed; use backend='numpy'")
    if use_numba:
        total, violations = _numba_sums(e, s, r, float(alpha), TIE_TOLERANCE)
    else:
        total, violations = _numpy_sums(e, s, r, float(alpha))
    n_pairs = e.size * (e.size - 1) // 2
    return EaIFResult(1.0 - total / n_pairs, float(violations) / n_pairs, n_pairs, float(alpha))


def eaif(effort, aggregate, risk, *, alpha: float) -> float:
    """The exact EaIF of one model (Eq. 13)."""
    return eaif_details(effort, aggregate, risk, alpha=alpha).eaif


def eaif_sampled(
    effort, aggregate, risk, *, alpha: float, n_pairs: int = 1_000_000, seed: int = 0, level: float = 0.95
) -> EaIFEstimate:
    """EaIF estimated from ``n_pairs`` unordered pairs drawn uniformly with replacement, with a
    normal-approximation CI (mean of F +/- z * sd / sqrt(n_pairs)); for populations too large for
    the exact sum."""
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    rng = np.random.default_rng(seed)
    n = e.size
    i = rng.integers(0, n, size=n_pairs)
    j = (i + rng.integers(1, n, size=n_pairs)) % n  # j != i, uniform over the other subjects
    de, ds = e[i] - e[j], s[i] - s[j]
    excess = np.abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
    f = 1.0 - np.maximum(excess, 0.0)
    half = stats.norm.ppf(0.5 + level / 2) * f.std(ddof=1) / np.sqrt(n_pairs)
    mean = float(f.mean())
    return EaIFEstimate(mean, (mean - half, mean + half), n_pairs, seed, float((excess > TIE_TOLERANCE).mean()))


def subject_violations(effort, aggregate, risk, *, alpha: float, subjects=None) -> np.ndarray:
    """Per subject: the mean over its pairs with every other subject of max(0, D - d).
    ``subjects`` (indices) restricts the rows computed; O(len(subjects) x n) time, O(n) memory."""
    e, s, r = _inputs(effort, aggregate, risk, alpha)
    rows = np.arange(e.size) if subjects is None else np.asarray(subjects)
    out = np.empty(rows.size)
    for start in range(0, rows.size, 256):
        idx = rows[start : start + 256]
        de, ds = e[idx, None] - e[None, :], s[idx, None] - s[None, :]
        excess = np.maximum(np.abs(r[idx, None] - r[None, :]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds), 0.0)
        out[start : start + 256] = excess.sum(axis=1) / (e.size - 1)  # the self-pair contributes 0
    return out


def worst_pairs(effort, aggregate, risk, *, alpha: float, ids=None, k: int = 20):
    """The k pairs with the largest violation D - d > 0 (exact, blockwise), as a DataFrame with
    both ids, D, d and the violation, for an auditor to act on."""
    import pandas as pd

    e, s, r = _inputs(effort, aggregate, risk, alpha)
    ids = np.arange(e.size) if ids is None else np.asarray(ids)
    best_v = np.empty(0)
    best_i = np.empty(0, dtype=int)
    best_j = np.empty(0, dtype=int)
    n = e.size
    for start in range(0, n - 1, BLOCK):
        stop = min(start + BLOCK, n - 1)
        cols = np.arange(start + 1, n)
        de = e[start:stop, None] - e[None, cols]
        ds = s[start:stop, None] - s[None, cols]
        excess = np.abs(r[start:stop, None] - r[None, cols]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
        excess[cols[None, :] <= np.arange(start, stop)[:, None]] = -np.inf
        flat = excess.ravel()
        take = min(k, flat.size)
        top = np.argpartition(flat, -take)[-take:]
        best_v = np.concatenate([best_v, flat[top]])
        best_i = np.concatenate([best_i, start + top // cols.size])
        best_j = np.concatenate([best_j, cols[top % cols.size]])
        keep = np.argsort(best_v)[::-1][:k]
        best_v, best_i, best_j = best_v[keep], best_i[keep], best_j[keep]
    mask = best_v > TIE_TOLERANCE
    bi, bj = best_i[mask], best_j[mask]
    d = np.sqrt(alpha * (e[bi] - e[bj]) ** 2 + (1 - alpha) * (s[bi] - s[bj]) ** 2)
    return pd.DataFrame(
        {"id_i": ids[bi], "id_j": ids[bj], "D": np.abs(r[bi] - r[bj]), "d": d, "violation": best_v[mask]}
    )
