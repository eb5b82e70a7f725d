"""A fair metric learned from people's judgements: a Mahalanobis distance over the subjects' features.

The features are scaled first (:class:`Scaling`): a numeric column to [0, 1] by its range over the
subjects, a two-valued column to one 0/1 column, a column with k > 2 values to k 0/1 columns. With
delta = x - y the scaled difference and M a positive semi-definite matrix, the squared distance is
d_M(x, y)^2 = delta' M delta, and ``distance(x, y)`` its square root. M is fitted by maximum
likelihood from one of two kinds of judgement (Mukherjee, Yurochkin, Banerjee & Sun, "Two simple
ways to learn individual fairness metrics from data", ICML 2020):

* ``kind="comparable"``, EXPLORE's link: a pair (a, b) judged "treat alike" (answer 1) with
  P = 2 / (1 + exp(d_M(a, b)^2)) = 2 expit(-d^2) (1 for identical subjects, falling with the distance);
* ``kind="triplet"``, a Bradley-Terry link on the difference of distances: b judged more similar to the
  anchor than c (answer 1) with P = expit(d_M(anchor, c)^2 - d_M(anchor, b)^2).

Both log-likelihoods are concave in M (linear predictors; log 2 expit(-t) and log tanh(t / 2) are
concave), so the fit is a convex problem over the PSD cone; it is solved over M = L L' (the
analytic gradient, scipy's L-BFGS-B) with a small trace penalty ``PENALTY * tr(M)`` that sets directions no judgement
informs (the sum of a many-valued column's indicators) to 0. ``feature_weights`` are per original
feature the squared distance M gives to a difference in that feature alone: a full-range difference
(numeric) or a change of value (categorical, averaged over the pairs of values), i.e. M's diagonal over
the features; what two features' differences add together, 2 u' M v (``cross_terms``: u' M v, M's
off-diagonal entry for numeric and two-valued features), is not in the weights. Their CIs
(``ci_low``/``ci_high``) are full-M Wald intervals with rater-clustered CR1 errors and t on raters - 1 df
(:func:`wald_interval`): they covered 93.5% (comparable) and 96% (triplet) of 150 simulated studies at the
builder's sizes, where the basic bootstrap covered 95% and 88.5% (``bench/coverage.py``, ``simulation.
estimand_studies``). The basic bootstrap intervals (:func:`basic_interval`) over ``n_resamples`` refits on
raters resampled with replacement (each rater's judgements kept together) stay in ``ci_bootstrap_low``/
``ci_bootstrap_high``; their refits (``draws``) carry the metric's uncertainty into the Lipschitz audit.
"""

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import linalg, optimize, special, stats
from threadpoolctl import threadpool_limits

from fairness.rater_groups import ALL

Kind = Literal["comparable", "triplet"]
KINDS = ("comparable", "triplet")
COLUMNS = {"comparable": ("rater", "a", "b", "answer"), "triplet": ("rater", "anchor", "b", "c", "answer")}
PENALTY = 1e-3  # trace penalty (total, not per judgement): negligible beside hundreds of judgements
MAX_METRIC_RESAMPLES = 200  # a report's rater resamples (each a refit; its 2,000 would take minutes)
FTOL = 1e-10  # L-BFGS-B's relative reduction of the objective at which the fit stops
REFIT_BLOCK = 50_000  # resamples x judgements refitted together: many small resamples, a large one alone
MIN_DISTANCE = 1e-12  # floor of d^2 in log tanh(d^2 / 2) (a "not alike" answer for identical subjects)


class ConfidenceInterval(NamedTuple):
    low: pd.Series
    high: pd.Series


