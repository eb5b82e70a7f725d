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
    """OLS of ``formula``; ``terms`` names the two coefficients tested jointly and for equality.
    With ``cluster`` (a column), standard errors and tests are cluster-robust by that column."""
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
    """Eq. 5 (outcome ``d_overall``) or Eq. 6 (``output_distance``) on the pairs export."""
    return fit_ols(pairs, f"{outcome} ~ d_aggr + d_traj", terms=("d_aggr", "d_traj"), cluster=cluster)


def moderation_regression(
    pairs: pd.DataFrame, outcome: str, *, moderator_level: str, cluster: str | None = None
) -> RegressionResult:
    """Eq. 7-8: indicator C = 1 for condition ``moderator_level`` (the paper's C_CLUE) and its
    interactions with d_S and d_E; the tests concern the two interaction terms."""
    frame = pairs.assign(C=(pairs["condition"] == moderator_level).astype(float))
    formula = f"{outcome} ~ d_aggr + d_traj + C + d_aggr:C + d_traj:C"
    return fit_ols(frame, formula, terms=("d_aggr:C", "d_traj:C"), cluster=cluster)
