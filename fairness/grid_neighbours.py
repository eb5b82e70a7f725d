"""The k nearest neighbours of situation testing on uniform grids, one numba kernel for all centres.

The distance is Eq. 4 of Alvarez & Ruggieri (*Counterfactual Situation Testing*): the mean over the features of
|x1 - x2| (continuous features, already scaled) and 1[x1 != x2] (categorical features, as integer codes),
computed as ``fairness.situation_testing._distances`` computes it (the same additions in the same order, so the
same floating-point value). Neighbours are ordered by (distance, larger id first).

The space is split by category combination (a part); each part's members are bucketed on a uniform grid over
the continuous features (about ``POINTS_PER_CELL`` members a cell). Per centre, parts are visited in order of
the number of categories in which they differ from the centre (``differ``), and in a part the grid cells in
rings of growing Chebyshev distance around the centre's cell. Members at most the current k-th distance go
to a buffer; after each ring the k-th distance is found again (a partition) and the buffer cut to it. A cell,
a ring's outside or a part is skipped once its lower bound on Eq. 4 (the category offset plus the Manhattan
gap to the cell or to the searched box, over the number of features) exceeds the k-th distance by more than
a rounding margin: so nothing at or below the k-th distance is missed, and ties at the k-th distance
are decided by the id as everywhere else. Exact for any data; fast for a few continuous features
(``fairness.situation_testing._knn`` uses it up to ``GRID_MAX_DIMS``). Centres run in parallel (numba
``prange``, the fork-safe threading layer of :mod:`fairness.jit`).
"""

import numpy as np

from fairness.jit import numba

POINTS_PER_CELL = 32  # members per grid cell on average (8 to 64 search equally fast at k = 251)
MAX_CELLS_PER_PART = 4_000_000
CHUNK = 256  # centres per parallel task (one buffer each)
SORT_BINS = 64  # per continuous feature: the coarse cells centres are ordered by


def grid_knn(centers, center_codes, space, space_codes, ids, k, of_center, of_space, differ) -> np.ndarray:
    """The ``k`` nearest ``ids`` of each centre, nearest first (equal distances: larger id first).

    ``centers`` (q, d) and ``space`` (m, d): scaled continuous features (d >= 1); ``center_codes`` (q, c) and
    ``space_codes`` (m, c): integer category codes (equal codes, equal categories); ``of_center``,
    ``of_space``: each one's category combination, and ``differ`` (combinations of centres x of the space):
    the number of categories in which they differ (``fairness.situation_testing._combinations``).
    """
    if numba is None:  # pragma: no cover - numba is pinned
        raise RuntimeError("the grid search needs numba")
    k = min(k, len(ids))
    cell, lo, step, shape, base, starts = _cells(space, of_space)
    order = np.argsort(cell, kind="stable")
    parts = np.argsort(differ, axis=1, kind="stable")
    scale = float(max(np.abs(space).max(initial=0.0), np.abs(centers).max(initial=0.0)))
    margin = 1e-9 * (1.0 + scale) * space.shape[1]
    # centres in (category combination, coarse cell) order: neighbouring centres read the same cells
    span = np.ptp(space, axis=0)
    coarse = np.floor((centers - space.min(axis=0)) * (SORT_BINS / np.where(span > 0, span, 1.0)))
    near = np.lexsort((*coarse.T[::-1], of_center))
    out = np.empty((len(centers), k), dtype=ids.dtype)  # int32 ids (n < 2^31): half the lists' memory
    _search(
        np.ascontiguousarray(centers[near], dtype=np.float64),
        np.ascontiguousarray(center_codes[near], dtype=np.int64),
        np.ascontiguousarray(space[order], dtype=np.float64),
        np.ascontiguousarray(space_codes[order], dtype=np.int64),
        np.ascontiguousarray(ids[order]),
        np.ascontiguousarray(of_center[near], dtype=np.int64),
        near.astype(np.int64),
        parts.astype(np.int64),
        differ.astype(np.float64),
        lo,
        step,
        shape,
        base,
        starts,
        int(k),
        float(max(space.shape[1] + space_codes.shape[1], 1)),
        margin,
        out,
    )
    return out


