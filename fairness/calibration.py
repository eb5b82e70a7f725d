"""The effort weight alpha estimated from yes/no disagreement feedback (no Django).

For each subject the crowd judged, its disagreement rate with the shown model's label is a human
verdict on that subject's outcome. For every alpha on a grid over [0, 1] the subject's EaIF
violation under the shown model, v_i(alpha) = mean over j of max(0, D_ij - d_ij(alpha)), is computed
against the whole audit population. The estimate is the alpha whose violations best predict the
disagreement rates by Spearman rank correlation (criterion); ties on the grid take their median.
The CI is a percentile bootstrap over participants (each resample recomputes the subjects'
disagreement rates), vectorised over resamples and grid points.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairness.individual import subject_violation_curves


@dataclass(frozen=True)
class DisagreementCalibration:
    alpha: float
    ci: tuple[float, float]
    criterion: str
    correlation: float
    n_subjects: int
    n_participants: int
    grid: np.ndarray
    correlations: np.ndarray
    seed: int
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)  # bootstrap alphas

    @property
    def estimand(self) -> str:
        """What alpha and its CI are about: the CI resamples participants, the subjects stay fixed."""
        return f"for these {self.n_subjects} subjects (participants resampled; other subjects not represented)"


def _ranks(matrix: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis."""
    from scipy.stats import rankdata

    return rankdata(matrix, axis=-1)


