"""Relative fairness: differential parity (Differential Parity paper, Definitions 2-4, Algorithms 1-2).

Two decision sets R0, R1 on the same items with a binary sensitive attribute A; per item the
difference R_delta = R0 - R1. With mean m_a, variance s2_a and size n_a of R_delta in group A = a:
    DPT = (m_1 - m_0) / sqrt(s2_1 / n_1 + s2_0 / n_0)                           (Welch's t, Eq. 2)
    df  = (s2_1/n_1 + s2_0/n_0)^2 / ((s2_1/n_1)^2/(n_1 - 1) + (s2_0/n_0)^2/(n_0 - 1))
    DPD = (m_1 - m_0) / s_pooled, s_pooled^2 = ((n_1-1) s2_1 + (n_0-1) s2_0) / (n_1 + n_0 - 2)   (Eq. 3)
The paper reads the test one-tailed in the direction of the statistic: ``pvalue`` = P(T > |DPT|)
with df degrees of freedom; at level alpha the verdict is "R0 relatively biased towards A = 1"
(DPT > 0), "towards A = 0" (DPT < 0) or "no evidence". When R_delta is constant within each group
(identical decision sets, or R0 = R1 + c) the formulas are 0/0: equal constants give DPT = 0,
p = 0.5, DPD = 0 ("no evidence"); different constants give DPT = DPD = +-inf, p = 0; df is then
n_1 + n_0 - 2 (documented choices). ``effect_label`` uses Table 1 (Cohen's d
descriptors: very small 0.01, small 0.2, medium 0.5, large 0.8, very large 1.2, huge 2.0;
below 0.01 "negligible").

Decision sets on different items use a regressor f fitted on (X0, R0) as a bridge (Section 2.3):
* unbiased bridge (Algorithm 1): DPT/DPD of f(X1) against R1 on X1;
* biased bridge (Algorithm 2): m_a = mean(f - R1 | X1, a) - mean(f - R0 | X0, a) (Eq. 6), variance
  of that mean = s2(E1)/n1 + s2(E0)/n0 (Eq. 7); df by Welch-Satterthwaite over the four terms
  (documented choice); DPD divides by the pooled SD of R_delta estimated as sqrt(s2(E1) + s2(E0)) per
  group (independent errors; documented choice).

Continuous A (pairwise version, a documented choice answering the paper's limitation L1):
Kendall's tau-b between R_delta and A over all item pairs, with the one-sided p-value in its
direction; verdict "biased towards higher A" / "lower A". A constant R0 - R1 gives tau = 0, p = 0.5.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

EFFECT_SIZES = (
    (2.0, "huge"),
    (1.2, "very large"),
    (0.8, "large"),
    (0.5, "medium"),
    (0.2, "small"),
    (0.01, "very small"),
)


def effect_label(d: float) -> str:
    magnitude = abs(d)
    return next((label for threshold, label in EFFECT_SIZES if magnitude >= threshold), "negligible")


@dataclass(frozen=True)
class DifferentialParityResult:
    statistic: float  # DPT
    df: float
    pvalue: float  # one-sided, in the direction of the statistic
    effect_size: float  # DPD
    effect_label: str
    verdict: str
    mean_difference: dict  # {0: m_0, 1: m_1}
    n: dict  # {0: n_0, 1: n_1}
    method: str = "same items"


def _verdict(t: float, p: float, alpha: float, towards=("A = 1", "A = 0")) -> str:
    if not np.isfinite(p) or p > alpha:
        return "no evidence"
    return f"R0 relatively biased towards {towards[0] if t > 0 else towards[1]}"


def _binary(sensitive) -> np.ndarray:
    a = np.asarray(sensitive)
    values = set(pd.unique(a).tolist())
    if not values <= {0, 1}:
        raise ValueError(
            f"sensitive must be binary 0/1 for this test (got values {sorted(map(str, values))[:5]}); "
            "use differential_parity_continuous for a continuous attribute"
        )
    if len(values) < 2:
        raise ValueError("the sensitive attribute takes a single value: both groups are needed")
    return a.astype(int)


def _welch_df(components: list[tuple[float, int]]) -> float:
    """Welch-Satterthwaite df from (variance of a mean, sample size) components."""
    total = sum(v for v, _ in components)
    return total**2 / sum(v**2 / (n - 1) for v, n in components)


def _from_moments(m, v, n, sd2, alpha, method, df=None) -> DifferentialParityResult:
    """m, v (variance of the mean), n, sd2 (variance of R_delta) per group 0/1."""
    se = np.sqrt(v[0] + v[1])
    diff = m[1] - m[0]
    pooled = np.sqrt(((n[1] - 1) * sd2[1] + (n[0] - 1) * sd2[0]) / (n[1] + n[0] - 2))
    if se > 0:
        t = diff / se
        if df is None:
            df = _welch_df([(v[0], n[0]), (v[1], n[1])])
        p = float(stats.t.sf(abs(t), df))
    else:
        # R_delta is constant within each group (e.g. identical decision sets): Welch's df is 0/0, so
        # df is Student's n_1 + n_0 - 2. Equal constants: no difference at all, t = 0 and p = 0.5 (the
        # one-sided tail at 0). Different constants: a deterministic gap, t = +-inf and p = 0.
        df = n[1] + n[0] - 2
        t = 0.0 if diff == 0 else np.copysign(np.inf, diff)
        p = 0.5 if diff == 0 else 0.0
    d = diff / pooled if pooled > 0 else (0.0 if diff == 0 else np.copysign(np.inf, diff))
    return DifferentialParityResult(
        float(t),
        float(df),
        p,
        float(d),
        effect_label(d),
        _verdict(t, p, alpha),
        {0: float(m[0]), 1: float(m[1])},
        {0: int(n[0]), 1: int(n[1])},
        method,
    )


def _snap_constant(groups: list[np.ndarray], scale: float) -> tuple[list[np.ndarray], float]:
    """A group whose differences vary only by rounding (R0 - R1 of floats, e.g. 0.1 + 2 - 0.1) is made
    exactly constant, so that identical or shifted decision sets give exactly zero variance."""
    tol = 64 * np.finfo(float).eps * scale
    return [np.full(len(g), g.mean()) if np.ptp(g) <= tol else g for g in groups], tol


def differential_parity(r0, r1, sensitive, *, alpha: float = 0.05) -> DifferentialParityResult:
    """DPT, df, one-sided p-value, DPD and the verdict for two decision sets on the same items."""
    r0, r1 = np.asarray(r0, dtype=float), np.asarray(r1, dtype=float)
    a = _binary(sensitive)
    if not (r0.size == r1.size == a.size):
        raise ValueError(f"r0, r1 and sensitive must have equal lengths ({r0.size}, {r1.size}, {a.size})")
    keep = np.isfinite(r0) & np.isfinite(r1)
    delta, a = (r0 - r1)[keep], a[keep]
    groups = [delta[a == g] for g in (0, 1)]
    if min(len(g) for g in groups) < 2:
        raise ValueError("each group needs at least two items")
    groups, tol = _snap_constant(groups, max(np.abs(r0[keep]).max(), np.abs(r1[keep]).max()))
    m = [g.mean() for g in groups]
    if abs(m[1] - m[0]) <= tol:
        m[1] = m[0]
    sd2 = [0.0 if np.ptp(g) == 0 else g.var(ddof=1) for g in groups]
    n = [len(g) for g in groups]
    return _from_moments(m, [sd2[i] / n[i] for i in (0, 1)], n, sd2, alpha, "same items")


@dataclass(frozen=True)
class ContinuousDPResult:
    statistic: float  # Kendall's tau-b
    pvalue: float
    verdict: str
    n: int


def differential_parity_continuous(r0, r1, sensitive, *, alpha: float = 0.05) -> ContinuousDPResult:
    """Pairwise version for a continuous attribute: Kendall's tau-b between R0 - R1 and A."""
    delta = np.asarray(r0, dtype=float) - np.asarray(r1, dtype=float)
    a = np.asarray(sensitive, dtype=float)
    keep = np.isfinite(delta) & np.isfinite(a)
    scale = max(np.abs(np.asarray(r0, dtype=float)[keep]).max(), np.abs(np.asarray(r1, dtype=float)[keep]).max())
    if np.ptp(delta[keep]) <= 64 * np.finfo(float).eps * scale:  # R0 - R1 constant: tau is 0/0, no association
        tau, p = 0.0, 0.5
    else:
        res = stats.kendalltau(delta[keep], a[keep])
        tau, p = float(res.statistic), float(res.pvalue / 2)
    return ContinuousDPResult(tau, p, _verdict(tau, p, alpha, ("higher A", "lower A")), int(keep.sum()))