def _cells(space, of_space):
    """Each member's global cell number and the grids: per part its lower corner, cell widths and cells per
    dimension, its first cell's number (``base``), and where each cell's members start in cell order."""
    n_parts = int(of_space.max(initial=-1)) + 1
    d = space.shape[1]
    lo, step = np.zeros((n_parts, d)), np.ones((n_parts, d))
    shape = np.ones((n_parts, d), dtype=np.int64)
    base = np.zeros(n_parts + 1, dtype=np.int64)
    cell = np.zeros(len(space), dtype=np.int64)
    for g in range(n_parts):
        members = np.flatnonzero(of_space == g)
        points = space[members]
        lo[g], span = points.min(axis=0), np.ptp(points, axis=0)
        cells = min(max(len(members) / POINTS_PER_CELL, 1.0), MAX_CELLS_PER_PART)
        shape[g] = np.where(span > 0, max(int(cells ** (1 / d)), 1), 1)
        step[g] = np.where(span > 0, span / shape[g], 1.0)
        index = np.clip(((points - lo[g]) / step[g]).astype(np.int64), 0, shape[g] - 1)
        base[g + 1] = base[g] + int(np.prod(shape[g]))
        cell[members] = base[g] + np.ravel_multi_index(tuple(index.T), tuple(shape[g]))
    starts = np.searchsorted(np.sort(cell), np.arange(base[-1] + 1)).astype(np.int64)
    return cell, lo, step, shape, base, starts