@dataclass(frozen=True)
class Scaling:
    """How each feature becomes scaled columns: numeric ``(min, range)`` or categorical (its values)."""

    numeric: dict[str, tuple[float, float]]
    categorical: dict[str, tuple[str, ...]]
    features: tuple[str, ...]

    @property
    def columns(self) -> list[str]:
        out = []
        for feature in self.features:
            if feature in self.numeric:
                out.append(feature)
            else:
                values = self.categorical[feature]
                out += [f"{feature}={values[1]}"] if len(values) == 2 else [f"{feature}={v}" for v in values]
        return out

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The scaled columns of the rows of ``frame`` (which has every feature)."""
        parts = []
        for feature in self.features:
            if feature in self.numeric:
                low, spread = self.numeric[feature]
                parts.append(((pd.to_numeric(frame[feature]).to_numpy(float) - low) / spread)[:, None])
            else:
                values = self.categorical[feature]
                shown = values[1:] if len(values) == 2 else values
                text = frame[feature].astype(str).to_numpy()
                parts.append(np.column_stack([text == v for v in shown]).astype(float))
        return np.hstack(parts)

    def feature_directions(self, feature: str) -> list[np.ndarray]:
        """The scaled differences of a change in ``feature`` alone: its full range (numeric), or each pair
        of its values (categorical: one column's 0 to 1 for two values, e_u - e_v for more)."""
        columns = self.columns

        def unit(column: str) -> np.ndarray:
            out = np.zeros(len(columns))
            out[columns.index(column)] = 1.0
            return out

        if feature in self.numeric:
            return [unit(feature)]
        values = self.categorical[feature]
        if len(values) == 2:
            return [unit(f"{feature}={values[1]}")]
        return [unit(f"{feature}={u}") - unit(f"{feature}={v}") for u, v in combinations(values, 2)]


def feature_scaling(subjects: pd.DataFrame, features: Sequence[str]) -> Scaling:
    """The scaling of ``features`` over the rows of ``subjects`` (module doc); ValueError for a missing or
    constant feature."""
    missing = [f for f in features if f not in subjects.columns]
    if missing:
        raise ValueError(f"features not among the subjects' columns: {', '.join(map(str, missing))}")
    if not features:
        raise ValueError("give at least one feature")
    numeric: dict[str, tuple[float, float]] = {}
    categorical: dict[str, tuple[str, ...]] = {}
    for feature in features:
        values = pd.to_numeric(subjects[feature], errors="coerce")
        if values.notna().all():
            low, high = float(values.min()), float(values.max())
            if high == low:
                raise ValueError(f"feature {feature!r} has one value ({low:g}) for every subject: it cannot weigh")
            numeric[feature] = (low, high - low)
        else:
            levels = tuple(sorted(subjects[feature].astype(str).unique()))
            if len(levels) < 2:
                raise ValueError(
                    f"feature {feature!r} has one value ({levels[0]!r}) for every subject: it cannot weigh"
                )
            categorical[feature] = levels
    return Scaling(numeric, categorical, tuple(features))


@dataclass(frozen=True, eq=False)
class HumanMetric:
    """A learned fair metric (module doc): ``matrix`` M over the scaled ``columns``; ``feature_weights``
    per feature with their full-M Wald CI (``confidence_interval()``) and basic rater-bootstrap CI
    (``ci_bootstrap_low``/``high``), ``n_resamples`` refits that succeeded of those asked; ``n_judgements``
    and ``n_raters`` those fitted."""

    kind: str
    matrix: pd.DataFrame
    feature_weights: pd.Series
    ci_low: pd.Series
    ci_high: pd.Series
    scaling: Scaling
    log_likelihood: float
    n_judgements: int
    n_raters: int
    n_resamples: int
    confidence_level: float
    seed: int
    draws: tuple[np.ndarray, ...] = ()  # the bootstrap refits' matrices (fairness.individual.lipschitz_violations)
    ci_bootstrap_low: pd.Series | None = None
    ci_bootstrap_high: pd.Series | None = None

    @property
    def statistic(self) -> pd.Series:
        return self.feature_weights

    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.ci_low, self.ci_high)

    def scaled(self, subjects: pd.DataFrame) -> np.ndarray:
        """The scaled feature columns of ``subjects`` (one row each), the space ``matrix`` measures in."""
        return self.scaling.transform(subjects)

    def distance(self, x: Mapping | pd.Series, y: Mapping | pd.Series) -> float:
        """d_M(x, y) = sqrt(delta' M delta) for two subjects given by their feature values."""
        frame = pd.DataFrame([dict(x), dict(y)])
        scaled = self.scaling.transform(frame)
        delta = scaled[0] - scaled[1]
        return float(np.sqrt(max(delta @ self.matrix.to_numpy() @ delta, 0.0)))

    @property
    def cross_terms(self) -> pd.DataFrame:
        """M's off-diagonal part over the features: entry (f, g) = the mean of u' M v over the directions u
        of a change in f alone and v in g alone (``Scaling.feature_directions``), so that a difference in
        both has d^2 = weight_f + weight_g + 2 (f, g); M's entry over the scaled columns for numeric and
        two-valued features. The diagonal is NaN (the weights)."""
        features = list(self.scaling.features)
        matrix = self.matrix.to_numpy()
        directions = [np.array(self.scaling.feature_directions(f)) for f in features]
        cross = np.array([[np.mean(u @ matrix @ v.T) for v in directions] for u in directions], dtype=float)
        np.fill_diagonal(cross, np.nan)
        return pd.DataFrame(cross, index=features, columns=features)

    def summary(self) -> pd.DataFrame:
        """feature, weight, ci_low, ci_high (Wald), ci_bootstrap_low, ci_bootstrap_high and ``m_with_<g>``: the
        cross term with each other feature g."""
        cross = self.cross_terms
        nan = np.full(len(self.feature_weights), np.nan)
        return pd.DataFrame({"feature": self.feature_weights.index, "weight": self.feature_weights.to_numpy()}).assign(
            ci_low=self.ci_low.to_numpy(),
            ci_high=self.ci_high.to_numpy(),
            ci_bootstrap_low=nan if self.ci_bootstrap_low is None else self.ci_bootstrap_low.to_numpy(),
            ci_bootstrap_high=nan if self.ci_bootstrap_high is None else self.ci_bootstrap_high.to_numpy(),
            **{f"m_with_{g}": cross[g].to_numpy() for g in cross.columns},
        )


