"""Relative fairness: differential parity (Differential Parity paper, Definitions 2-4, Algorithms 1-2).

Two decision sets R0, R1 on the same items with a binary sensitive attribute A; per item the
difference R_delta = R0 - R1. With mean m_a, variance s2_a and size n_a of R_delta in group A = a:
    DPT = (m_1 - m_0) / sqrt(s2_1 / n_1 + s2_0 / n_0)                           (Welch's t, Eq. 2)
    df  = (s2_1/n_1 + s2_0/n_0)^2 / ((s2_1/n_1)^2/(n_1 - 1) + (s2_0/n_0)^2/(n_0 - 1))
    DPD = (m_1 - m_0) / s_pooled, s_pooled^2 = ((n_1-1) s2_1 + (n_0-1) s2_0) / (n_1 + n_0 - 2)   (Eq. 3)
``dpd_scale="pooled"`` (the default, the paper's Eq. 3) divides by s_pooled; ``dpd_scale="overall"``
divides by the SD of R_delta over all items, both groups together (ddof = 1), as the authors' code does
(hil-se/Relative-Fairness-Differential-Parity, ``Metrics.DPD``: ``np.std(y_pred - y, ddof=1)``): it
includes the gap between the groups, so |DPD| is smaller (on the face ratings by up to .015).
The paper reads the test one-tailed in the direction of the statistic: ``pvalue`` = P(T > |DPT|)
with df degrees of freedom. At level alpha, DPT > 0 means R0 gives group A = 1 higher values than R1
does, relative to group A = 0 (DPT < 0: lower values). The paper calls this "R0 relatively biased
towards A = 1" because its ratings are favourable when high; for risk scores a higher value is
unfavourable, so the same sign means the opposite. Every function therefore takes
``favourable="higher"|"lower"`` (which values of the outcome are good for the person), ``names``
(R0, R1 in words, e.g. ("participants", "the AI")), ``groups`` (A = 0, A = 1 in words, e.g.
("subjects whose race is not Black", "subjects whose race is Black")) and ``outcome`` (e.g.
"risk scores"), and the verdict says all of it:
    "Participants gave subjects whose race is Black higher risk scores than the AI did, relative to
    subjects whose race is not Black. With lower risk scores being favourable: compared with the AI,
    participants favoured subjects whose race is not Black over subjects whose race is Black."
or "No evidence at alpha = 0.05 that ...". ``direction`` ("higher"/"lower": R0's outcome for A = 1
relative to R1's, relative to A = 0) and ``favoured_group`` (the group R0 favours compared with R1)
are None without evidence. When R_delta is constant within each group
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
direction; the verdict uses the same words with groups ("items with lower A", "items with higher A")
by default. A constant R0 - R1 gives tau = 0, p = 0.5.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

DpdScale = Literal["pooled", "overall"]
DPD_SCALES: tuple[DpdScale, ...] = ("pooled", "overall")

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
    direction: str | None = None  # "higher"/"lower": R0 vs R1 for A = 1, relative to A = 0; None: no evidence
    favoured_group: str | None = None  # the group R0 favours compared with R1; None: no evidence
    favourable: str = "higher"  # which values of the outcome are good for the person


@dataclass(frozen=True)
class Wording:
    """How a verdict names things: R0 and R1, the groups A = 0 and A = 1, the outcome, and which of its
    values are favourable ("higher" as in the paper's ratings, "lower" for risk scores)."""

    favourable: str = "higher"
    names: tuple[str, str] = ("R0", "R1")
    groups: tuple[str, str] = ("A = 0", "A = 1")
    outcome: str = "values"

    def __post_init__(self):
        if self.favourable not in ("higher", "lower"):
            raise ValueError(f'favourable must be "higher" or "lower" (got {self.favourable!r})')
        if len(self.names) != 2 or len(self.groups) != 2:
            raise ValueError("names and groups must each have two entries: (R0, R1) and (A = 0, A = 1)")

    def verdict(self, t: float, p: float, alpha: float) -> tuple[str, str | None, str | None]:
        """(verdict, direction, favoured_group) for statistic t (> 0: R0 - R1 larger for A = 1)."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
        (r0, r1), (g0, g1) = self.names, self.groups
        if not np.isfinite(p) or p > alpha or t == 0:
            text = (
                f"no evidence at alpha = {alpha:g} that {r0} gave {g1} different {self.outcome} than {r1} did, "
                f"relative to {g0}"
            )
            return text[:1].upper() + text[1:] + ".", None, None
        direction = "higher" if t > 0 else "lower"
        favoured, other = (g1, g0) if direction == self.favourable else (g0, g1)
        text = (
            f"{r0} gave {g1} {direction} {self.outcome} than {r1} did, relative to {g0}. "
            f"With {self.favourable} {self.outcome} being favourable: compared with {r1}, {r0} favoured "
            f"{favoured} over {other}."
        )
        return text[:1].upper() + text[1:], direction, favoured


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


def _from_moments(
    m, v, n, sd2, alpha, method, wording: Wording, df=None, overall_sd2: float | None = None
) -> DifferentialParityResult:
    """m, v (variance of the mean), n, sd2 (variance of R_delta) per group 0/1; ``overall_sd2``: the
    variance of R_delta over all items, DPD's scale instead of the pooled one when given."""
    se = np.sqrt(v[0] + v[1])
    diff = m[1] - m[0]
    pooled = np.sqrt(((n[1] - 1) * sd2[1] + (n[0] - 1) * sd2[0]) / (n[1] + n[0] - 2))
    if overall_sd2 is not None:
        pooled = np.sqrt(overall_sd2)
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
    verdict, direction, favoured = wording.verdict(t, p, alpha)
    return DifferentialParityResult(
        float(t),
        float(df),
        p,
        float(d),
        effect_label(d),
        verdict,
        {0: float(m[0]), 1: float(m[1])},
        {0: int(n[0]), 1: int(n[1])},
        method,
        direction,
        favoured,
        wording.favourable,
    )


def _rounding_tolerance(scale: float) -> float:
    """How far differences R0 - R1 of values up to ``scale`` may be from each other by rounding alone."""
    return 64 * np.finfo(float).eps * scale


def _snap_constant(groups: list[np.ndarray], scale: float) -> tuple[list[np.ndarray], float]:
    """A group whose differences vary only by rounding (R0 - R1 of floats, e.g. 0.1 + 2 - 0.1) is made
    exactly constant, so that identical or shifted decision sets give exactly zero variance."""
    tol = _rounding_tolerance(scale)
    return [np.full(len(g), g.mean()) if np.ptp(g) <= tol else g for g in groups], tol


def differential_parity(
    r0,
    r1,
    sensitive,
    *,
    alpha: float = 0.05,
    favourable: str = "higher",
    names: tuple[str, str] = ("R0", "R1"),
    groups: tuple[str, str] = ("A = 0", "A = 1"),
    outcome: str = "values",
    dpd_scale: DpdScale = "pooled",
) -> DifferentialParityResult:
    """DPT, df, one-sided p-value, DPD and the verdict for two decision sets on the same items.
    ``dpd_scale``: "pooled" (the paper's Eq. 3) or "overall" (the authors' code; module doc).
    ``favourable``: "higher" if a higher value is good for the person (the paper's ratings), "lower"
    for risk scores; ``names`` = (R0, R1), ``groups`` = (A = 0, A = 1) and ``outcome`` word the verdict."""
    wording = Wording(favourable, (names[0], names[1]), (groups[0], groups[1]), outcome)
    r0, r1 = np.asarray(r0, dtype=float), np.asarray(r1, dtype=float)
    a = _binary(sensitive)
    if not (r0.size == r1.size == a.size):
        raise ValueError(f"r0, r1 and sensitive must have equal lengths ({r0.size}, {r1.size}, {a.size})")
    keep = np.isfinite(r0) & np.isfinite(r1)
    delta, a = (r0 - r1)[keep], a[keep]
    parts = [delta[a == g] for g in (0, 1)]
    if min(len(g) for g in parts) < 2:
        raise ValueError("each group needs at least two items")
    parts, tol = _snap_constant(parts, max(np.abs(r0[keep]).max(), np.abs(r1[keep]).max()))
    m = [g.mean() for g in parts]
    if abs(m[1] - m[0]) <= tol:
        m[1] = m[0]
    sd2 = [0.0 if np.ptp(g) == 0 else g.var(ddof=1) for g in parts]
    n = [len(g) for g in parts]
    if dpd_scale not in DPD_SCALES:
        raise ValueError(f"dpd_scale must be one of {', '.join(DPD_SCALES)}, not {dpd_scale!r}")
    every = np.concatenate(parts)
    overall = (0.0 if np.ptp(every) == 0 else float(every.var(ddof=1))) if dpd_scale == "overall" else None
    v = [sd2[i] / n[i] for i in (0, 1)]
    return _from_moments(m, v, n, sd2, alpha, "same items", wording, overall_sd2=overall)


@dataclass(frozen=True)
class ContinuousDPResult:
    statistic: float  # Kendall's tau-b
    pvalue: float
    verdict: str
    n: int
    direction: str | None = None  # "higher"/"lower": R0 vs R1 as A increases; None: no evidence
    favoured_group: str | None = None
    favourable: str = "higher"


def differential_parity_continuous(
    r0,
    r1,
    sensitive,
    *,
    alpha: float = 0.05,
    favourable: str = "higher",
    names: tuple[str, str] = ("R0", "R1"),
    groups: tuple[str, str] = ("items with lower A", "items with higher A"),
    outcome: str = "values",
) -> ContinuousDPResult:
    """Pairwise version for a continuous attribute: Kendall's tau-b between R0 - R1 and A. The
    wording arguments are those of ``differential_parity``; ``groups`` name the low and high ends of A."""
    wording = Wording(favourable, (names[0], names[1]), (groups[0], groups[1]), outcome)
    delta = np.asarray(r0, dtype=float) - np.asarray(r1, dtype=float)
    a = np.asarray(sensitive, dtype=float)
    keep = np.isfinite(delta) & np.isfinite(a)
    scale = max(np.abs(np.asarray(r0, dtype=float)[keep]).max(), np.abs(np.asarray(r1, dtype=float)[keep]).max())
    if np.ptp(delta[keep]) <= _rounding_tolerance(scale):  # R0 - R1 constant: tau is 0/0, no association
        tau, p = 0.0, 0.5
    else:
        res = stats.kendalltau(delta[keep], a[keep])
        tau, p = float(res.statistic), float(res.pvalue / 2)
    verdict, direction, favoured = wording.verdict(tau, p, alpha)
    return ContinuousDPResult(tau, p, verdict, int(keep.sum()), direction, favoured, wording.favourable)


def default_regressor():
    from sklearn.linear_model import RidgeCV

    return RidgeCV(alphas=np.logspace(-3, 3, 13))


def bridged_differential_parity(
    x0,
    r0,
    a0,
    x1,
    r1,
    a1,
    *,
    bridge: str = "biased",
    regressor=None,
    alpha: float = 0.05,
    favourable: str = "higher",
    names: tuple[str, str] = ("R0", "R1"),
    groups: tuple[str, str] = ("A = 0", "A = 1"),
    outcome: str = "values",
) -> DifferentialParityResult:
    """Differential parity of R0 (on X0) over R1 (on X1) through a regressor fitted on (X0, R0);
    ``bridge`` is "unbiased" (Algorithm 1) or "biased" (Algorithm 2). The result's ``method`` says which.

    Applies only to two decision sets for the same task, on the same features in the same units, with
    X0 and X1 drawn from the same distribution (the paper's problem statement, Section 2.3; Section 1:
    "this work does not evaluate differential parity between decisions made for different tasks or in
    different contexts"). Two study conditions on different features (arrests vs income) do not qualify:
    the regressor would extrapolate across units and the estimate would mix task and group effects.
    The wording arguments (``favourable``, ``names``, ``groups``, ``outcome``) are those of
    ``differential_parity``."""
    wording = Wording(favourable, (names[0], names[1]), (groups[0], groups[1]), outcome)
    from sklearn.base import clone

    model = clone(regressor) if regressor is not None else default_regressor()
    r0, r1 = np.asarray(r0, dtype=float), np.asarray(r1, dtype=float)
    a0, a1 = _binary(a0), _binary(a1)
    model.fit(x0, r0)
    f1 = model.predict(x1)
    if bridge == "unbiased":
        result = differential_parity(
            f1, r1, a1, alpha=alpha, favourable=favourable, names=names, groups=groups, outcome=outcome
        )
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
    method = f"biased bridge ({type(model).__name__})"
    return _from_moments(m, v, n, sd2, alpha, method, wording, df=_welch_df(components))