if numba is not None:

    @numba.njit(cache=True)
    def _after(d1, i1, d2, i2):  # pragma: no cover - compiled
        """Whether (distance d1, id i1) comes after (d2, i2) in the order (distance, larger id first)."""
        return d1 > d2 or (d1 == d2 and i1 < i2)

    @numba.njit(cache=True)
    def _sift_down(heap_d, heap_i, size):  # pragma: no cover - compiled
        """Restore the heap (the last in order on top) after its top was replaced; ``size`` entries."""
        d, i = heap_d[0], heap_i[0]
        pos = 0
        child = 1
        while child < size:
            if child + 1 < size and _after(heap_d[child + 1], heap_i[child + 1], heap_d[child], heap_i[child]):
                child += 1
            if not _after(heap_d[child], heap_i[child], d, i):
                break
            heap_d[pos], heap_i[pos] = heap_d[child], heap_i[child]
            pos, child = child, 2 * child + 1
        heap_d[pos], heap_i[pos] = d, i

    @numba.njit(cache=True)
    def _offer(heap_d, heap_i, size, k, d, i):  # pragma: no cover - compiled
        """Keep (d, i) if it is among the k first so far; returns the heap's new size (at most k)."""
        if size < k:
            pos = size
            while pos > 0:
                parent = (pos - 1) // 2
                if not _after(d, i, heap_d[parent], heap_i[parent]):
                    break
                heap_d[pos], heap_i[pos] = heap_d[parent], heap_i[parent]
                pos = parent
            heap_d[pos], heap_i[pos] = d, i
            return size + 1
        if _after(heap_d[0], heap_i[0], d, i):
            heap_d[0], heap_i[0] = d, i
            _sift_down(heap_d, heap_i, k)
        return size

    @numba.njit(cache=True)
    def _scan_cell(q, qc, space, codes, start, stop, width, kth, buf_d, buf_p, count):  # pragma: no cover
        """Append the cell's members at Eq. 4 distance <= kth to the buffer; returns its new length."""
        for p in range(start, stop):
            total = 0.0
            for j in range(q.size):
                total += abs(q[j] - space[p, j])
            for j in range(qc.size):
                if qc[j] != codes[p, j]:
                    total += 1.0
            dist = total / width
            if dist <= kth:
                buf_d[count] = dist
                buf_p[count] = p
                count += 1
        return count

    @numba.njit(cache=True)
    def _shrink(buf_d, buf_p, count, k):  # pragma: no cover - compiled
        """The k-th smallest distance in the buffer (inf below k entries) and the buffer's length once the
        entries beyond it are dropped (ties at it are kept: the id decides among them). Hoare's selection
        (quickselect) moves the k smallest to the front, in place (``np.partition`` gives the same value but
        costs seconds of compilation per process without a cache)."""
        if count < k:
            return np.inf, count
        lo, hi, want = 0, count - 1, k - 1
        while lo < hi:
            pivot = buf_d[(lo + hi) // 2]
            i, j = lo, hi
            while i <= j:
                while buf_d[i] < pivot:
                    i += 1
                while buf_d[j] > pivot:
                    j -= 1
                if i <= j:
                    buf_d[i], buf_d[j] = buf_d[j], buf_d[i]
                    buf_p[i], buf_p[j] = buf_p[j], buf_p[i]
                    i += 1
                    j -= 1
            if want <= j:
                hi = j
            elif want >= i:
                lo = i
            else:
                break
        kth = buf_d[want]
        kept = k
        for i in range(k, count):  # the rest are >= kth: keep the ties
            if buf_d[i] == kth:
                buf_d[kept] = buf_d[i]
                buf_p[kept] = buf_p[i]
                kept += 1
        return kth, kept

    @numba.njit(cache=True)
    def _search_part(
        q, qc, space, codes, lo, step, shape, base, starts, offset, width, margin, k, kth, buf_d, buf_p, count
    ):  # pragma: no cover - compiled
        """Visit one part's cells ring by ring around q's cell until the rest of the part is out of reach;
        returns (k-th distance so far, buffer length)."""
        d = q.size
        home = np.empty(d, dtype=np.int64)
        reach = 0
        for j in range(d):
            home[j] = min(max(int(np.floor((q[j] - lo[j]) / step[j])), 0), shape[j] - 1)
            reach = max(reach, home[j], shape[j] - 1 - home[j])
        cell = np.empty(d, dtype=np.int64)
        for r in range(reach + 1):
            # every cell of the box home +/- r (within the grid) at Chebyshev distance r, by a mixed-radix counter
            for j in range(d):
                cell[j] = max(home[j] - r, 0)
            while True:
                ring = False
                gap = 0.0
                flat = 0
                for j in range(d):
                    ring |= abs(cell[j] - home[j]) == r
                    left = lo[j] + cell[j] * step[j]
                    if q[j] < left:
                        gap += left - q[j]
                    elif q[j] > left + step[j]:
                        gap += q[j] - left - step[j]
                    flat = flat * shape[j] + cell[j]
                if ring and (offset + gap) / width <= kth + margin:
                    g = base + flat
                    count = _scan_cell(q, qc, space, codes, starts[g], starts[g + 1], width, kth, buf_d, buf_p, count)
                j = d - 1
                while j >= 0:
                    if cell[j] < min(home[j] + r, shape[j] - 1):
                        cell[j] += 1
                        break
                    cell[j] = max(home[j] - r, 0)
                    j -= 1
                if j < 0:
                    break
            kth, count = _shrink(buf_d, buf_p, count, k)
            outside = np.inf  # the nearest member outside the box is at least this far
            for j in range(d):
                if home[j] - r > 0:
                    outside = min(outside, q[j] - (lo[j] + (home[j] - r) * step[j]))
                if home[j] + r < shape[j] - 1:
                    outside = min(outside, lo[j] + (home[j] + r + 1) * step[j] - q[j])
            if (offset + max(outside, 0.0)) / width > kth + margin:
                break
        return kth, count

    @numba.njit(cache=True)
    def _first_k(buf_d, buf_p, count, ids, k, heap_d, heap_i, out):  # pragma: no cover - compiled
        """The ids of the buffer's k first by (distance, larger id first) into ``out``: through a heap of k
        (the last kept on top), then heapsort."""
        size = np.int64(0)  # not the literal 0: one compiled signature
        for e in range(count):
            size = _offer(heap_d, heap_i, size, k, buf_d[e], ids[buf_p[e]])
        for end in range(size - 1, 0, -1):  # the last in order moves to the end, and so on
            heap_d[0], heap_d[end] = heap_d[end], heap_d[0]
            heap_i[0], heap_i[end] = heap_i[end], heap_i[0]
            _sift_down(heap_d, heap_i, end)
        for i in range(k):  # element by element: a slice assignment costs seconds of compilation
            out[i] = heap_i[i]

    @numba.njit(parallel=True, cache=True)
    def _search(
        centers,
        center_codes,
        space,
        codes,
        ids,
        of_center,
        rows,
        parts,
        differ,
        lo,
        step,
        shape,
        base,
        starts,
        k,
        width,
        margin,
        out,
    ):  # pragma: no cover - compiled
        """The k nearest ids of centre c into row ``rows[c]`` of ``out``."""
        n = centers.shape[0]
        for chunk in numba.prange((n + CHUNK - 1) // CHUNK):
            buf_d = np.empty(space.shape[0])
            buf_p = np.empty(space.shape[0], dtype=np.int64)
            heap_d = np.empty(k)
            heap_i = np.empty(k, dtype=ids.dtype)
            for c in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
                kth, count = np.inf, np.int64(0)
                combination = of_center[c]
                for g in parts[combination]:
                    offset = differ[combination, g]
                    if offset / width > kth + margin:
                        break
                    kth, count = _search_part(
                        centers[c], center_codes[c], space, codes, lo[g], step[g], shape[g], base[g], starts,
                        offset, width, margin, k, kth, buf_d, buf_p, count,
                    )  # fmt: skip
                _first_k(buf_d, buf_p, count, ids, k, heap_d, heap_i, out[rows[c]])
