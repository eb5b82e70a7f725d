"""Uniform random pairs of subjects in constant memory, and intervals for the mean of terms in [0, 1] that a
paper can state.

**Pairs.** Pair t (t = 0 .. m-1) is drawn from a counter-based generator: u = the top 53 bits of
splitmix64(key + c) / 2^53 for the counters c = 2t and 2t + 1, ``key`` the seed's splitmix64 hash; i = floor(u1 n),
j = (i + 1 + floor(u2 (n - 1))) mod n. Every unordered pair {i, j}, i != j, has probability 2 / (n (n - 1)) (up
to the 53-bit grid: a relative error below n / 2^53, 1e-9 at n = 10^7). Pairs are drawn and summed in chunks of
``CHUNK`` (numba, in parallel, when installed; NumPy otherwise, with the same draws), so m = 10^9 pairs need no
more memory than m = 10^6. Steele (2003, "Splitmix"); Salmon et al. (2011) for counter-based generation.

**Bounds** for the mean mu of i.i.d. terms X_k in [0, 1] from m draws, two-sided at level 1 - delta; the
estimand is the exact mean over all pairs of these subjects (the sampling is the only randomness):

- ``hoeffding``: mean +/- sqrt(ln(2 / delta) / (2 m)) (Hoeffding 1963, Theorem 2): no assumption beyond
  [0, 1] and independence; m = 10^8 gives +/- 1.4e-4 at 95%.
- ``bernstein`` (the empirical Bernstein bound, Maurer & Pontil 2009, Theorem 4, each side at delta / 2):
  mean +/- (sqrt(2 V ln(4 / delta) / m) + 7 ln(4 / delta) / (3 (m - 1))), V the unbiased sample variance:
  also distribution-free, and tighter than Hoeffding's when the terms vary little.
- ``normal``: mean +/- z sqrt(V / m): the central limit theorem's approximation (not a bound).

**Stopping at a target half-width** (``sequential_sums``): the draws continue along the same stream and the
interval is checked only at m_j = m_0 2^j (j = 0, 1, ...), at level 1 - delta_j with delta_j = delta / 2^(j + 1).
The union bound (sum of delta_j <= delta) makes every checked interval hold at once with probability at least
1 - delta, so the interval where the rule stops (the first m_j whose half-width is <= the target, or the cap)
covers the mean at least at the level whatever the data (valid under optional stopping; the grid-and-union
construction of Maurer & Pontil 2009, Section 4, and of Mnih, Szepesvari & Audibert 2008, "Empirical Bernstein
stopping"). With ``bernstein`` it needs about 2 V ln(2^(j+2) / delta) / h^2 pairs for half-width h instead of
Hoeffding's ln(2 / delta) / (2 h^2): far fewer when the terms vary little.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from fairness.jit import numba
from fairness.sampling_options import BOUNDS

CHUNK = 1 << 20
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
ASSUMPTIONS = {
    "hoeffding": "Hoeffding's inequality: each pair's term lies in [0, 1] and the pairs are drawn independently and "
    "uniformly; no other assumption (a bound, at least the level for every sample size)",
    "bernstein": "the empirical Bernstein bound (Maurer & Pontil 2009): each pair's term lies in [0, 1] and the pairs "
    "are drawn independently and uniformly; no other assumption (a bound, at least the level for every sample size)",
    "normal": "the normal approximation (central limit theorem): close to the level for many pairs, not guaranteed",
}


@dataclass(frozen=True)
class BoundedMean:
    """The estimate of a mean of terms in [0, 1] with its interval (clipped to [0, 1]), the bound's kind and its
    assumptions, and ``half_width``: the bound's half-width before clipping."""

    estimate: float
    ci: tuple[float, float]
    bound: str
    assumptions: str
    half_width: float

    def confidence_interval(self) -> tuple[float, float]:
        return self.ci


def bounded_mean(
    total: float, total_sq: float, m: int, *, level: float = 0.95, bound: str = "bernstein"
) -> BoundedMean:
    """The interval of the module doc from the sum and the sum of squares of m terms in [0, 1], clipped to
    [0, 1]."""
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, got {bound!r}")
    if m < 2:
        raise ValueError("a bounded mean needs at least two draws")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    mean = total / m
    variance = max((total_sq - m * mean * mean) / (m - 1), 0.0)
    delta = 1 - level
    if bound == "hoeffding":
        half = np.sqrt(np.log(2 / delta) / (2 * m))
    elif bound == "bernstein":
        log_term = np.log(4 / delta)
        half = np.sqrt(2 * variance * log_term / m) + 7 * log_term / (3 * (m - 1))
    else:
        half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(variance / m)
    low, high = max(0.0, float(mean - half)), min(1.0, float(mean + half))
    return BoundedMean(float(mean), (low, high), bound, ASSUMPTIONS[bound], float(half))


@dataclass(frozen=True)
class SequentialSums:
    """The sums over the first ``m`` pairs of the stream where the stopping rule stopped, and the level
    1 - delta_j at which that interval is stated (module doc)."""

    total: float
    squares: float
    violations: float
    m: int
    level: float