@dataclass(frozen=True)
class _Design:
    """Per judgement the scaled differences p (and q for triplets): d = |L'p|^2 - |L'q|^2."""

    p: np.ndarray
    q: np.ndarray | None
    y: np.ndarray
    rater: np.ndarray  # index of each judgement's rater

    def rows(self, keep: np.ndarray) -> "_Design":
        """The judgements where ``keep`` is true (a resample's raters drawn at least once)."""
        return _Design(self.p[keep], None if self.q is None else self.q[keep], self.y[keep], self.rater[keep])


def _design(judgements: pd.DataFrame, subjects: pd.DataFrame, scaling: Scaling, kind: str) -> _Design:
    needed = COLUMNS[kind]
    missing = [c for c in needed if c not in judgements.columns]
    if missing:
        raise ValueError(f"judgements of kind {kind!r} need columns {', '.join(needed)}; missing {', '.join(missing)}")
    if judgements.empty:
        raise ValueError("no judgements")
    ends = [c for c in needed if c not in ("rater", "answer")]
    unknown = sorted({str(s) for c in ends for s in judgements[c]} - {str(s) for s in subjects.index})
    if unknown:
        raise ValueError(f"subjects not in the subjects table: {', '.join(unknown[:8])}")
    answers = pd.to_numeric(judgements["answer"], errors="coerce")
    if not answers.isin([0, 1]).all():
        raise ValueError("answer must be 0 or 1 in every judgement")
    position = {str(s): i for i, s in enumerate(subjects.index)}
    x = scaling.transform(subjects)

    def rows(column: str) -> np.ndarray:
        return x[[position[str(s)] for s in judgements[column]]]

    _, rater = np.unique(judgements["rater"].astype(str), return_inverse=True)
    y = answers.to_numpy(float)
    if kind == "comparable":
        return _Design(rows("a") - rows("b"), None, y, rater)
    anchor = rows("anchor")
    return _Design(anchor - rows("c"), anchor - rows("b"), y, rater)


def _loss(flat: np.ndarray, design: _Design, weights: np.ndarray, kind: str) -> tuple[float, np.ndarray]:
    """Minus the weighted log-likelihood plus PENALTY tr(M), and its gradient in L (M = L L')."""
    k = design.p.shape[1]
    L = flat.reshape(k, k)
    pl = design.p @ L
    d = np.einsum("ij,ij->i", pl, pl)
    ql = None
    if design.q is not None:
        ql = design.q @ L
        d = d - np.einsum("ij,ij->i", ql, ql)
    y = design.y
    if kind == "comparable":  # each branch only on its answers (the profile's largest cost after the products)
        t = np.maximum(d, MIN_DISTANCE)
        alike = y == 1
        ll, slope = np.empty_like(t), np.empty_like(t)  # slope = d ll / d t
        t_alike, t_not = t[alike], t[~alike]
        ll[alike] = np.log(2.0) - np.logaddexp(0.0, t_alike)  # log 2 expit(-t)
        slope[alike] = -special.expit(t_alike)
        ll[~alike] = np.log(-np.expm1(-t_not)) - np.log1p(np.exp(-t_not))  # log tanh(t / 2)
        slope[~alike] = 1 / np.sinh(t_not)
    else:
        ll = special.log_expit(np.where(y == 1, d, -d))
        slope = y - special.expit(d)
    w = weights * slope
    grad = 2 * design.p.T @ (w[:, None] * pl)
    if ql is not None and design.q is not None:
        grad -= 2 * design.q.T @ (w[:, None] * ql)
    value = -float(weights @ ll) + PENALTY * float(np.sum(L * L))
    return value, (-grad + 2 * PENALTY * L).ravel()


