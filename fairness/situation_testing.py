"""k-NN situation testing (ST), counterfactual situation testing (CST) and counterfactual fairness
(CF), as defined in Alvarez & Ruggieri, *Counterfactual Situation Testing* (Sections 4.1-4.5).

For each complainant c (every individual with the protected value, whatever their outcome):

* distance (Eq. 3-5): the mean over the features (the protected attribute excluded) of the
  per-feature distance, |x1 - x2| / (max(X_i) - min(X_i)) over the factual data for continuous
  features (normalised Manhattan) and the overlap 1[x1 != x2] for categorical ones (Gower);
* control group k-ctr: the k nearest protected individuals to x_c (c itself excluded);
* test group k-tst: the k nearest non-protected individuals to x_c (ST) or to the counterfactual
  x_c^CF (CST), the counterfactual coming from a structural causal model under do(A := non-protected);
* p_c, p_t: shares of negative outcomes; delta_p = p_c - p_t (Eq. 8-9);
* one-sided Wald interval [delta_p - w, +inf), w = z_(1-alpha) sqrt((p_c (1-p_c) + p_t (1-p_t)) / k) (Eq. 10)
  (per-group sizes k_c, k_t in the variance, which differ only when centres are included);
* negative discrimination: delta_p > tau; significant when tau is outside the interval
  (delta_p - w > tau). Positive discrimination mirrors it: delta_p < tau and delta_p + w < tau.
* the exact test beside the paper's rule: the Wald rule's size does not hold at the usual k (an interval of
  width 0 whenever both shares are 0 or 1, and too narrow near them), so each complainant also gets the
  one-sided Fisher exact test of its 2x2 table (:func:`exact_pvalue`; H0: no difference in positive-decision
  rates between the complainant's protected and unprotected neighbourhoods), ``<method>_pvalue``, and
  ``<method>_sig_exact`` = flagged and p < alpha. The complainants of one method and k are one family
  ("is anyone discriminated against, by this method at this k?"), adjusted within it by ``multiple_testing``
  (``analysis.families``: Holm by default), ``<method>_pvalue_adjusted``, and ``<method>_sig_adjusted`` =
  flagged and adjusted p < alpha (CF_sig_exact, CF_sig_adjusted: CF and CSTwi's). The exact test's null is
  no difference whatever tau: with tau != 0 its columns count the complainants flagged (delta_p beyond tau)
  whose neighbourhoods differ significantly. The ``_sig`` columns are the paper's Wald rule (its published
  counts).
* CST "with centres" (Remark 4.2) counts c in the control group and x_c^CF (with its counterfactual
  outcome) in the test group, k + 1 each; every other test-group member keeps its factual outcome
  (an intervention may also change non-protected rows, e.g. white women under do(Male, White)).
  CF flags c when its factual outcome is negative and its counterfactual outcome positive
  (positive discrimination: the reverse).
Ties at equal distance keep the individual with the larger row index; the search is exact (k-d trees
propose candidates, Eq. 4 and the tie rule decide; see :func:`_knn`). Multiple discrimination
tests each attribute at alpha / m (Bonferroni); intersectional discrimination uses one combined
attribute (see :func:`intersectional_attribute`).

``mode``: "paper" (default) is the definition above, the counterfactual measured on the factual
scale. "reference" reproduces the authors' published counts exactly: continuous features are
z-scored, the factual and the counterfactual data each with its own mean and SD (population SD),
the per-feature distance is |z1 - z2| without range normalisation, z_(1-alpha) is rounded to three
decimals, and delta_p and the interval bound (not clipped at 0) are rounded to three decimals before
comparison with tau; the control group is the k + 1 nearest protected individuals less the
complainant (k + 1 remain when ties at distance 0 kept it out), where paper mode removes the
complainant before the k nearest are taken.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import stats

from analysis.families import adjust_tied
from fairness.grid_neighbours import grid_knn
from fairness.jit import numba
from fairness.neighbour_counts import prefix_counts

METHODS = ("ST", "CSTwo", "CSTwi")
MAX_BLOCK_CELLS = 4_000_000
TREE_MIN_PAIRS = 25_000_000  # all pairs below this many centre x member pairs (faster there)
TREE_MAX_PARTITIONS = 1_000  # centre x space category combinations the trees loop over
GRID_MAX_DIMS = 3  # continuous features up to which the grid search beats the k-d trees


@dataclass(frozen=True)
class SituationTestingResult:
    individuals: pd.DataFrame  # one row per complainant and k
    counts: pd.DataFrame  # one row per k: ST, CSTwo, CSTwi, CF and *_sig, like the authors' tables
    # (method, k) -> {"control": ids, "test": ids}, one row per complainant, nearest first; -1 fills
    # the place of a complainant the authors' rule dropped from its control group (reference mode)
    neighbours: dict = field(repr=False)
    complainants: np.ndarray = field(repr=False)
    adjustment: str = "holm"  # the multiple-testing adjustment within each family (holm, bh, none)
    methods: tuple[str, ...] = ()  # the methods tested: one family per method and k

    @cached_property
    def multiple_testing(self) -> dict:
        """results.json's ``multiple_testing``: {"method": ..., "families": {"<method>/k=<k>": [test ids
        "<method>/k=<k>/<complainant>"]}}, built when first asked for (6.75 million ids at a million rows)."""
        labels = self.complainants.astype(str).astype(object)
        ks = self.counts["k"].tolist()
        families = {f"{m}/k={k}": (f"{m}/k={k}/" + labels).tolist() for k in ks for m in self.methods}
        return {"method": self.adjustment, "families": families}

    def groups_of(self, complainant, k: int, method: str = "CSTwo") -> dict:
        """Row ids of the complainant's control and test neighbours for one k and method."""
        pos = int(np.flatnonzero(self.complainants == complainant)[0])
        found = self.neighbours[(method, k)]
        return {group: found[group][pos][found[group][pos] >= 0] for group in ("control", "test")}


