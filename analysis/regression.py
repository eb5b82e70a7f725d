"""The paper's regressions (effort-aware fairness, Eq. 5-8) with statsmodels.

    d = a0 + a1 d_S + a2 d_E + e          (input space; D for the output space, Eq. 6)
    d = a0 + a1 d_S + a2 d_E + a3 C + a4 d_S C + a5 d_E C + e     (moderation by condition, Eq. 7-8)

Each model is fitted with plain OLS standard errors and with participant-clustered (CR1)
standard errors, because every participant rates many pairs. The Wald tests are H0: a1 = a2 = 0
(chi-square with 2 df, as the paper reports, and its F form) and H0: a1 = a2.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf


@dataclass(frozen=True)
class WaldResult:
    chi2: float
    f: float
    df: tuple[int, int]
    pvalue_chi2: float
    pvalue_f: float


@dataclass(frozen=True)
class RegressionResult:
    formula: str
    n: int
    params: pd.Series
    bse: pd.Series
    pvalues: pd.Series
    conf_int: pd.DataFrame
    rsquared: float
    rsquared_adj: float
    fvalue: float
    cov_type: str
    wald_joint: WaldResult
    wald_equal: WaldResult
    model: Any  # the statsmodels results object

    def summary(self) -> str:
        return str(self.model.summary())


def _wald(fit, hypothesis: str) -> WaldResult:
    chi = fit.wald_test(hypothesis, use_f=False, scalar=True)
    f = fit.wald_test(hypothesis, use_f=True, scalar=True)
    q = int(np.asarray(f.df_num))
    return WaldResult(
        float(chi.statistic), float(f.statistic), (q, int(np.asarray(f.df_denom))), float(chi.pvalue), float(f.pvalue)
    )


def fit_ols(
    data: pd.DataFrame, formula: str, *, terms: tuple[str, str], cluster: str | None = None
) -> RegressionResult:
    """OLS of ``formula`` (statsmodels' formula API) with Wald tests of two coefficients: jointly zero
    and equal.

    Parameters
    ----------
    data : pandas.DataFrame
        The data; rows with a missing value in a column the formula names are dropped.
    formula : str
        A patsy formula, e.g. ``"d_overall ~ d_aggr + d_traj"``.
    terms : (str, str)
        The two coefficients tested jointly (both 0) and for equality.
    cluster : str, optional
        A column: standard errors and tests are then cluster-robust by it (CR1).

    Returns
    -------
    RegressionResult
        ``params``, ``bse``, ``pvalues``, ``conf_int``, ``rsquared``, ``wald_joint``, ``wald_equal``,
        the statsmodels ``model`` and ``summary()``.

    Examples
    --------
    Ratings built as 1 + 0.2 d_aggr + 0.6 d_traj plus noise orthogonal to both: OLS recovers the
    coefficients exactly, and the test of equal weights rejects:

    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"participant_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                       "d_aggr": [1, 2, 3, 1, 2, 3, 1, 2, 3], "d_traj": [1, 2, 3, 3, 1, 2, 2, 3, 1]})
    >>> noise = [0.1, -0.2, 0.1] * 3  # sums to 0 and is uncorrelated with d_aggr and d_traj
    >>> pairs["d_overall"] = 1 + 0.2 * pairs["d_aggr"] + 0.6 * pairs["d_traj"] + noise
    >>> fit = fit_ols(pairs, "d_overall ~ d_aggr + d_traj", terms=("d_aggr", "d_traj"))
    >>> fit.params.round(4).to_dict()
    {'Intercept': 1.0, 'd_aggr': 0.2, 'd_traj': 0.6}
    >>> round(fit.wald_equal.f, 4), fit.wald_equal.df
    (16.0, (1, 6))
    """
    columns = [c for c in data.columns if c in formula or c == cluster]
    frame = data[columns].dropna()
    model = smf.ols(formula, frame)
    if cluster is None:
        fit = model.fit()
    else:
        groups = pd.factorize(frame[cluster])[0]
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    a, b = terms
    return RegressionResult(
        formula=formula,
        n=int(fit.nobs),
        params=fit.params,
        bse=fit.bse,
        pvalues=fit.pvalues,
        conf_int=fit.conf_int(),
        rsquared=float(fit.rsquared),
        rsquared_adj=float(fit.rsquared_adj),
        fvalue=float(np.asarray(fit.fvalue)),
        cov_type=fit.cov_type,
        wald_joint=_wald(fit, f"{a} = 0, {b} = 0"),
        wald_equal=_wald(fit, f"{a} = {b}"),
        model=fit,
    )


def distance_regression(pairs: pd.DataFrame, outcome: str, *, cluster: str | None = None) -> RegressionResult:
    """Regress a distance on d_S and d_E: Eq. 5 (``d_overall``) or Eq. 6 (``output_distance``).

    outcome ~ a0 + a1 d_S + a2 d_E on the pairs export (Nguyen et al., effort-aware fairness), by :func:`fit_ols`.

    Parameters
    ----------
    pairs : pandas.DataFrame
        The pairs export: ``d_aggr`` (d_S), ``d_traj`` (d_E) and the outcome.
    outcome : str
        ``"d_overall"`` (Eq. 5) or ``"output_distance"`` (Eq. 6).
    cluster : str, optional
        A column (e.g. ``participant_id``) for cluster-robust standard errors.

    Returns
    -------
    RegressionResult
        As :func:`fit_ols`, testing a1 = a2 = 0 and a1 = a2.

    Examples
    --------
    A participant who weighs the trajectory three times the aggregate:

    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"d_aggr": [1, 2, 3, 1, 2, 3], "d_traj": [1, 1, 2, 2, 3, 3]})
    >>> pairs["d_overall"] = 1 + 0.5 * pairs["d_aggr"] + 1.5 * pairs["d_traj"]
    >>> distance_regression(pairs, "d_overall").params.round(4).to_dict()
    {'Intercept': 1.0, 'd_aggr': 0.5, 'd_traj': 1.5}
    """
    return fit_ols(pairs, f"{outcome} ~ d_aggr + d_traj", terms=("d_aggr", "d_traj"), cluster=cluster)


def moderation_regression(
    pairs: pd.DataFrame, outcome: str, *, moderator_level: str, cluster: str | None = None
) -> RegressionResult:
    """Whether a condition changes the weights of d_S and d_E (Eq. 7-8, the moderation regression).

    Indicator C = 1 for condition ``moderator_level`` (the paper's C_CLUE) and its interactions with d_S
    and d_E; the tests concern the two interaction terms.

    outcome ~ b0 + b1 d_S + b2 d_E + b3 C + b4 d_S C + b5 d_E C, by :func:`fit_ols`.

    Parameters
    ----------
    pairs : pandas.DataFrame
        The pairs export of two conditions: ``condition``, ``d_aggr``, ``d_traj`` and the outcome.
    outcome : str
        ``"d_overall"`` or ``"output_distance"``.
    moderator_level : str
        The condition coded C = 1.
    cluster : str, optional
        A column for cluster-robust standard errors.

    Returns
    -------
    RegressionResult
        As :func:`fit_ols`, testing b4 = b5 = 0 and b4 = b5.

    Examples
    --------
    The trajectory weighs 0.6 in the arrests condition and 0.2 in the income one, so d_E's interaction
    with C (income) is 0.2 - 0.6 = -0.4:

    >>> import pandas as pd
    >>> base = pd.DataFrame({"d_aggr": [1, 2, 3, 1, 2, 3], "d_traj": [1, 1, 2, 2, 3, 3]})
    >>> pairs = pd.concat([base.assign(condition="arrests", d_overall=1 + 0.2 * base.d_aggr + 0.6 * base.d_traj),
    ...                    base.assign(condition="income", d_overall=1 + 0.2 * base.d_aggr + 0.2 * base.d_traj)])
    >>> fit = moderation_regression(pairs, "d_overall", moderator_level="income")
    >>> fit.params.round(4)[["d_aggr:C", "d_traj:C"]].abs().to_dict()
    {'d_aggr:C': 0.0, 'd_traj:C': 0.4}
    """
    frame = pairs.assign(C=(pairs["condition"] == moderator_level).astype(float))
    formula = f"{outcome} ~ d_aggr + d_traj + C + d_aggr:C + d_traj:C"
    return fit_ols(frame, formula, terms=("d_aggr:C", "d_traj:C"), cluster=cluster)
