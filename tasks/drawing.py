"""Items a builder template draws from a pool (``build_study --template comparable|choice|triplet``): pairs
and triplets of subjects by their Gower distance on the CSV's feature columns, reproducibly (one seeded
generator), with the checks every such template makes. Pandas is imported only when drawing (the builder
and its jobs)."""

import numpy as np

from tasks.base import BlockTask, BuilderInput, BuilderProblem

PAIR_RELATIONS = ("near", "far", "random")
TRIPLET_RELATIONS = ("near-far", "near-random", "random")


def gower_distances(features, rows: slice) -> np.ndarray:
    """Gower's (1971) distance of the subjects in ``rows`` to every subject: the mean over the columns of
    |x_i - x_j| / range for numeric columns (0 when the range is 0) and 0/1 (equal / not) for the others."""
    import pandas as pd  # job workers and the builder only

    total = np.zeros((len(range(*rows.indices(len(features)))), len(features)))
    for column in features.columns:
        values = features[column]
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            x = numeric.to_numpy(dtype=float)
            spread = x.max() - x.min()
            if spread > 0:
                total += np.abs(x[rows, None] - x[None, :]) / spread
        else:
            codes = values.astype(str).to_numpy()
            total += codes[rows, None] != codes[None, :]
    return total / len(features.columns)


def _partners(features, ids: list[str], seed: int, chunk: int):
    """For each subject in CSV order: its index, its nearest neighbour (Gower distance on the feature
    columns; ties: the first in CSV order), the others at or beyond the median of its distances (never the
    near one) and every other subject, with the generator ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    features = features.reset_index(drop=True)
    for start in range(0, n, chunk):
        block = gower_distances(features, slice(start, min(n, start + chunk)))
        for offset, distances in enumerate(block):
            i = start + offset
            distances = distances.copy()
            distances[i] = np.inf
            near = int(np.argmin(distances))
            others = np.delete(np.arange(n), [i, near])
            far_candidates = others[distances[others] >= np.median(distances[others])]
            yield i, near, far_candidates, np.delete(np.arange(n), i), rng


def draw_pairs(features, ids: list[str], *, seed: int = 0, mix=("near", "far"), chunk: int = 512) -> list[dict]:
    """Pairs for ``pair_comparable`` and ``choose``: for each subject in CSV order, one partner per relation
    of ``mix``: ``near`` its nearest neighbour (Gower distance on the feature columns; ties: the first in CSV
    order), ``far`` one drawn uniformly from the subjects at or beyond the median of its distances (never
    the near one), ``random`` one drawn uniformly from all others, with ``numpy.random.default_rng(seed)``.
    Each pair records its ``relation``; a pair found twice (A-B and B-A) is kept once, where it first appears."""
    pairs, seen = [], set()
    for i, near, far_candidates, others, rng in _partners(features, ids, seed, chunk):
        for relation in mix:
            if relation == "near":
                j = near
            else:
                j = int(rng.choice(far_candidates if relation == "far" else others))
            key = frozenset((ids[i], ids[j]))
            if key not in seen:
                seen.add(key)
                pairs.append({"a": ids[i], "b": ids[j], "relation": relation})
    return pairs


def draw_triplets(
    features, ids: list[str], *, seed: int = 0, mix=("near-far", "random"), chunk: int = 512
) -> list[dict]:
    """Triplets for ``triplet``: each subject in CSV order is the anchor of one triplet per relation of
    ``mix``: ``near-far`` its nearest neighbour and one of its far subjects (as in :func:`draw_pairs`),
    ``near-random`` its nearest neighbour and one other drawn uniformly, ``random`` two others drawn
    uniformly without replacement; which of the two is b (shown first) is drawn with probability 1/2.
    Generator ``numpy.random.default_rng(seed)``; each triplet records its ``relation``; one found twice
    (same anchor, same two others) is kept once."""
    triplets, seen = [], set()
    for i, near, far_candidates, others, rng in _partners(features, ids, seed, chunk):
        for relation in mix:
            if relation == "near-far":
                two = [near, int(rng.choice(far_candidates))]
            elif relation == "near-random":
                two = [near, int(rng.choice(others[others != near]))]
            else:
                two = [int(j) for j in rng.choice(others, 2, replace=False)]
            if rng.random() < 0.5:
                two.reverse()
            key = (ids[i], frozenset(ids[j] for j in two))
            if key not in seen:
                seen.add(key)
                triplets.append({"anchor": ids[i], "b": ids[two[0]], "c": ids[two[1]], "relation": relation})
    return triplets


def drawn_items(task: BlockTask, source: BuilderInput, shape: str) -> list[dict]:
    """The ``pairs`` or ``triplets`` of ``task``'s builder template, by the mix asked for (``source.mix``,
    else the template's ``builder_mix``); :class:`BuilderProblem` without a feature column, with fewer
    than 3 subjects, or with more items than a block may list."""
    template, n, most = task.builder_template, len(source.subjects), source.max_items
    if not len(source.features.columns):
        raise BuilderProblem(
            f"the {template} template needs at least one feature column (a column participants see, besides id "
            f"and groups: --feature-columns) to draw its {shape}"
        )
    if n < 3:
        raise BuilderProblem(f"the {template} template needs at least 3 subjects; the CSV has {n}")
    ids, mix = [s["id"] for s in source.subjects], source.mix or task.builder_mix
    items = (draw_triplets if shape == "triplets" else draw_pairs)(source.features, ids, mix=mix)
    if len(items) > most:
        raise BuilderProblem(f"{len(items):,} {shape} from {n:,} subjects; a block holds at most {most:,}")
    return items