def _row_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman correlation of every row of a (A x S) with every row of b (B x S): B x A."""
    ra, rb = _ranks(a), _ranks(b)
    ra = ra - ra.mean(axis=1, keepdims=True)
    rb = rb - rb.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rb @ ra.T) / np.outer(np.sqrt((rb * rb).sum(axis=1)), np.sqrt((ra * ra).sum(axis=1)))


def _argbest(correlations: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Median grid point among those with the highest correlation, per row; NaN for a row where no
    grid point has a defined correlation (not the grid's median, 0.5). The median of a row's c best points
    in grid order, all rows at once: the mean of its ((c + 1) // 2)-th and (c // 2 + 1)-th (``np.median``'s
    value: the middle one, or the mean of the two middle ones)."""
    corr = np.where(np.isnan(correlations), -np.inf, correlations)
    best = corr.max(axis=-1, keepdims=True)
    order = np.argsort(grid, kind="stable")
    hits = (np.isclose(corr, best) & np.isfinite(corr))[..., order]
    rank, count = np.cumsum(hits, axis=-1), hits.sum(axis=-1)
    low = np.argmax(rank >= ((count + 1) // 2)[..., None], axis=-1)  # a row's rank reaches k at its k-th point
    high = np.argmax(rank >= (count // 2 + 1)[..., None], axis=-1)
    values = grid[order]
    return np.where(count > 0, (values[low] + values[high]) / 2, np.nan)


@dataclass(frozen=True)
class FeedbackMatrices:
    """Yes/no feedback on the judged subjects, per participant: ``disagree`` and ``answered`` are
    participants x subjects counts; ``violations`` is grid x subjects (EaIF violation per alpha)."""

    participants: pd.Index
    subjects: list
    grid: np.ndarray
    violations: np.ndarray
    disagree: np.ndarray
    answered: np.ndarray


def violation_curves(
    effort, aggregate, risk, subjects, *, subject_index: dict, grid_step: float = 0.01
) -> pd.DataFrame:
    """Each of ``subjects``' EaIF violation at every alpha of the grid over [0, 1] (index: the grid; a column per
    subject): computed once, they serve every calibration on these subjects or some of them (a rater group's,
    a permutation's: ``curves=``)."""
    grid = np.round(np.arange(0, 1 + 1e-9, grid_step), 10)
    rows = np.array([subject_index[s] for s in subjects])
    curves = subject_violation_curves(effort, aggregate, risk, alphas=grid, subjects=rows)
    return pd.DataFrame(curves, index=grid, columns=list(subjects))


def feedback_matrices(
    effort, aggregate, risk, feedback: pd.DataFrame, *, subject_index: dict, grid_step: float = 0.01, curves=None
) -> FeedbackMatrices:
    """The counts and the violation curves :func:`calibrate_from_disagreement` works on (feedback on
    subjects outside ``subject_index`` is left out); ``curves``: :func:`violation_curves` of these subjects
    (or more) at this ``grid_step``, when already computed."""
    feedback = feedback[feedback["subject"].isin(subject_index)]
    subjects = sorted(feedback["subject"].unique(), key=str)
    if len(subjects) < 3:
        raise ValueError("need yes/no feedback on at least 3 subjects of the audit population")
    if curves is None:
        curves = violation_curves(effort, aggregate, risk, subjects, subject_index=subject_index, grid_step=grid_step)
    grid, violations = curves.index.to_numpy(float), curves[subjects].to_numpy(float)
    s_idx = pd.Index(subjects).get_indexer(feedback["subject"])
    p_idx, participants = pd.factorize(feedback["participant"])
    disagree = np.zeros((len(participants), len(subjects)))
    answered = np.zeros((len(participants), len(subjects)))
    np.add.at(disagree, (p_idx, s_idx), feedback["disagreement"].to_numpy(float))
    np.add.at(answered, (p_idx, s_idx), 1.0)
    return FeedbackMatrices(participants, subjects, grid, violations, disagree, answered)


def alpha_from_rates(violations: np.ndarray, rates: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The estimate for every row of ``rates`` (R x subjects): the median grid point among those whose
    violations rank-correlate best with the rates; NaN where no grid point gives a defined correlation."""
    return _argbest(_row_spearman(violations, rates), grid)


def calibrate_from_disagreement(
    effort,
    aggregate,
    risk,
    feedback: pd.DataFrame,
    *,
    subject_index: dict,
    grid_step: float = 0.01,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    curves: pd.DataFrame | None = None,
) -> DisagreementCalibration:
    """The effort weight alpha whose EaIF violations best predict the judged subjects' disagreement
    rates (Spearman), with a participant-bootstrap CI (module docstring).

    Parameters
    ----------
    effort, aggregate, risk : arrays of n subjects
        The audit population's effort E, aggregate S and the shown model's risk scores.
    feedback : pandas.DataFrame
        Columns ``participant``, ``subject``, ``disagreement`` (s for the shown model), about at least
        3 subjects.
    subject_index : dict
        Subject id -> position in the effort, aggregate and risk arrays.
    grid_step : float
        The alpha grid's step over [0, 1].
    n_resamples : int
        Bootstrap resamples of the participants.
    seed : int
        The bootstrap's seed.
    level : float
        The CI's confidence level.
    curves : pandas.DataFrame, optional
        :func:`violation_curves` of the judged subjects (or more) at ``grid_step``, when already computed.

    Returns
    -------
    DisagreementCalibration
        ``alpha``, ``ci``, ``correlation`` (at alpha), ``n_subjects``, ``n_participants``, the ``grid``
        and its ``correlations``.

    Raises
    ------
    ValueError
        When no alpha gives a defined correlation (equal rates, or equal violations for every alpha).

    Examples
    --------
    People disagree most with the labels of a and b, subjects close in effort whose scores differ
    most: the violations that match are those that weigh effort most (alpha near 1):

    >>> import pandas as pd
    >>> said = pd.DataFrame({"participant": ["p1"] * 4 + ["p2"] * 4 + ["p3"] * 4, "subject": list("abcd") * 3,
    ...                      "disagreement": [1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1]})
    >>> result = calibrate_from_disagreement([0.0, 0.1, 0.2, 1.0], [0.0, 1.0, 0.5, 0.5], [0.0, 0.8, 0.2, 0.9],
    ...                                      said, subject_index={"a": 0, "b": 1, "c": 2, "d": 3}, n_resamples=100)
    >>> result.alpha, result.n_subjects, result.n_participants
    (0.915, 4, 3)
    """
    data = feedback_matrices(
        effort, aggregate, risk, feedback, subject_index=subject_index, grid_step=grid_step, curves=curves
    )
    grid, violations, disagree, answered = data.grid, data.violations, data.disagree, data.answered
    n_p, n_s = answered.shape
    rates = disagree.sum(axis=0) / answered.sum(axis=0)
    point = _row_spearman(violations, rates[None, :])[0]
    if np.isnan(point).all():
        if np.ptp(rates) == 0:
            why = f"every judged subject has the same disagreement rate ({rates[0]:.3g})"
        else:
            why = "the judged subjects' EaIF violations are equal (e.g. all 0) for every alpha on the grid"
        raise ValueError(
            f"no alpha gives a defined Spearman correlation: {why}; alpha cannot be estimated from this feedback"
        )
    alpha = float(_argbest(point[None, :], grid)[0])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_p, size=(n_resamples, n_p)) + n_p * np.arange(n_resamples)[:, None]
    weights = np.bincount(picks.ravel(), minlength=n_resamples * n_p).reshape(n_resamples, n_p).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_rates = (weights @ disagree) / (weights @ answered)
    boot_rates = np.where(np.isnan(boot_rates), np.nanmean(boot_rates, axis=0), boot_rates)
    boot_alpha = alpha_from_rates(violations, boot_rates, grid)
    tail = (1 - level) / 2
    lo, hi = np.nanquantile(boot_alpha, [tail, 1 - tail])  # resamples with no defined correlation left out
    return DisagreementCalibration(
        alpha=alpha,
        ci=(float(lo), float(hi)),
        criterion="Spearman correlation of per-subject EaIF violation with the subject's disagreement rate",
        correlation=float(np.nanmax(point)),
        n_subjects=n_s,
        n_participants=n_p,
        grid=grid,
        correlations=point,
        seed=seed,
        distribution=boot_alpha,
    )


def boundary_note(alpha: float, ci: tuple[float, float], *, tolerance: float = 1e-9) -> str:
    """What an estimate on the edge of alpha's range [0, 1] means, in words (else ""): the grid search
    cannot go past the edge, so alpha = 0 (d from the aggregate alone) or 1 (from effort alone) says the
    criterion was highest at the edge, not that the best weight is exactly there; the bootstrap alphas
    fall on one side only, and a CI spanning half the range or more says the feedback barely pins alpha down."""
    if not np.isfinite(alpha) or tolerance < alpha < 1 - tolerance:
        return ""
    edge = (
        "0: the distance uses the aggregate alone, effort carries no weight"
        if alpha <= tolerance
        else "1: the distance uses effort alone, the aggregate carries no weight"
    )
    low, high = ci
    width = (
        f" The CI [{low:.2f}, {high:.2f}] spans {high - low:.0%} of the range: the feedback barely determines alpha,"
        " so read the estimate as 'not determined by these data' rather than as a weight to use."
        if np.isfinite(low) and np.isfinite(high) and high - low >= 0.5
        else f" The CI is [{low:.2f}, {high:.2f}]."
    )
    return (
        f"alpha = {alpha:.2f} is at the boundary of [0, 1] (alpha = {edge}). The grid search cannot go past the"
        " edge: the rank correlation with the disagreement rates was highest there, which does not make the"
        " boundary the best weight, and the bootstrap can only fall on one side of it." + width
    )
