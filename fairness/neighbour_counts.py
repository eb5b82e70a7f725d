"""Negative decisions among the first s members of each neighbour list, for several s at once: situation
testing's n_c and n_t (Alvarez & Ruggieri, Eq. 8-9) for every k from one pass over each list.

One numba kernel walks each row of ids once, looking each member's decision up as it goes, and records the
running count at each size; rows run in parallel (numba ``prange``, the fork-safe threading layer of
:mod:`fairness.jit`). Without numba: the decisions gathered as a matrix and summed between the sizes
(``np.add.reduceat``)."""

from collections.abc import Sequence

import numpy as np

from fairness.jit import numba


def prefix_counts(ids: np.ndarray, decisions: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """(rows, len(sizes)) int32: per row of ``ids`` (row ids, nearest first), how many of its first s members
    have a True ``decisions[id]``, one column per s of ``sizes`` (increasing, at most the lists' length)."""
    ends = np.asarray(sizes, dtype=np.int64)
    if numba is None:  # pragma: no cover - numba is pinned
        starts = np.concatenate([[0], ends[:-1]])
        return np.add.reduceat(decisions[ids[:, : ends[-1]]], starts, axis=1, dtype=np.int32).cumsum(axis=1)
    out = np.empty((ids.shape[0], len(ends)), dtype=np.int32)
    _count(ids, decisions.view(np.uint8) if decisions.dtype == bool else decisions, ends, out)
    return out


if numba is not None:

    @numba.njit(parallel=True, cache=True)
    def _count(ids, decisions, sizes, out):  # pragma: no cover - compiled
        for row in numba.prange(ids.shape[0]):
            count = 0
            j = 0
            for s in range(sizes.size):
                while j < sizes[s]:
                    count += decisions[ids[row, j]]
                    j += 1
                out[row, s] = count