class SituationTestingError(ValueError):
    pass


def intersectional_attribute(data: pd.DataFrame, columns: Sequence[str], protected: Sequence) -> pd.Series:
    """1 where every column has its protected value (e.g. female and non-white), else 0."""
    mask = np.ones(len(data), dtype=bool)
    for column, value in zip(columns, protected, strict=True):
        mask &= data[column].to_numpy() == value
    return pd.Series(mask.astype(int), index=data.index, name="+".join(columns))


def _prepare(data, counterfactuals, features, protected, target, mode, cf_target=True):
    """Continuous features scaled so that |difference| is the per-feature distance, and categories."""
    missing = [c for c in [protected, target, *features] if c not in data.columns]
    if missing:
        raise SituationTestingError(f"missing column(s) {missing}; available: {list(data.columns)}")
    if counterfactuals is not None:
        cf_columns = [target, *features] if cf_target else list(features)
        missing = [c for c in cf_columns if c not in counterfactuals.columns]
        if missing:
            raise SituationTestingError(f"counterfactual data lacks column(s) {missing}")
        if len(counterfactuals) != len(data):
            raise SituationTestingError("counterfactual data must have one row per row of the data, in the same order")
    _require_values(data, [*features, target], "")
    if counterfactuals is not None:
        _require_values(counterfactuals, cf_columns, "counterfactual data: ")
    continuous = [c for c in features if pd.api.types.is_numeric_dtype(data[c])]
    categorical = [c for c in features if c not in continuous]
    factual = data[continuous].to_numpy(float)
    cf = None if counterfactuals is None else counterfactuals[continuous].to_numpy(float)
    if mode == "reference":
        x = _zscore(factual, factual)
        x_cf = None if cf is None else _zscore(cf, cf)
    else:
        span = np.ptp(factual, axis=0)
        span = np.where(span > 0, span, 1.0)
        x = factual / span
        x_cf = None if cf is None else cf / span
    cats = data[categorical].astype(str).to_numpy() if categorical else np.empty((len(data), 0), dtype=object)
    cats_cf = (
        counterfactuals[categorical].astype(str).to_numpy() if categorical and counterfactuals is not None else cats
    )
    return x, x_cf, cats, cats_cf


def _require_values(frame: pd.DataFrame, columns, prefix: str) -> None:
    """Refuse missing values in features and the decision, and infinite ones in numeric columns:
    distances and shares of negative outcomes are undefined for them. Rows count from 0."""
    for column in dict.fromkeys(columns):
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            bad = ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
        else:
            bad = values.isna().to_numpy()
        if bad.any():
            raise SituationTestingError(
                f"{prefix}column {column!r} has {int(bad.sum())} missing or infinite values "
                f"(first at row {int(np.flatnonzero(bad)[0])})"
            )


def _require_binary(data, counterfactuals, target, negative_outcome) -> None:
    """The decision must be binary (in the data and the counterfactual data together) and the
    negative value must occur in it: shares of negative outcomes are meaningless otherwise."""
    values = pd.unique(data[target])
    if counterfactuals is not None:
        values = pd.unique(np.concatenate([values, pd.unique(counterfactuals[target])]))
    values = np.asarray(values).tolist()  # Python scalars for the messages
    if len(values) > 2:
        shown = sorted(map(repr, values))[:6] + (["..."] if len(values) > 6 else [])
        raise SituationTestingError(
            f"decision {target!r} is not binary: {len(values)} distinct values ({', '.join(shown)}); "
            "situation testing compares shares of one negative decision"
        )
    if not (data[target] == negative_outcome).any():
        raise SituationTestingError(
            f"the negative decision {negative_outcome!r} does not occur in {target!r} "
            f"(values: {', '.join(sorted(map(repr, values)))})"
        )


