"""Force-based effort and the aggregate feature (effort-aware fairness paper, Eq. 9-11).

A yearly (non-cumulative) series x_0..x_{T-1} is first made cumulative, X_t = sum_{s<=t} x_s.
Velocities V_i = X_{i+1} - X_i (i = 0..T-2) and accelerations A_i = V_{i+1} - V_i (i = 0..T-3), so
A_i = x_{i+2} - x_{i+1}: the cumulative acceleration is the yearly change. A_avg is the mean of the
T-2 accelerations, which telescopes to (x_{T-1} - x_1) / (T - 2). Effort is
E = m * sigmoid(A_avg) for a desirable feature (income, Eq. 9) and m * (1 - sigmoid(A_avg)) for an
undesirable one (arrests, Eq. 10), with inertia m in [0, 1]. The aggregate is
S(x) = 2 * sigmoid(X_{T-1} / lambda) - 1 (Eq. 11), with lambda = $200k for income and 1 arrest for
arrests (Eq. 15).
"""

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

#: Childhood poverty rates by race (NCES 2012, as quoted in the paper's "Computing Effort").
CHILDHOOD_POVERTY_RATE: Mapping[str, float] = {
    "White": 0.13,
    "Asian": 0.14,
    "Pacific Islander": 0.25,
    "American Indian": 0.36,
    "Black": 0.39,
}


def poverty_inertia_table() -> dict[str, float]:
    """Inertia m per race: the poverty rate divided by the largest rate (39%), as the paper does."""
    top = max(CHILDHOOD_POVERTY_RATE.values())
    return {race: rate / top for race, rate in CHILDHOOD_POVERTY_RATE.items()}


def inertia_from_groups(groups: Sequence[str], mapping: Mapping[str, float] | None = None) -> np.ndarray:
    """Map each group label to its inertia; raises ``KeyError`` naming labels with no value."""
    table = poverty_inertia_table() if mapping is None else dict(mapping)
    missing = sorted({g for g in groups if g not in table})
    if missing:
        raise KeyError(f"no inertia value for group(s) {missing}; give a mapping that covers them")
    return np.array([table[g] for g in groups], dtype=float)


def _as_series_matrix(series: np.ndarray | Sequence[Sequence[float]] | pd.DataFrame) -> np.ndarray:
    values = np.asarray(series, dtype=float)
    if values.ndim == 1:
        values = values[np.newaxis, :]
    if values.ndim != 2:
        raise ValueError(f"series must be an n x T array, got shape {values.shape}")
    if values.shape[1] < 3:
        raise ValueError(f"effort needs T >= 3 time steps, got T = {values.shape[1]}")
    if not np.all(np.isfinite(values)):
        raise ValueError("series contains missing or infinite values")
    return values


def trend_slope(series) -> float:
    """Least-squares slope of the yearly values against the year index (units per year)."""
    values = np.asarray(series, dtype=float)
    t = np.arange(values.size) - (values.size - 1) / 2
    return float((t * values).sum() / (t * t).sum())


def cumulative(series: np.ndarray) -> np.ndarray:
    """X_t = sum of the yearly values up to and including t.

    Parameters
    ----------
    series : array of shape (n_subjects, T)
        Each subject's yearly (non-cumulative) values.

    Returns
    -------
    numpy.ndarray
        Shape (n_subjects, T).

    Examples
    --------
    >>> cumulative([[0, 1, 3]]).tolist()
    [[0.0, 1.0, 4.0]]
    """
    return np.cumsum(_as_series_matrix(series), axis=1)


def velocities(series: np.ndarray) -> np.ndarray:
    """V_i = X_{i+1} - X_i, i = 0..T-2 (equal to the yearly values x_1..x_{T-1}).

    Parameters
    ----------
    series : array of shape (n_subjects, T)
        Each subject's yearly (non-cumulative) values.

    Returns
    -------
    numpy.ndarray
        Shape (n_subjects, T - 1).

    Examples
    --------
    >>> velocities([[0, 1, 3]]).tolist()
    [[1.0, 3.0]]
    """
    return np.diff(cumulative(series), axis=1)


def accelerations(series: np.ndarray) -> np.ndarray:
    """A_i = V_{i+1} - V_i, i = 0..T-3.

    Parameters
    ----------
    series : array of shape (n_subjects, T)
        Each subject's yearly (non-cumulative) values.

    Returns
    -------
    numpy.ndarray
        Shape (n_subjects, T - 2).

    Examples
    --------
    >>> accelerations([[0, 1, 3]]).tolist()
    [[2.0]]
    """
    return np.diff(velocities(series), axis=1)


def average_acceleration(series: np.ndarray) -> np.ndarray:
    """A_avg, the mean of the T-2 cumulative accelerations (one value per subject).

    Parameters
    ----------
    series : array of shape (n_subjects, T)
        Each subject's yearly (non-cumulative) values.

    Returns
    -------
    numpy.ndarray
        Shape (n_subjects,).

    Examples
    --------
    >>> average_acceleration([[0, 1, 3]]).tolist()
    [2.0]
    """
    return accelerations(series).mean(axis=1)


def effort(series: np.ndarray, inertia: np.ndarray | Sequence[float], *, desirable: bool) -> np.ndarray:
    """E = m * sigmoid(A_avg) (desirable feature, Eq. 9) or m * (1 - sigmoid(A_avg)) (Eq. 10).

    Parameters
    ----------
    series : array of shape (n_subjects, T), T >= 3
        Each subject's yearly (non-cumulative) values of the effort feature.
    inertia : n_subjects values in [0, 1]
        Each subject's inertia m (e.g. ``inertia_from_groups``).
    desirable : bool
        True for a feature whose growth is good (income), False otherwise (arrests).

    Returns
    -------
    numpy.ndarray
        The effort E of each subject.

    Examples
    --------
    Cumulative values 0, 1, 4 accelerate by 2 (sigmoid(2) = 0.8808); 2, 4, 6 not at all (sigmoid(0) = 0.5):

    >>> import numpy as np
    >>> np.round(effort(np.array([[0, 1, 3], [2, 2, 2]]), [0.5, 1.0], desirable=True), 4).tolist()
    [0.4404, 0.5]
    """
    a_avg = average_acceleration(series)
    m = np.asarray(inertia, dtype=float).reshape(-1)
    if m.shape[0] != a_avg.shape[0]:
        raise ValueError(f"inertia has {m.shape[0]} values for {a_avg.shape[0]} subjects")
    if np.any((m < 0) | (m > 1)):
        raise ValueError("inertia must lie in [0, 1]")
    pull = expit(a_avg) if desirable else 1.0 - expit(a_avg)
    return m * pull


def aggregate(series: np.ndarray, *, scale: float) -> np.ndarray:
    """S(x) = 2 * sigmoid(X_{T-1} / scale) - 1 (Eq. 11), in [0, 1) for non-negative series.

    Parameters
    ----------
    series : array of shape (n_subjects, T)
        Each subject's yearly (non-cumulative) values.
    scale : float
        lambda, the total at which S reaches 2 sigmoid(1) - 1 = 0.4621.

    Returns
    -------
    numpy.ndarray
        The aggregate S of each subject.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(aggregate(np.array([[0, 1, 3]]), scale=4.0), 4).tolist()
    [0.4621]
    """
    if scale <= 0:
        raise ValueError("scale (lambda) must be positive")
    total = cumulative(series)[:, -1]
    return 2.0 * expit(total / scale) - 1.0
