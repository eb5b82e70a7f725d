"""The effort weight alpha = a2 / (a1 + a2) from one OLS fit of Eq. 5 (d_overall ~ a0 + a1 d_aggr + a2 d_traj;
the effort-aware fairness paper), with participant-clustered (CR1) and plain delta-method standard errors."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.regression.linear_model import OLS
from statsmodels.tools.tools import add_constant


@dataclass(frozen=True)
class AlphaEstimate:
    """alpha = a2 / (a1 + a2) from one fit of Eq. 5, with delta-method SEs (clustered and plain)."""

    statistic: float
    se: float  # participant-clustered (CR1)
    se_plain: float
    wald_pvalue: float  # clustered Wald test of a1 = a2 (chi-square, 1 df)
    a1: float
    a2: float

    def confidence_interval(self, confidence_level: float = 0.95, *, plain: bool = False) -> tuple[float, float]:
        half = norm.ppf(0.5 + confidence_level / 2) * (self.se_plain if plain else self.se)
        return self.statistic - half, self.statistic + half


def alpha_estimate(pairs: pd.DataFrame, *, cluster: str = "participant_id") -> AlphaEstimate:
    """The effort weight alpha from one OLS fit of Eq. 5, with clustered and plain delta-method SEs.

    Eq. 5 is d_overall ~ a0 + a1 d_aggr + a2 d_traj; alpha = a2 / (a1 + a2) and var(alpha) = g' V g with
    g = (-a2, a1) / (a1 + a2)^2, V the plain or the ``cluster``-robust (CR1, statsmodels) covariance.

    Parameters
    ----------
    pairs : pandas.DataFrame
        The pairs export of one condition: ``d_aggr``, ``d_traj``, ``d_overall`` and ``cluster``.
    cluster : str
        The column the robust covariance clusters by (the participant).

    Returns
    -------
    AlphaEstimate
        ``statistic`` (alpha), ``se`` (clustered), ``se_plain``, ``wald_pvalue`` (a1 = a2), ``a1``, ``a2``
        and ``confidence_interval()``.

    Examples
    --------
    Ratings built as 1 + 0.2 d_aggr + 0.6 d_traj plus noise orthogonal to both, so alpha = 0.6 / 0.8:

    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"participant_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                       "d_aggr": [1, 2, 3, 1, 2, 3, 1, 2, 3], "d_traj": [1, 2, 3, 3, 1, 2, 2, 3, 1]})
    >>> noise = [0.1, -0.2, 0.1] * 3  # sums to 0 and is uncorrelated with d_aggr and d_traj
    >>> pairs["d_overall"] = 1 + 0.2 * pairs["d_aggr"] + 0.6 * pairs["d_traj"] + noise
    >>> est = alpha_estimate(pairs)
    >>> round(est.statistic, 4), round(est.a1, 4), round(est.a2, 4)
    (0.75, 0.2, 0.6)
    """
    x = add_constant(pairs[["d_aggr", "d_traj"]].to_numpy(float), has_constant="add")
    fit = OLS(pairs["d_overall"].to_numpy(float), x).fit()
    clustered = fit.get_robustcov_results("cluster", groups=pd.factorize(pairs[cluster])[0])
    _, a1, a2 = fit.params
    g = np.array([0.0, -a2, a1]) / (a1 + a2) ** 2
    contrast = np.array([0.0, -1.0, 1.0])
    cov = clustered.cov_params()
    z = (a2 - a1) / np.sqrt(contrast @ cov @ contrast)
    return AlphaEstimate(
        statistic=float(a2 / (a1 + a2)),
        se=float(np.sqrt(g @ cov @ g)),
        se_plain=float(np.sqrt(g @ fit.cov_params() @ g)),
        wald_pvalue=float(2 * norm.sf(abs(z))),
        a1=float(a1),
        a2=float(a2),
    )
