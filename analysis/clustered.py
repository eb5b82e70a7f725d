"""The project's one cluster-robust convention for models fitted to raters' judgements (every rater makes
many): the CR1 sandwich with the G/(G-1) factor and t intervals and tests on G - 1 degrees of freedom,
G the number of raters (clusters) (Liang & Zeger 1986; Cameron & Miller 2015, Sec. VI.B):

    V = G/(G-1) A^-1 (sum_g u_g u_g') A^-1,   CI = b -/+ t_{G-1, 1-alpha/2} sqrt(V_jj)

with A the information and u_g the sum of cluster g's score vectors. ``analysis.paired_comparison``
(Bradley-Terry strengths, the utility model's pooled weights) and ``fairness.feature_fairness`` (the
latent-property model) use it. It is ``sandwich::vcovCL(fit, cluster, type = "HC0", cadjust = TRUE)``
in R; statsmodels' default ``use_correction`` adds (N-1)/(N-K), which is left out here.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class ClusteredFit:
    """Coefficients with their CR1 standard errors, t statistics, p-values and intervals (G - 1 df), and
    their CR1 ``covariance``."""

    params: np.ndarray
    standard_error: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_clusters: int
    covariance: np.ndarray | None = None


def t_inference(params: np.ndarray, covariance: np.ndarray, n_clusters: int, level: float) -> ClusteredFit:
    """Wald t statistics, two-sided p-values and ``level`` intervals on ``n_clusters`` - 1 df."""
    se = np.sqrt(np.diag(covariance))
    df = n_clusters - 1
    t = params / se
    half = stats.t.ppf(0.5 + level / 2, df) * se
    pvalue = 2 * stats.t.sf(np.abs(t), df)
    return ClusteredFit(params, se, t, pvalue, params - half, params + half, n_clusters, covariance)


def clustered_logit(y: np.ndarray, design: np.ndarray, clusters: np.ndarray, *, level: float = 0.95) -> ClusteredFit:
    """Logit MLE of ``y`` (0/1) on ``design`` (include a constant column to have an intercept) with the
    module's CR1 convention over ``clusters`` (integer codes). ValueError with fewer than two clusters;
    statsmodels' errors (perfect separation, a singular design) pass through."""
    from statsmodels.discrete.discrete_model import Logit

    n_clusters = len(np.unique(clusters))
    if n_clusters < 2:
        raise ValueError(f"{n_clusters} rater; rater-clustered SEs need 2")
    fit = Logit(y, design).fit(
        disp=0, maxiter=200, cov_type="cluster", cov_kwds={"groups": clusters, "use_correction": False}
    )
    covariance = np.asarray(fit.cov_params()) * n_clusters / (n_clusters - 1)
    return t_inference(np.asarray(fit.params), covariance, n_clusters, level)