def _zscore(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    sd = reference.std(axis=0)
    return (values - reference.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _distances(centers, center_codes, space, space_codes):
    """Mean per-feature distance (Eq. 4) of every centre (rows) to every space member (columns)."""
    total = np.zeros((centers.shape[0], space.shape[0]))
    term = np.empty_like(total)  # one buffer for every feature's |difference| (no temporary per feature)
    for j in range(space.shape[1]):
        np.subtract(centers[:, j, None], space[None, :, j], out=term)
        total += np.abs(term, out=term)
    for j in range(space_codes.shape[1]):
        total += center_codes[:, j, None] != space_codes[None, :, j]
    return total / max(space.shape[1] + space_codes.shape[1], 1)


def _nearest(dist: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """The k nearest ids per row, nearest first; equal distances: larger id first.

    Columns are put in descending-id order once. Per row, every column closer than the k-th
    distance is kept, and of the columns at exactly the k-th distance the first ones (largest ids)
    fill the remaining places; the k kept columns are then stably sorted by distance. All steps are
    vectorised passes (partition, comparisons, each tie's rank in the rows with more ties than places),
    with no full sort of the row.
    """
    k = min(k, dist.shape[1])
    by_id = np.argsort(-ids, kind="stable")
    d = dist[:, by_id]
    if k == d.shape[1]:
        return ids[by_id][np.argsort(d, axis=1, kind="stable")]
    kth = np.partition(d, k - 1, axis=1)[:, k - 1 : k]
    closer = d < kth
    at_kth = d == kth
    need = k - closer.sum(axis=1)
    keep = closer | at_kth
    excess = np.flatnonzero(at_kth.sum(axis=1) > need)  # rows with more ties at the k-th than places left
    if excess.size:  # of their ties (row-major: each row's in column order) the first ``need`` stay
        row, column = np.nonzero(at_kth[excess])
        counts = np.bincount(row, minlength=excess.size)
        rank = np.arange(row.size) - (np.cumsum(counts) - counts)[row]
        first = rank < need[excess][row]
        keep[excess] = closer[excess]
        keep[excess[row[first]], column[first]] = True
    pos = np.nonzero(keep)[1].reshape(d.shape[0], k)
    order = np.take_along_axis(pos, np.argsort(np.take_along_axis(d, pos, axis=1), axis=1, kind="stable"), axis=1)
    return ids[by_id][order]


def _knn(centers, center_cats, space, space_cats, ids, k):
    """k nearest ids of each centre (nearest first; equal distances: larger id first).

    Categories become integer codes (equal codes, equal categories). Centres with equal features
    have equal lists (a list does not depend on the centre's id), so each distinct centre is searched
    once. When the all-pairs work is large, there are continuous features and few category combinations:
    uniform grids searched by one numba kernel (:func:`fairness.grid_neighbours.grid_knn`) for up to
    GRID_MAX_DIMS continuous features, k-d trees (:func:`_knn_tree`) for more; otherwise all pairs in
    blocks (:func:`_knn_all_pairs`). All give the same lists: grids and trees only bound the search,
    and Eq. 4 with the tie rule decides."""
    n = len(centers)
    codes = [pd.factorize(np.concatenate([center_cats[:, j], space_cats[:, j]]))[0] for j in range(space_cats.shape[1])]
    center_codes = np.column_stack([c[:n] for c in codes]) if codes else np.empty((n, 0), dtype=np.intp)
    space_codes = np.column_stack([c[n:] for c in codes]) if codes else np.empty((len(space), 0), dtype=np.intp)
    first, inverse = _distinct(*(pd.factorize(column)[0] for column in np.hstack([centers, center_codes]).T))
    if len(first) == n:  # no centre repeated: searched in their order (no copy of the lists to reorder them)
        first, inverse = np.arange(n), None
    args = (centers[first], center_codes[first], space, space_codes, ids, k)
    combinations = _combinations(center_codes[first], space_codes)
    if len(first) * len(ids) <= TREE_MIN_PAIRS or space.shape[1] == 0 or combinations[2].size > TREE_MAX_PARTITIONS:
        found = _knn_all_pairs(*args)
    elif numba is not None and space.shape[1] <= GRID_MAX_DIMS:
        found = grid_knn(*args, *combinations)
    else:
        found = _knn_tree(*args, combinations)
    return found if inverse is None else found[inverse.ravel()]


def _knn_all_pairs(centers, center_codes, space, space_codes, ids, k):
    """k nearest ids of each centre from all pairs, in blocks of rows (memory: one block of distances)."""
    out = np.empty((centers.shape[0], min(k, len(ids))), dtype=ids.dtype)
    block = max(1, MAX_BLOCK_CELLS // max(len(ids), 1))
    for start in range(0, centers.shape[0], block):
        sl = slice(start, start + block)
        out[sl] = _nearest(_distances(centers[sl], center_codes[sl], space, space_codes), ids, k)
    return out


def _combinations(center_codes, space_codes):
    """The category combination of each centre and of each space member (integer labels), and the
    number of categories in which each centre combination differs from each space combination."""
    if space_codes.shape[1] == 0:
        return np.zeros(len(center_codes), dtype=np.intp), np.zeros(len(space_codes), dtype=np.intp), np.zeros((1, 1))
    center_first, of_center = _distinct(*center_codes.T)  # hashed, not sorted (np.unique's rows: 0.3 s a million)
    space_first, of_space = _distinct(*space_codes.T)
    differ = (center_codes[center_first][:, None, :] != space_codes[space_first][None, :, :]).sum(axis=2)
    return of_center, of_space, differ.astype(float)


def _knn_tree(centers, center_codes, space, space_codes, ids, k, combinations):
    """k nearest ids of each centre with k-d trees (scikit-learn, Manhattan metric), exactly as
    :func:`_knn_all_pairs` finds them.

    The space is split by category combination, one tree over the continuous features per part; to
    a centre, a part's members lie at their Manhattan distance plus the number of categories in
    which the part differs from the centre (an estimate of the Eq. 4 sum, before the division by the
    number of features, up to rounding). Per centre, the parts nearest in categories that together
    hold k + 1 members are queried for k + 1 each; R = the k-th smallest estimate, with a margin
    (R (1 + 1e-9) + 1e-9) for rounding differences from Eq. 4's summation order. When the (k + 1)-th
    estimate is beyond R and no part left out is within R, the k found are all the members that can
    be among the k nearest; otherwise (ties at the k-th distance) a radius query at R in every part
    within R returns them. :func:`_nearest_candidates` recomputes their Eq. 4 distances as
    :func:`_distances` does and orders them by (distance, larger id)."""
    from sklearn.neighbors import KDTree  # here: scikit-learn costs every process importing this module 0.3 CPU-s

    k = min(k, len(ids))
    of_center, of_space, differ = combinations
    parts = [np.flatnonzero(of_space == g) for g in range(differ.shape[1])]
    trees = [KDTree(space[part], metric="manhattan") for part in parts]
    sizes = np.array([len(part) for part in parts])
    out = np.empty((len(centers), k), dtype=ids.dtype)
    for c, offsets in enumerate(differ):
        order = np.argsort(offsets, kind="stable")
        bounding = order[: int(np.searchsorted(np.cumsum(sizes[order]), k + 1)) + 1]
        beyond = offsets[order[len(bounding) :]].min(initial=np.inf)
        members = np.flatnonzero(of_center == c)
        block = max(1, MAX_BLOCK_CELLS // ((k + 1) * len(bounding)))
        for start in range(0, len(members), block):
            rows = members[start : start + block]
            query = centers[rows]
            found = [trees[g].query(query, k=min(k + 1, sizes[g])) for g in bounding]
            near = np.hstack([dist + offsets[g] for (dist, _), g in zip(found, bounding, strict=True)])
            pos = np.hstack([parts[g][i] for (_, i), g in zip(found, bounding, strict=True)])
            if len(bounding) > 1:
                by_near = np.argsort(near, axis=1, kind="stable")
                near, pos = np.take_along_axis(near, by_near, axis=1), np.take_along_axis(pos, by_near, axis=1)
            reach = near[:, k - 1] * (1 + 1e-9) + 1e-9
            clear = reach < beyond
            if near.shape[1] > k:
                clear &= near[:, k] > reach
            which, where = [np.repeat(np.flatnonzero(clear), k)], [pos[clear, :k].ravel()]
            tied = np.flatnonzero(~clear)
            for g in order[offsets[order] <= reach[tied].max(initial=-1)]:
                within = tied[reach[tied] >= offsets[g]]
                hits = trees[g].query_radius(query[within], reach[within] - offsets[g])
                which.append(np.repeat(within, np.fromiter(map(len, hits), dtype=np.intp, count=len(hits))))
                where.append(parts[g][np.concatenate(hits)])
            out[rows] = _nearest_candidates(
                query, center_codes[rows], space, space_codes, ids, np.concatenate(which), np.concatenate(where), k
            )
    return out


def _nearest_candidates(centers, center_codes, space, space_codes, ids, which, where, k):
    """The k nearest ids per centre among candidate pairs (centre ``which``, space member ``where``;
    per centre a superset of its k nearest): Eq. 4 distances, ordered by (distance, larger id).
    Centres are taken in order of candidate count, in padded blocks of at most MAX_BLOCK_CELLS. A
    centre whose candidates come with strictly increasing distances keeps their order (no ties)."""
    grouped = np.argsort(which, kind="stable")
    which, where = which[grouped], where[grouped]
    lengths = np.bincount(which, minlength=len(centers))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rank = np.argsort(lengths, kind="stable")
    width = max(space.shape[1] + space_codes.shape[1], 1)
    out = np.empty((len(centers), k), dtype=ids.dtype)
    done = 0
    while done < len(rank):
        too_big = np.arange(1, len(rank) - done + 1) * lengths[rank[done:]] > MAX_BLOCK_CELLS
        rows = rank[done : done + (max(1, int(np.argmax(too_big))) if too_big.any() else len(rank))]
        done += len(rows)
        span = lengths[rows[-1]]
        valid = np.arange(span) < lengths[rows, None]
        pos = where[np.where(valid, starts[rows, None] + np.arange(span), 0)]
        total = np.zeros(pos.shape)
        for j in range(space.shape[1]):
            total += np.abs(centers[rows, j, None] - space[pos, j])
        for j in range(space_codes.shape[1]):
            total += center_codes[rows, j, None] != space_codes[pos, j]
        dist = np.where(valid, total / width, np.inf)
        ordered = ((dist[:, 1:] > dist[:, :-1]) | ~valid[:, 1:]).all(axis=1)
        out[rows[ordered]] = ids[pos[ordered, :k]]
        if ordered.all():
            continue
        pos, valid, dist, rows = pos[~ordered], valid[~ordered], dist[~ordered], rows[~ordered]
        by_id = np.argsort(np.where(valid, -ids[pos], np.iinfo(ids.dtype).max), axis=1, kind="stable")
        pos, dist = np.take_along_axis(pos, by_id, axis=1), np.take_along_axis(dist, by_id, axis=1)
        out[rows] = ids[np.take_along_axis(pos, np.argsort(dist, axis=1, kind="stable")[:, :k], axis=1)]
    return out


class NeighbourCache:
    """k nearest lists reused across runs on the same data (e.g. the law-school gender test at
    alpha and at alpha / 2): keyed by the content of the centres and of the search space (scaled
    features, categories, row ids), so a run on other data or another scaling never hits. A stored
    list of k' >= k neighbours serves k by its first k (the order (distance, larger id) is total)."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str], np.ndarray] = {}
        self.hits = self.misses = 0

    def knn(self, centers, center_cats, space, space_cats, ids, k):
        key = (_digest(centers, center_cats), _digest(space, space_cats, ids))
        want = min(k, len(ids))
        found = self._store.get(key)
        if found is not None and found.shape[1] >= want:
            self.hits += 1
            return found[:, :want]
        self.misses += 1
        self._store[key] = out = self.search(centers, center_cats, space, space_cats, ids, k)
        return out

    def search(self, centers, center_cats, space, space_cats, ids, k):
        """The search a miss runs: :func:`_knn` on this machine (``fairness.situation_dask``: on a cluster)."""
        return _knn(centers, center_cats, space, space_cats, ids, k)


def _digest(*arrays) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a if a.dtype != object else a.astype(str))
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _without_self(nearest_ids, complainants, k):
    """Each row's nearest list (k + 1 long, nearest first) without its complainant: the k nearest
    others. When ties at distance 0 kept the complainant out of the list, its first k are those.
    Column j takes column j + 1 from the complainant's place on (it occurs at most once). Rows whose
    complainant comes first (every row without ties at distance 0) are the list's last k columns: when all
    rows are so, a view of them (no copy)."""
    rest = nearest_ids[:, 1 : k + 1]
    other = np.flatnonzero(nearest_ids[:, 0] != complainants)
    if other.size == 0:
        return rest
    rest = rest.copy()
    lists = nearest_ids[other]
    passed = np.logical_or.accumulate(lists[:, :k] == complainants[other, None], axis=1)
    rest[other] = np.take_along_axis(lists, np.arange(k) + passed, axis=1)
    return rest


def _with_centres(nearest_ids, centers, center_cats, x, cats, complainants, k):
    """Insert each complainant's counterfactual centre (distance 0, id = the complainant's) into its
    nearest list where the tie rule puts it: after members at distance 0 with a larger id."""
    top = nearest_ids[:, :k]
    gap = np.abs(x[top] - centers[:, None, :]).sum(axis=2) + (cats[top] != center_cats[:, None, :]).sum(axis=2)
    before = np.minimum(((gap == 0) & (top > complainants[:, None])).sum(axis=1), k - 1)
    out = np.empty((len(complainants), k), dtype=top.dtype)
    for row, (place, c) in enumerate(zip(before, complainants, strict=True)):
        out[row] = np.concatenate([top[row, :place], [c], top[row, place : k - 1]])
    return out


def situation_testing(
    data: pd.DataFrame,
    *,
    protected: str,
    target: str,
    negative_outcome,
    k: int | Sequence[int] = 15,
    alpha: float = 0.05,
    tau: float = 0.0,
    counterfactuals: pd.DataFrame | None = None,
    protected_value=1,
    features: Sequence[str] | None = None,
    discrimination: str = "negative",
    mode: str = "paper",
    counterfactual_outcomes: bool = True,
    cache: NeighbourCache | None = None,
    multiple_testing: str = "holm",
) -> SituationTestingResult:
    """ST, CST without and with the complainant, CF for every protected individual and each k.

    ``data`` and ``counterfactuals`` (same rows, same order; the counterfactual of every protected
    row under do(protected := non-protected), with the model's counterfactual outcome in ``target``)
    hold the features, ``protected`` and ``target``. Without counterfactuals only ST is computed.
    ``counterfactual_outcomes=False`` (counterfactual features without the model's decision on
    them, e.g. from an SCM that cannot recompute the decision): ST and CST without the complainant
    only; CSTwi and CF, which need the counterfactual decision, are omitted. ``cache``: a
    :class:`NeighbourCache` shared by runs that differ only in alpha, tau or the direction.
    ``multiple_testing``: holm, bh or none, the adjustment within each method's and k's complainants.
    """
    if discrimination not in ("negative", "positive"):
        raise SituationTestingError("discrimination must be 'negative' or 'positive'")
    if mode not in ("paper", "reference"):
        raise SituationTestingError("mode must be 'paper' or 'reference'")
    ks = sorted({int(v) for v in (k if isinstance(k, Sequence) else [k])})
    if ks[0] < 1:
        raise SituationTestingError("k must be at least 1")
    if not 0 < alpha < 1:
        raise SituationTestingError(f"alpha must be between 0 and 1 (exclusive), not {alpha!r}")
    missing = [c for c in (protected, target) if c not in data.columns]
    if missing:
        raise SituationTestingError(f"missing column(s) {missing}; available: {list(data.columns)}")
    features = list(features) if features is not None else [c for c in data.columns if c not in (protected, target)]
    among = [c for c in (protected, target) if c in features]
    if among:
        raise SituationTestingError(
            f"{among} cannot be a feature: the distance leaves out the protected attribute and the decision"
        )
    data = data.reset_index(drop=True)
    counterfactuals = None if counterfactuals is None else counterfactuals.reset_index(drop=True)
    is_protected = (data[protected] == protected_value).to_numpy()
    if not is_protected.any():
        raise SituationTestingError(f"no row has {protected} = {protected_value!r}")
    if is_protected.all():
        raise SituationTestingError(f"every row has {protected} = {protected_value!r}: no non-protected individuals")
    n_control, n_test = int(is_protected.sum()) - 1, int((~is_protected).sum())
    if ks[-1] > min(n_control, n_test):
        raise SituationTestingError(
            f"k = {ks[-1]} is larger than a search space: {n_control} protected individuals besides the "
            f"complainant (control group), {n_test} non-protected individuals (test group)"
        )
    x, x_cf, cats, cats_cf = _prepare(data, counterfactuals, features, protected, target, mode, counterfactual_outcomes)
    _require_binary(data, counterfactuals if counterfactual_outcomes else None, target, negative_outcome)
    negative: np.ndarray = (data[target] == negative_outcome).to_numpy()
    negative_cf: np.ndarray | None = None
    if counterfactuals is not None and counterfactual_outcomes:
        negative_cf = (counterfactuals[target] == negative_outcome).to_numpy()
    ids = np.arange(len(data), dtype=np.int32 if len(data) < 2**31 else np.int64)  # int32: half the lists' memory
    ctr_ids, tst_ids = ids[is_protected], ids[~is_protected]
    complainants = ctr_ids
    kmax = ks[-1]
    centers, center_cats = x[complainants], cats[complainants]
    knn = cache.knn if cache is not None else _knn
    control = knn(centers, center_cats, x[ctr_ids], cats[ctr_ids], ctr_ids, kmax + 1)
    if mode == "paper":
        control = _without_self(control, complainants, kmax)
    groups = {"ST": (control, knn(centers, center_cats, x[tst_ids], cats[tst_ids], tst_ids, kmax))}
    if x_cf is not None:
        cf_centers, cf_cats = x_cf[complainants], cats_cf[complainants]
        test_cf = knn(cf_centers, cf_cats, x[tst_ids], cats[tst_ids], tst_ids, kmax + 1)
        groups["CSTwo"] = (control, test_cf[:, :kmax])
        if negative_cf is not None and mode == "paper":  # c and its k nearest others; x_c^CF and the k nearest to it
            # (the test list holds the k nearest only: x_c^CF, id c, is put first where it is counted and shown)
            groups["CSTwi"] = (np.hstack([complainants[:, None], control]), test_cf[:, :kmax])
        elif negative_cf is not None:
            groups["CSTwi"] = (control, _with_centres(test_cf, cf_centers, cf_cats, x, cats, complainants, kmax + 1))
    tallies = _tallies(groups, negative, negative_cf, complainants, mode, ks)
    z = stats.norm.ppf(1 - alpha)
    if mode == "reference":
        z = round(z, 3)
    table = _Table(len(complainants), ks)
    neighbours = {}
    for i, kk in enumerate(ks):
        for method, (ctr, tst) in groups.items():
            if method in tallies:  # CSTwi: k + 1 each (c, x_c^CF); paper ST, CSTwo: the k nearest others
                size = kk + 1 if method == "CSTwi" else kk
                c_ids, t_ids = ctr[:, :size], tst[:, :size]
                n_c, n_t = tallies[method][0][:, i], tallies[method][1][:, i]
                k_c = k_t = np.full(len(complainants), size)
            else:
                first = ctr[:, : kk + 1]
                keep = first != complainants[:, None]
                # the authors' rule: drop the complainant from the k + 1 nearest; if ties kept it out,
                # k + 1 neighbours remain
                t_ids = tst[:, :kk]
                n_c, n_t = (negative[first] & keep).sum(axis=1), negative[t_ids].sum(axis=1)
                k_c, k_t = keep.sum(axis=1), np.full(len(complainants), kk)
                c_ids = np.where(keep, first, -1)
            p_c, p_t = n_c / k_c, n_t / k_t
            delta = p_c - p_t
            w = z * np.sqrt(p_c * (1 - p_c) / k_c + p_t * (1 - p_t) / k_t)
            flagged, significant = _decide(delta, w, tau, discrimination, mode)
            pvalue = exact_pvalue(n_c, k_c, n_t, k_t, discrimination)
            adjusted = adjust_tied(pvalue, multiple_testing)
            table.put(i, f"{method}_p_c", p_c)
            table.put(i, f"{method}_p_t", p_t)
            table.put(i, f"{method}_delta", delta)
            table.put(i, f"{method}_w", w)
            table.put(i, method, flagged)
            table.put(i, f"{method}_sig", significant)
            table.put(i, f"{method}_pvalue", pvalue)
            table.put(i, f"{method}_pvalue_adjusted", adjusted)
            table.put(i, f"{method}_sig_exact", flagged & (pvalue < alpha))
            table.put(i, f"{method}_sig_adjusted", flagged & (adjusted < alpha))
            if method == "CSTwi" and mode == "paper":  # the test group's members: the k nearest to x_c^CF
                t_ids = tst[:, :kk]
            elif method == "CSTwi":  # x_c^CF (id c, exactly once) where the tie rule put it
                t_ids = t_ids[t_ids != complainants[:, None]].reshape(len(complainants), kk)
            neighbours[(method, kk)] = {"control": c_ids, "test": t_ids}
        if negative_cf is not None:
            cf_flag = (
                (negative[complainants] & ~negative_cf[complainants])
                if discrimination == "negative"
                else (~negative[complainants] & negative_cf[complainants])
            )
            table.put(i, "CF", cf_flag)
            for suffix in ("_sig", "_sig_exact", "_sig_adjusted"):
                table.put(i, f"CF{suffix}", cf_flag & table.part(i, f"CSTwi{suffix}"))
    individuals = table.frame(complainants)
    named = ("ST", "CSTwo", "CSTwi", "CF")
    order = ["k"] + [f"{c}{suffix}" for suffix in ("", "_sig", "_sig_exact", "_sig_adjusted") for c in named]
    order = [c for c in order if c in individuals.columns]
    counts = table.sums(order[1:])
    return SituationTestingResult(
        individuals, counts, neighbours, complainants.astype(np.int64), multiple_testing, tuple(groups)
    )


class _Table:
    """The individuals table built column by column: one NumPy array per column, k after k (no per-k frames to
    concatenate). Columns keep the order of their first :meth:`put`."""

    def __init__(self, rows: int, ks: list[int]) -> None:
        self.rows, self.ks = rows, ks
        self.columns: dict[str, np.ndarray] = {}

    def put(self, i: int, name: str, values: np.ndarray) -> None:
        """The column's values for the ``i``-th k (one per complainant)."""
        if name not in self.columns:
            self.columns[name] = np.empty(self.rows * len(self.ks), dtype=values.dtype)
        self.columns[name][i * self.rows : (i + 1) * self.rows] = values

    def part(self, i: int, name: str) -> np.ndarray:
        return self.columns[name][i * self.rows : (i + 1) * self.rows]

    def sums(self, names: list[str]) -> pd.DataFrame:
        """k (int64) and each named column's sum over the complainants, per k (int64)."""
        k = np.asarray(self.ks, dtype=np.int64)
        sums = {name: self.columns[name].reshape(len(self.ks), self.rows).sum(axis=1, dtype=np.int64) for name in names}
        return pd.DataFrame({"k": k, **sums})

    def frame(self, complainants: np.ndarray) -> pd.DataFrame:
        """complainant, k (int64), then the columns."""
        first = {
            "complainant": np.tile(complainants.astype(np.int64), len(self.ks)),
            "k": np.repeat(np.asarray(self.ks, dtype=np.int64), self.rows),
        }
        return pd.DataFrame({**first, **self.columns}, copy=False)


def exact_pvalue(
    n_c: np.ndarray, k_c: np.ndarray, n_t: np.ndarray, k_t: np.ndarray, discrimination: str = "negative"
) -> np.ndarray:
    """One-sided Fisher exact test (Fisher 1935) of each complainant's 2x2 table: ``n_c`` negative decisions
    among the ``k_c`` control (protected) neighbours against ``n_t`` among the ``k_t`` test (non-protected)
    ones. H0: no difference in positive-decision rates between the two neighbourhoods (given the 2k
    decisions, which neighbours are protected is as if drawn at random). Given the margins X, the control's
    negatives, is hypergeometric (k_c + k_t neighbours, n_c + n_t negatives, k_c drawn);
    p = P(X >= n_c) against more negatives in the control group (negative discrimination), P(X <= n_c)
    against fewer (positive): ``scipy.stats.fisher_exact([[n_c, k_c - n_c], [n_t, k_t - n_t]],
    alternative="greater" | "less")``, vectorised. Fisher's test rather than Boschloo's unconditional one
    (``scipy.stats.boschloo_exact``, more powerful under two binomials with one rate): given the 2k decisions
    it is exact under H0 whatever rate the neighbourhoods share, and closed-form, where Boschloo's maximises
    over the common rate for each of the (k + 1)^2 tables of each k (0.1 s a table).

    The tail is computed once per distinct table (a few hundred among 450,000 complainants).

    >>> exact_pvalue(np.array([2, 5]), np.array([5, 5]), np.array([0, 0]), np.array([5, 5])).round(4).tolist()
    [0.2222, 0.004]
    """
    tables = np.broadcast_arrays(*map(np.asarray, (n_c, k_c, n_t, k_t)))
    shape = tables[0].shape
    first, inverse = _distinct(*(a.ravel() for a in tables))  # one tail per distinct table, not per complainant
    n_c, k_c, n_t, k_t = (a.ravel()[first] for a in tables)
    total, negatives = k_c + k_t, n_c + n_t
    if discrimination == "negative":
        pvalue = stats.hypergeom.sf(n_c - 1, total, negatives, k_c)
    else:
        pvalue = stats.hypergeom.cdf(n_c, total, negatives, k_c)
    return np.clip(pvalue, 0.0, 1.0)[inverse].reshape(shape)


def _distinct(*counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the equally long ``counts`` (integers >= 0): the position of one occurrence of each distinct row,
    and each row's number among the distinct rows. One integer code per row (the columns in mixed radix,
    renumbered before it could overflow), numbered by hashing (``pandas.factorize``), not by sorting."""
    code = np.zeros(len(counts[0]), dtype=np.int64)
    for column in counts:
        span = int(column.max(initial=0)) + 1
        if int(code.max(initial=0)) >= 2**62 // span:
            code = pd.factorize(code)[0].astype(np.int64)
        code = code * span + column
    inverse, distinct = pd.factorize(code)
    where = np.empty(len(distinct), dtype=np.intp)
    where[inverse] = np.arange(len(code))  # any occurrence: equal rows, equal tails
    return where, inverse


def _tallies(groups, negative, negative_cf, complainants, mode, ks):
    """Per method whose groups are list prefixes (CSTwi; ST and CSTwo in paper mode): the negative decisions
    among the first k (CSTwi: k + 1) of each complainant's control and test lists, one column per k of ``ks``.
    Test-group members keep their factual decisions (do() may change non-protected rows too, e.g. white women
    under do(Male, White)); only the centre x_c^CF, whose id is the complainant's, takes its counterfactual
    decision. Paper mode's CSTwi lists are c, then the control list, and x_c^CF, then CSTwo's test list: their
    counts are those lists' counts plus c's factual and x_c^CF's counterfactual decision."""
    counted = {}  # by list (id of the array): ST and CSTwo share their control list

    def among(ids, sizes, decisions=negative):
        if id(ids) not in counted:
            counted[id(ids)] = prefix_counts(ids, decisions, sizes)
        return counted[id(ids)]

    tallies = {}
    for method, (ctr, tst) in groups.items():
        if method == "CSTwi" and mode == "paper":
            control, test = groups["CSTwo"]
            tallies[method] = (
                negative[complainants, None] + among(control, ks),
                negative_cf[complainants, None] + among(test, ks),
            )
        elif method == "CSTwi":
            # x_c^CF's place holds id c: the counterfactual decision there, the factual one elsewhere
            sizes = [k + 1 for k in ks]
            at_centre = np.where(tst == complainants[:, None], negative_cf[tst], negative[tst])
            positions = np.arange(at_centre.size).reshape(at_centre.shape)
            tallies[method] = (among(ctr, sizes), among(positions, sizes, at_centre.ravel()))
        elif mode == "paper":
            tallies[method] = (among(ctr, ks), among(tst, ks))
    return tallies


def _decide(delta, w, tau, discrimination, mode):
    """(flagged, significant) per complainant: delta_p beyond tau, and tau outside the one-sided CI."""
    reference = mode == "reference"
    d = np.round(delta, 3) if reference else delta
    if discrimination == "negative":
        lower = np.round(delta - w, 3) if reference else delta - w
        return d > tau, (d > tau) & (lower > tau)
    upper = np.round(delta + w, 3) if reference else delta + w
    return d < tau, (d < tau) & (upper < tau)