def _fit(design: _Design, weights: np.ndarray, kind: str, start: np.ndarray) -> tuple[np.ndarray, float]:
    """L-BFGS-B over L; the caller limits BLAS to one thread (:func:`fit_metric`: entering ``threadpool_limits``
    scans the process's libraries, which cost more than a bootstrap refit's fit)."""
    result = optimize.minimize(
        _loss,
        start.ravel(),
        args=(design, weights, kind),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": FTOL, "gtol": 1e-6},
    )
    L = result.x.reshape(start.shape)
    return L, -float(result.fun) + PENALTY * float(np.sum(L * L))


def _link(kind: str, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per judgement d ll / d t and the curvature -d^2 ll / d t^2 (>= 0) of its log-likelihood (module doc)."""
    if kind == "triplet":
        p = special.expit(t)
        return y - p, p * (1 - p)
    t = np.maximum(t, MIN_DISTANCE)
    p = special.expit(t)
    with np.errstate(over="ignore"):  # sinh(t) = inf far away: 1 / inf = 0 is the limit
        return _slope(kind, t, y), np.where(y == 1, p * (1 - p), 1 / (np.tanh(t) * np.sinh(t)))


def _slope(kind: str, t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`_link`'s d ll / d t alone, each judgement's (column's) branch only on its answers: -expit(t)
    for "alike", 1 / sinh(t) for "not alike" (comparable; t floored at MIN_DISTANCE), y - expit(t) (triplet)."""
    if kind == "triplet":
        return y - special.expit(t)
    t = np.maximum(t, MIN_DISTANCE)
    alike = y == 1
    slope = np.empty_like(t)
    slope[..., alike] = -special.expit(t[..., alike])
    with np.errstate(over="ignore"):  # sinh(t) = inf far away: 1 / inf = 0 is the limit
        slope[..., ~alike] = 1 / np.sinh(t[..., ~alike])
    return slope


def _predictor(design: _Design, matrix: np.ndarray) -> np.ndarray:
    t = np.einsum("ij,ij->i", design.p @ matrix, design.p)
    if design.q is not None:
        t -= np.einsum("ij,ij->i", design.q @ matrix, design.q)
    return t


class _Refit:
    """Bootstrap refits by Newton iterations in M with the full data's Hessian: M <- M - H0^{-1} grad f_w(M).

    f_w(M) = -sum_i w_i ll_i(t_i) + PENALTY tr(M) is convex in M's k(k+1)/2 free entries m, t_i = z_i' m
    (z_i the entries of p_i p_i' - q_i q_i', off-diagonal ones doubled), so its gradient is
    -Z' (w slope) + PENALTY e and its Hessian Z' diag(w c) Z with c = -ll''. A resample's weights average 1,
    so H0 (unit weights, at the full fit) is close to a resample's Hessian and each iteration shrinks the
    error by their difference: a few gradient evaluations instead of L-BFGS's 30-40 over L. The iterations
    run for a block of resamples at once (their weights a resamples x judgements matrix over the judgements
    of raters drawn in any of them: a couple of matrix products per iteration; ``fit_metric`` refits a large
    study's resamples one at a time); a resample stops at its own tolerance. When the fit
    is inside the PSD cone the fixed point is the resample's maximum likelihood M (the cone's constraint is
    not active). A resample whose fixed point is outside the cone is refitted by :func:`_fit` (L-BFGS over
    L) from that point's projection onto the cone (its negative eigenvalues set to 0), one whose iterations
    do not converge (or every resample when the full fit is on the cone's boundary) from the full fit's L.
    """

    TOLERANCE = 1e-14  # squared Newton decrement (H0's metric) at which the iterations stop
    MAX_STEPS = 50

    def __init__(self, design: _Design, kind: str, L: np.ndarray) -> None:
        self.design, self.kind, self.L = design, kind, L
        self.matrix = L @ L.T
        self.upper = np.triu_indices(L.shape[0])
        self.factor = None
        eigenvalues = np.linalg.eigvalsh(self.matrix)
        if eigenvalues.min() <= 1e-6 * eigenvalues.max():  # on the cone's boundary: the constraint may bind
            return
        self.z = _entries(design.p, self.upper)  # judgements x k(k+1)/2
        if design.q is not None:
            self.z -= _entries(design.q, self.upper)
        _, curvature = _link(kind, self.z @ self.matrix[self.upper], design.y)
        try:
            self.factor = linalg.cho_factor(self.z.T @ (curvature[:, None] * self.z))
        except linalg.LinAlgError:
            self.factor = None

    def __call__(self, weights: np.ndarray) -> list[np.ndarray]:
        """The refit M of each row of ``weights`` (resamples x judgements: a judgement's weight is the number
        of times its rater was drawn)."""
        starts = [self.L] * len(weights)
        refits: list[np.ndarray | None] = [None] * len(weights)
        if self.factor is not None:
            k = len(self.matrix)
            penalty = PENALTY * np.eye(k)[self.upper]
            entries = np.tile(self.matrix[self.upper], (len(weights), 1))
            active = np.arange(len(weights))
            used = (weights > 0).any(axis=0)  # the judgements of raters drawn in some resample of the block
            z, y, drawn_weights = self.z[used], self.design.y[used], weights[:, used]
            for _ in range(self.MAX_STEPS):
                slope = _slope(self.kind, entries[active] @ z.T, y)
                gradient = penalty - (drawn_weights[active] * slope) @ z
                step = linalg.cho_solve(self.factor, gradient.T).T
                entries[active] -= step
                done = np.einsum("ij,ij->i", gradient, step) < self.TOLERANCE
                for b in active[done]:
                    matrix = np.zeros((k, k))
                    matrix[self.upper] = entries[b]
                    matrix += np.triu(matrix, 1).T
                    eigenvalues, vectors = np.linalg.eigh(matrix)
                    if eigenvalues.min() >= 0:
                        refits[b] = matrix
                    else:
                        starts[b] = vectors * np.sqrt(np.maximum(eigenvalues, 0.0))  # the projection's factor
                active = active[~done]
                if not active.size:
                    break
        for b, refit in enumerate(refits):
            if refit is None:
                drawn = weights[b] > 0
                L, _ = _fit(self.design.rows(drawn), weights[b, drawn], self.kind, starts[b])
                refits[b] = L @ L.T
        return refits  # type: ignore[return-value]


def _entries(p: np.ndarray, upper: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Rows z with z' m = p' M p for m = M's upper-triangle entries (off-diagonal ones doubled)."""
    return p[:, upper[0]] * p[:, upper[1]] * np.where(upper[0] == upper[1], 1.0, 2.0)


def wald_interval(
    design: _Design, kind: str, matrix: np.ndarray, scaling: Scaling, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The full-M Wald interval of the feature weights: M's k(k+1)/2 free entries m with the rater-clustered
    sandwich V = G/(G-1) H^-1 (sum_r u_r u_r') H^-1 (H = Z' diag(c) Z the information, u_r the sum of rater r's
    score vectors slope_i z_i; ``analysis.clustered``'s convention), a weight's variance g' V g (weight = g' m,
    g the mean of its directions' rows), and w -/+ t_{G-1} se, the lower end floored at 0 (a squared distance)."""
    upper = np.triu_indices(matrix.shape[0])
    z = _entries(design.p, upper)
    if design.q is not None:
        z -= _entries(design.q, upper)
    slope, curvature = _link(kind, _predictor(design, matrix), design.y)
    information = z.T @ (curvature[:, None] * z)
    n_raters = int(design.rater.max()) + 1
    scores = np.zeros((n_raters, z.shape[1]))
    np.add.at(scores, design.rater, slope[:, None] * z)
    bread = np.linalg.pinv(information)
    covariance = n_raters / (n_raters - 1) * bread @ (scores.T @ scores) @ bread
    g = np.array([_entries(np.array(scaling.feature_directions(f)), upper).mean(axis=0) for f in scaling.features])
    weights = g @ matrix[upper]
    se = np.sqrt(np.maximum(np.einsum("fi,ij,fj->f", g, covariance, g), 0.0))
    half = stats.t.ppf(0.5 + level / 2, n_raters - 1) * se
    return np.maximum(weights - half, 0.0), weights + half


def _weights(matrix: np.ndarray, scaling: Scaling) -> np.ndarray:
    return np.array(
        [np.mean([v @ matrix @ v for v in scaling.feature_directions(f)]) for f in scaling.features], dtype=float
    )


def basic_interval(boot: np.ndarray, estimate: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """The basic bootstrap interval per column of ``boot`` (resamples x estimates), Davison & Hinkley (1997,
    Eq. 5.6): (2 t - q_(1 - alpha/2), 2 t - q_(alpha/2)) with t the estimate and q the resamples' quantiles,
    the lower end floored at 0 (a weight is a squared distance). It reflects the skew of the weights' sampling
    distribution the right way round: at the builder's sizes it covered 95% (comparable) and 96% (triplet)
    of 100 simulations where the percentile and the bias-corrected percentile intervals covered 91%
    (comparable)."""
    tail = (1 - confidence_level) / 2
    low_q, high_q = np.quantile(boot, [tail, 1 - tail], axis=0)
    return np.maximum(2 * estimate - high_q, 0.0), 2 * estimate - low_q


def fit_metric(
    judgements: pd.DataFrame,
    subjects: pd.DataFrame,
    features: Sequence[Hashable],
    *,
    kind: Kind = "comparable",
    n_resamples: int = 200,
    confidence_level: float = 0.95,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> HumanMetric:
    """A fair metric learned from people's judgements of subjects (the Mahalanobis metric of the module doc).

    ``judgements`` has the columns rater, a, b, answer (1 = "treat alike") for ``kind="comparable"``;
    rater, anchor, b, c, answer (1 = b more similar to the anchor than c) for ``kind="triplet"``.
    ``subjects`` is indexed by subject id with the ``features`` columns.

    Parameters
    ----------
    judgements : pandas.DataFrame
        One row per judgement, with the columns of ``kind`` (above).
    subjects : pandas.DataFrame
        Indexed by subject id, with the ``features`` columns (numeric or categorical).
    features : sequence
        The features the metric measures.
    kind : {"comparable", "triplet"}
        The kind of judgement.
    n_resamples : int
        Refits on raters resampled with replacement, for the weights' intervals (0: none).
    confidence_level : float
        The intervals' level.
    seed : int
        The resampling's seed.
    progress : callable, optional
        Told the number of bootstrap refits done.

    Returns
    -------
    HumanMetric
        ``matrix`` M, ``feature_weights`` with ``ci_low`` and ``ci_high``, ``distance(x, y)``,
        ``summary()`` and the bootstrap ``draws``.

    Raises
    ------
    ValueError
        For an unknown kind, a missing column or subject, an answer other than 0/1, a constant feature.

    Examples
    --------
    Two raters call pairs 10 years apart alike whatever their priors, and pairs 20 years apart not alike:
    the metric weighs age and gives priors (almost) nothing:

    >>> import pandas as pd
    >>> people = pd.DataFrame({"age": [20, 30, 40, 50], "prior": [0, 1, 0, 1]}, index=list("abcd"))
    >>> said = pd.DataFrame({"rater": [1, 1, 1, 1, 2, 2, 2, 2], "a": list("aabbaabb"), "b": list("bcdcbcdc"),
    ...                      "answer": [1, 0, 0, 1, 1, 0, 0, 1]})
    >>> metric = fit_metric(said, people, ["age", "prior"], n_resamples=0)
    >>> bool(metric.feature_weights["age"] > 1 > 0.01 > metric.feature_weights["prior"])
    True
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    names = [str(f) for f in features]
    scaling = feature_scaling(subjects, names)
    design = _design(judgements, subjects, scaling, kind)
    k = design.p.shape[1]
    ones = np.ones(len(design.y))
    with threadpool_limits(1):  # L-BFGS-B's small matrices: threads only contend (2 cores, many workers)
        L, log_likelihood = _fit(design, ones, kind, np.eye(k))
    matrix = L @ L.T
    weights = _weights(matrix, scaling)
    n_raters = int(design.rater.max()) + 1
    rng = np.random.default_rng(seed)
    boot, draws = [], []
    if n_raters > 1 and n_resamples > 0:
        block = max(1, REFIT_BLOCK // len(design.y))  # resamples refitted together
        with threadpool_limits(1):
            refit = _Refit(design, kind, L)
            for done in range(0, n_resamples, block):
                if progress:
                    progress(done)
                counts = [
                    np.bincount(rng.integers(0, n_raters, n_raters), minlength=n_raters)
                    for _ in range(min(block, n_resamples - done))
                ]
                draws += refit(np.array(counts, dtype=float)[:, design.rater])
            if progress:
                progress(n_resamples)
        boot = [_weights(draw, scaling) for draw in draws]
    if boot:
        boot_low, boot_high = basic_interval(np.array(boot), weights, confidence_level)
    else:
        boot_low = boot_high = np.full(len(names), np.nan)
    if n_raters > 1:
        low, high = wald_interval(design, kind, matrix, scaling, confidence_level)
    else:
        low = high = np.full(len(names), np.nan)
    columns = scaling.columns
    return HumanMetric(
        kind=kind,
        matrix=pd.DataFrame(matrix, index=columns, columns=columns),
        feature_weights=pd.Series(weights, index=names, name="weight"),
        ci_low=pd.Series(low, index=names, name="ci_low"),
        ci_high=pd.Series(high, index=names, name="ci_high"),
        scaling=scaling,
        log_likelihood=log_likelihood,
        n_judgements=len(design.y),
        n_raters=n_raters,
        n_resamples=len(boot),
        confidence_level=confidence_level,
        seed=seed,
        draws=tuple(draws),
        ci_bootstrap_low=pd.Series(boot_low, index=names, name="ci_bootstrap_low"),
        ci_bootstrap_high=pd.Series(boot_high, index=names, name="ci_bootstrap_high"),
    )


def judgements_of(frame: pd.DataFrame, kind: Kind) -> pd.DataFrame:
    """A ``pair_comparable`` block's "comparable" answers (``kind="comparable"``) or a ``triplet`` block's
    "closer" answers (``kind="triplet"``), as ``analysis.bts.block_answers`` gives them (participant_id, subject
    "a~b" or "anchor~b~c", value, rater_group), as :func:`fit_metric`'s judgements (with rater_group)."""
    ends = frame["subject"].str.split("~", expand=True)
    named = dict(zip(COLUMNS[kind][1:-1], (ends[i] for i in range(len(COLUMNS[kind]) - 2)), strict=True))
    return pd.DataFrame(
        {"rater": frame["participant_id"], **named, "answer": frame["value"], "rater_group": frame["rater_group"]}
    )


def pool_frame(pool: Mapping[str, Any]) -> tuple[pd.DataFrame, list[str]]:
    """The pool's subjects (indexed by id) with their feature columns, and the features a metric can weigh:
    those every subject has, with at least two values."""
    frame = pd.DataFrame([subject.get("features", {}) for subject in pool["subjects"]])
    frame.index = pd.Index([str(subject["id"]) for subject in pool["subjects"]])
    usable = [str(c) for c in frame.columns if frame[c].notna().all() and frame[c].astype(str).nunique() > 1]
    return frame, usable


def metric_by_rater_group(
    judgements: pd.DataFrame,
    subjects: pd.DataFrame,
    features: Sequence[str],
    *,
    kind: Kind,
    n_resamples: int,
    seed: int,
) -> tuple[pd.DataFrame, list[str]]:
    """:func:`fit_metric` for all raters (``fairness.rater_groups.ALL``) and each rater group (``judgements``'
    column rater_group), with at most MAX_METRIC_RESAMPLES rater resamples (each a refit; the coverage
    simulations used 100). Returns the table (rater_group, feature, weight, ci_low, ci_high (Wald), n_judgements,
    n_raters, note: a failed fit's reason, then ci_bootstrap_low/high and ``m_with_<g>``: the cross terms of
    :attr:`HumanMetric.cross_terms`, M's off-diagonal entries, in the CSV) and the notes."""
    resamples = min(n_resamples, MAX_METRIC_RESAMPLES)
    notes = [
        "The weights' CIs are full-M Wald intervals, rater-clustered (t on raters - 1 df); the CSV's ci_bootstrap "
        f"columns hold basic bootstrap intervals from {resamples} rater resamples, each a refit of the metric."
    ]
    rows: list[dict] = []
    parts = [(ALL, judgements)] + sorted(judgements.dropna(subset=["rater_group"]).groupby("rater_group"))
    for group, part in parts:
        try:
            fit = fit_metric(
                part.drop(columns="rater_group"), subjects, features, kind=kind, n_resamples=resamples, seed=seed
            )
        except ValueError as exc:
            rows.append({"rater_group": group, "note": str(exc)})
            notes.append(f"{group}: no metric ({exc}).")
            continue
        summary = fit.summary().assign(rater_group=group, n_judgements=fit.n_judgements, n_raters=fit.n_raters, note="")
        rows += summary.to_dict("records")
    columns = ["rater_group", "feature", "weight", "ci_low", "ci_high", "n_judgements", "n_raters", "note"]
    columns += ["ci_bootstrap_low", "ci_bootstrap_high", *(f"m_with_{f}" for f in features)]
    return pd.DataFrame(rows).reindex(columns=columns), notes


DESIGN_PRIOR = (
    1.0  # the metric designs' prior information per weight (a N(m, 1) prior; module doc of metric_for_design)
)


def metric_for_design(
    judgements: pd.DataFrame,
    subjects: pd.DataFrame,
    features: Sequence[str],
    *,
    kind: Kind,
    prior: float = DESIGN_PRIOR,
) -> tuple[list[str], list[float], list[list[float]], dict[str, list[float]]]:
    """The fit the adaptive metric designs score with (``analysis.adaptive_design.COMPARABLE`` and
    ``TRIPLET``): the scaled columns, m = the diagonal of :func:`fit_metric`'s M (the per-column weights,
    floored at 0), their covariance, and each subject's scaled feature vector.

    The covariance is that of the diagonal model t = m'x (x the judgement's squared scaled differences,
    minus those of the other pair for a triplet) at m: (sum_i w(t_i) x_i x_i' + prior I)^-1, with w the
    expected Fisher information of the link (``comparable_information``, ``logistic_information``); the
    prior (``prior`` per weight, a Gaussian prior's precision) keeps it finite from the first answers
    on, as the choose design's virtual games do (the reported analysis uses no prior)."""
    from analysis.adaptive_design import comparable_information, logistic_information

    metric = fit_metric(judgements, subjects, features, kind=kind, n_resamples=0)
    design = _design(judgements, subjects, metric.scaling, kind)
    x = design.p**2 if design.q is None else design.p**2 - design.q**2
    m = np.maximum(np.diagonal(metric.matrix.to_numpy()), 0.0)
    link = comparable_information if kind == "comparable" else logistic_information
    w = np.array([link(float(t)) for t in x @ m])
    information = (x.T * w) @ x + prior * np.eye(len(m))
    covariance = np.linalg.inv(information)
    vectors = metric.scaled(subjects)
    return (
        list(metric.scaling.columns),
        m.tolist(),
        ((covariance + covariance.T) / 2).tolist(),
        {str(s): row.tolist() for s, row in zip(subjects.index, vectors, strict=True)},
    )


def design_fit(answers: Sequence[tuple], pool: dict, *, kind: Kind):
    """:func:`metric_for_design` of a block's answers ((rater, "a~b" or "anchor~b~c", answer 0/1)) over
    the pool's usable feature columns (:func:`pool_frame`)."""
    frame = pd.DataFrame(list(answers), columns=["participant_id", "subject", "value"])
    judgements = judgements_of(frame.assign(rater_group=None), kind).drop(columns="rater_group")
    subjects, features = pool_frame(pool)
    if not features:
        raise ValueError("the pool's subjects differ in no feature column: there is no metric to fit")
    return metric_for_design(judgements, subjects, features, kind=kind)


def comparable_design_fit(answers: Sequence[tuple], pool: dict):
    """The ``pair_comparable`` blocks' adaptive fit (:func:`design_fit`, ``kind="comparable"``)."""
    return design_fit(answers, pool, kind="comparable")


def triplet_design_fit(answers: Sequence[tuple], pool: dict):
    """The ``triplet`` blocks' adaptive fit (:func:`design_fit`, ``kind="triplet"``)."""
    return design_fit(answers, pool, kind="triplet")