def sequential_sums(
    sums,
    *,
    half_width: float,
    first: int,
    max_pairs: int,
    level: float = 0.95,
    bound: str = "bernstein",
) -> SequentialSums:
    """Draw on until the interval's half-width is <= ``half_width`` at a checked m_j = first 2^j (module doc),
    or the next m_j would pass ``max_pairs``. ``sums(start, count)`` returns (sum of F, of F^2, violations) over
    the pairs start .. start + count - 1 of one stream."""
    if not 0 < half_width < 0.5:
        raise ValueError(f"half_width must lie in (0, 0.5), got {half_width}")
    if first < 2 or max_pairs < first:
        raise ValueError(f"the first check needs at least two pairs and at most max_pairs ({max_pairs}), got {first}")
    delta = 1 - level
    total = squares = violations = 0.0
    drawn, target, j = 0, first, 0
    while True:
        add = sums(drawn, target - drawn)
        total, squares, violations = total + add[0], squares + add[1], violations + add[2]
        drawn, step_level = target, 1 - delta / 2 ** (j + 1)
        if bounded_mean(total, squares, drawn, level=step_level, bound=bound).half_width <= half_width or (
            2 * drawn > max_pairs
        ):
            return SequentialSums(total, squares, violations, drawn, step_level)
        target, j = 2 * drawn, j + 1


def pair_key(seed: int) -> np.uint64:
    """The generator's key: splitmix64 of the seed."""
    return _mix(np.array([np.uint64(seed % 2**64)], dtype=np.uint64))[0]


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function of the counters ``z`` (uint64, wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def draw_pairs(n: int, start: int, count: int, key: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``start`` .. ``start + count - 1`` of the stream of ``key`` over n subjects (module doc)."""
    counters = np.arange(2 * start, 2 * (start + count), dtype=np.uint64)
    with np.errstate(over="ignore"):
        u = (_mix(counters * GOLDEN + key) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    i = (u[0::2] * n).astype(np.int64)
    j = (i + 1 + (u[1::2] * (n - 1)).astype(np.int64)) % n
    return i, j


if numba is not None:

    @numba.njit(cache=True, inline="always")
    def _mix_one(z):  # pragma: no cover - compiled
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    @numba.njit(cache=True, inline="always")
    def draw_pair(t, key, n):  # pragma: no cover - compiled
        """Pair t of the stream of ``key`` over n subjects (module doc; :func:`draw_pairs`' draws), compiled."""
        golden = np.uint64(0x9E3779B97F4A7C15)
        u1 = np.float64(_mix_one(np.uint64(2 * t) * golden + key) >> np.uint64(11)) * 2.0**-53
        u2 = np.float64(_mix_one(np.uint64(2 * t + 1) * golden + key) >> np.uint64(11)) * 2.0**-53
        i = np.int64(u1 * n)
        return i, (i + 1 + np.int64(u2 * (n - 1))) % n

    @numba.njit(cache=True, parallel=True)
    def _eaif_pair_sums(e, s, r, alpha, start, m, key, chunk, tolerance):  # pragma: no cover - compiled
        """Per chunk: the sum of F, of F^2 and the count of violations over its pairs (module doc's draws),
        pairs start .. start + m - 1."""
        n = e.size
        chunks = (m + chunk - 1) // chunk
        out = np.zeros((chunks, 3))
        for c in numba.prange(chunks):
            first = start + c * chunk
            last = min(first + chunk, start + m)
            total = 0.0
            squares = 0.0
            violations = 0.0
            for t in range(first, last):
                i, j = draw_pair(t, key, n)
                de = e[i] - e[j]
                ds = s[i] - s[j]
                excess = abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
                f = 1.0
                if excess > 0:
                    f = 1.0 - excess
                if excess > tolerance:
                    violations += 1.0
                total += f
                squares += f * f
            out[c, 0] = total
            out[c, 1] = squares
            out[c, 2] = violations
        return out


def eaif_pair_sums(
    e: np.ndarray,
    s: np.ndarray,
    r: np.ndarray,
    alpha: float,
    m: int,
    seed: int,
    tolerance: float,
    backend: str = "auto",
    start: int = 0,
) -> tuple[float, float, float]:
    """(sum of F, sum of F^2, violations) over the sampled pairs ``start`` .. ``start + m - 1`` of the seed's
    stream (module doc), in chunks of ``CHUNK``; ``backend`` "numba", "numpy" or "auto" (numba when installed).
    Both backends draw the same pairs, whatever the thread count (each pair's draw depends only on its index)."""
    key = pair_key(seed)
    if backend == "numba" or (backend == "auto" and numba is not None):
        if numba is None:
            raise ValueError("the numba backend needs numba installed")
        sums = _eaif_pair_sums(
            e, s, r, float(alpha), np.int64(start), np.int64(m), key, np.int64(CHUNK), float(tolerance)
        )
        total, squares, violations = sums.sum(axis=0)
        return float(total), float(squares), float(violations)
    total = squares = violations = 0.0
    for first in range(start, start + m, CHUNK):
        i, j = draw_pairs(e.size, first, min(CHUNK, start + m - first), key)
        de, ds = e[i] - e[j], s[i] - s[j]
        excess = np.abs(r[i] - r[j]) - np.sqrt(alpha * de * de + (1 - alpha) * ds * ds)
        f = 1.0 - np.maximum(excess, 0.0)
        total += float(f.sum())
        squares += float((f * f).sum())
        violations += float((excess > tolerance).sum())
    return total, squares, violations