def default_regressor():
    from sklearn.linear_model import RidgeCV

    return RidgeCV(alphas=np.logspace(-3, 3, 13))


def bridged_differential_parity(
    x0, r0, a0, x1, r1, a1, *, bridge: str = "biased", regressor=None, alpha: float = 0.05
) -> DifferentialParityResult:
    """Differential parity of R0 (on X0) over R1 (on X1) through a regressor fitted on (X0, R0);
    ``bridge`` is "unbiased" (Algorithm 1) or "biased" (Algorithm 2). The result's ``method`` says which.

    Applies only to two decision sets for the same task, on the same features in the same units, with
    X0 and X1 drawn from the same distribution (the paper's problem statement, Section 2.3; Section 1:
    "this work does not evaluate differential parity between decisions made for different tasks or in
    different contexts"). Two study conditions on different features (arrests vs income) do not qualify:
    the regressor would extrapolate across units and the estimate would mix task and group effects."""
    from sklearn.base import clone

    model = clone(regressor) if regressor is not None else default_regressor()
    r0, r1 = np.asarray(r0, dtype=float), np.asarray(r1, dtype=float)
    a0, a1 = _binary(a0), _binary(a1)
    model.fit(x0, r0)
    f1 = model.predict(x1)
    if bridge == "unbiased":
        result = differential_parity(f1, r1, a1, alpha=alpha)
        return DifferentialParityResult(**{**result.__dict__, "method": f"unbiased bridge ({type(model).__name__})"})
    if bridge != "biased":
        raise ValueError("bridge must be 'biased' or 'unbiased'")
    e0 = model.predict(x0) - r0
    e1 = f1 - r1
    m, v, n, sd2, components = [], [], [], [], []
    for g in (0, 1):
        g0, g1 = e0[a0 == g], e1[a1 == g]
        if len(g0) < 2 or len(g1) < 2:
            raise ValueError("each group needs at least two items in both data sets")
        m.append(g1.mean() - g0.mean())
        v.append(g1.var(ddof=1) / len(g1) + g0.var(ddof=1) / len(g0))
        n.append(len(g1))
        sd2.append(g1.var(ddof=1) + g0.var(ddof=1))
        components += [(g1.var(ddof=1) / len(g1), len(g1)), (g0.var(ddof=1) / len(g0), len(g0))]
    return _from_moments(m, v, n, sd2, alpha, f"biased bridge ({type(model).__name__})", df=_welch_df(components))
