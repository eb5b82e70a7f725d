"""Differential parity between stakeholder (rater) groups and between raters and the AI (no Django).

Each rater group's ratings are a decision maker: for rater group r and subject x,
R_r(x) = the mean over r's raters who rated x of the rater's value for x (a rater's repeated ratings of
x are averaged first), so every rater of x counts once. "Raters" (all raters, with a group or without) likewise.
On these per-subject decisions ``fairness.differential_parity.differential_parity`` gives DPT, df, the
paper's one-sided p (``dpt_pvalue``) and DPD (Differential Parity paper, Definitions 2-4), for
* each rater group against the AI (``by_group``) and all raters against the AI (``overall``), when the
  ratings carry the AI's value of each subject (``ai``);
* every pair of rater groups (``between_groups``: R0 = the first group in sorted order, R1 = the second),
on the subjects both decision makers decided (a subject no rater of a group rated is left out of that
group's comparisons). A = 1 for subjects whose ``sensitive`` column equals ``sensitive_value`` (one
against the rest), or ``sensitive`` itself when it is 0/1.

The gap is m_1 - m_0, m_a = mean over subjects with A = a of R0(x) - R1(x): how much more R0 gives
A = 1 than R1 does, relative to A = 0 (DPT is the gap over its standard error). It is linear, so on
subjects every decision maker rated, gap(r vs s) = gap(r vs AI) - gap(s vs AI).

The verdict is not the paper's. The paper's rule (Welch's test on the per-subject decisions, one-sided in
the observed direction) is for two fixed decision sets such as two models; a rater group is a sample of
raters, and that rule treats their per-subject means as fixed: with a one-sided p below .05 in either
direction it says "evidence" more often than 5% under an exact null, and far more when raters differ among
themselves (tests/fairness/test_group_comparisons.py simulates both).
The verdict here rests on rater-level inference at level ``alpha`` (two-sided), and ``rule`` states which:
* two rater groups (``RULE_PERMUTATION``): the group labels of the two groups' raters are permuted
  (each rater keeps their ratings, group sizes kept), p = (1 + #{|gap*_b| >= |gap|}) / (1 + B) over
  ``n_permutations`` permutations (Phipson & Smyth 2010): exact when the two groups' raters are
  exchangeable, whatever the raters' individual styles;
* a rater group (or all raters) against the AI (``RULE_JACKKNIFE``): the AI's decisions are fixed, the
  raters are the sample: t = gap / SE_jack with the delete-one-rater jackknife SE_jack = sqrt((n - 1) / n
  sum_i (gap_(i) - mean gap_(.))^2) over the n raters and p from Student's t with n - 1 df (Quenouille-Tukey
  jackknife). When every rater rated every subject the gap is the mean of the raters' own gaps and this
  is exactly the one-sample t-test of those gaps.
``verdict``, ``direction`` and ``favoured_group`` word that test's result as the paper's verdicts are
worded; ``result.verdict`` keeps the paper's rule for reference.

Confidence intervals of the gap and of DPD resample raters, not answers: every rater rates many
subjects, so raters are the clusters. Raters are drawn with replacement within their rater group (the
group sizes are kept), the per-subject decisions recomputed, and the expanded percentile interval taken
(Hesterberg 2015: the tail at Phi(sqrt(n / (n - 1)) t_{n-1, 0.025}), n the fewer raters of the two). The
subjects are held fixed: the CI says how the comparison would vary with other raters from the same groups
on these subjects (the AI's decisions are for these subjects); DPT's Welch test, which treats subjects
as the sample and raters' decisions as fixed, is the complementary view. Plain percentile intervals
from few raters ran a little narrow (about 91% coverage of a nominal 95% with 20 raters per group); the
coverage of these is measured in ``simulation.coverage_studies`` (``bench/coverage.py``). ``difference()`` is
max_r gap_r - min_r gap_r over the groups against the AI (or DPD with ``metric="effect_size"``); the gaps
are signed, so no ratio is defined. Raters without a group (a missing questionnaire answer) count among
"raters" only (resampled among themselves) and in ``n_without_group``.
"""

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.correlations import resample_counts
from fairness.differential_parity import DifferentialParityResult, Wording, differential_parity
from fairness.rater_groups import (
    expanded_tail,
    group_of_raters,
    membership,
    permutation_pvalue,
    permuted_assignments,
)

RATERS = "raters"
AI = "the AI"
RULE_PERMUTATION = (
    "rater permutation test: evidence when p < alpha, p = (1 + #{|gap*| >= |gap|}) / (1 + B) over B "
    "permutations of the group labels across the two groups' raters (two-sided)"
)
RULE_JACKKNIFE = (
    "rater jackknife t-test: evidence when p < alpha, t = gap / SE (delete-one-rater jackknife), "
    "two-sided p from Student's t with raters - 1 df"
)


@dataclass(frozen=True)
class ParityComparison:
    """Differential parity of decision maker ``names[0]`` (R0) over ``names[1]`` (R1)."""

    names: tuple[str, str]
    result: DifferentialParityResult  # statistic (DPT), df, pvalue, effect_size (DPD), verdict
    gap: float  # m_1 - m_0
    gap_confidence_interval: tuple[float, float]
    effect_size_confidence_interval: tuple[float, float]
    n_subjects: int
    pvalue: float  # the rater-level test's (``rule``), two-sided
    rule: str
    verdict: str
    direction: str | None
    favoured_group: str | None
    note: str = ""


@dataclass(frozen=True)
class RaterGroupParity:
    overall: ParityComparison | None  # all raters vs the AI
    by_group: dict[str, ParityComparison]  # each rater group vs the AI
    between_groups: dict[tuple[str, str], ParityComparison]
    n_raters: dict[str, int]
    n_without_group: int
    n_resamples: int
    seed: int
    n_permutations: int = 0

    def difference(self, metric: str = "gap") -> float:
        """max_r - min_r over the rater groups against the AI of ``gap`` or ``effect_size`` (DPD)."""
        if metric not in ("gap", "effect_size"):
            raise ValueError(f'metric must be "gap" or "effect_size" (got {metric!r})')
        values = [c.gap if metric == "gap" else c.result.effect_size for c in self.by_group.values()]
        return float(max(values) - min(values)) if len(values) > 1 else float("nan")

    def frame(self) -> pd.DataFrame:
        """One row per comparison: R0, R1, DPT, df, p, DPD, gap with CIs, subjects, verdict."""
        comparisons = [*([self.overall] if self.overall else []), *self.by_group.values()]
        rows = []
        for c in [*comparisons, *self.between_groups.values()]:
            r = c.result
            rows.append(
                {
                    "R0": c.names[0],
                    "R1": c.names[1],
                    "DPT": r.statistic,
                    "df": r.df,
                    "dpt_pvalue": r.pvalue,
                    "pvalue": c.pvalue,
                    "DPD": r.effect_size,
                    "DPD_ci_low": c.effect_size_confidence_interval[0],
                    "DPD_ci_high": c.effect_size_confidence_interval[1],
                    "effect": r.effect_label,
                    "gap": c.gap,
                    "gap_ci_low": c.gap_confidence_interval[0],
                    "gap_ci_high": c.gap_confidence_interval[1],
                    "n_subjects": c.n_subjects,
                    "favoured_group": c.favoured_group,
                    "verdict": c.verdict,
                    "rule": c.rule,
                    "note": c.note,
                }
            )
        return pd.DataFrame(rows)


def _per_subject(ratings: pd.DataFrame, column: str, subject: str) -> pd.Series:
    """The subject's one value of ``column`` (refused when a subject has several)."""
    per = ratings.groupby(subject)[column]
    if (per.nunique() > 1).any():
        raise ValueError(f"{column!r} must be one value per subject (subject {per.nunique().idxmax()!r} has several)")
    return per.first()


def _gap_and_effect(r0: np.ndarray, r1: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gap m_1 - m_0 and DPD (pooled SD, Eq. 3) of R0 - R1 for every row (subjects with a NaN left out)."""
    delta = r0 - r1
    parts = [delta[..., a == g] for g in (0, 1)]
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows (a resample with no rater of a group)
        m = [np.nanmean(p, axis=-1) for p in parts]
        n = [np.sum(np.isfinite(p), axis=-1) for p in parts]
        v = [np.nanvar(p, axis=-1, ddof=1) for p in parts]
        pooled = np.sqrt(((n[1] - 1) * v[1] + (n[0] - 1) * v[0]) / (n[1] + n[0] - 2))
        gap = m[1] - m[0]
        return gap, gap / pooled


def _percentile(values: np.ndarray, level: float, n: int) -> tuple[float, float]:
    """The expanded percentile interval (``fairness.rater_groups.expanded_tail``) of the resampled ``values``,
    n the fewest raters among the decision makers resampled."""
    ok = values[np.isfinite(values)]
    if ok.size == 0 or n < 2:
        return float("nan"), float("nan")
    tail = expanded_tail(level, n)
    lo, hi = np.quantile(ok, [tail, 1 - tail])
    return float(lo), float(hi)


def parity_by_rater_group(
    ratings: pd.DataFrame,
    group_columns: str | Sequence[str],
    *,
    rater: str = "rater",
    subject: str = "subject",
    sensitive: str = "sensitive",
    value: str = "value",
    ai: str | None = None,
    sensitive_value=None,
    alpha: float = 0.05,
    favourable: str = "higher",
    outcome: str = "values",
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    min_raters: int = 3,
) -> RaterGroupParity:
    """Differential parity of every rater group against the AI and against each other (see module doc).
    ``ratings`` has one row per rating: ``rater``, the group column(s), ``subject``, the subject's
    ``sensitive`` attribute, the rating ``value`` and optionally the AI's value ``ai``. ``favourable``
    and ``outcome`` word the verdicts as in ``differential_parity``; the verdicts use the rater-level tests
    of the module doc at level ``alpha``. A comparison involving a rater group with fewer than
    ``min_raters`` raters has no CI and no rater-level p (NaN: "no evidence") and a note."""
    needed = [rater, subject, sensitive, value, *([ai] if ai else [])]
    missing = [c for c in needed if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings lack the column(s) {', '.join(map(repr, missing))}")
    ratings = ratings.dropna(subset=[value])
    groups = group_of_raters(ratings, rater, group_columns)  # missing: the rater counts among RATERS only
    without = int(groups.isna().sum())
    if groups.nunique() < 2:
        raise ValueError("rater groups are compared: need raters from at least two rater groups")
    attribute = _per_subject(ratings, sensitive, subject)
    if sensitive_value is None:
        a, names_a = attribute.to_numpy(), (f"{sensitive} = 0", f"{sensitive} = 1")
    else:
        a = (attribute == sensitive_value).astype(int).to_numpy()
        names_a = (
            f"subjects whose {sensitive} is not {sensitive_value}",
            f"subjects whose {sensitive} is {sensitive_value}",
        )
    subjects = attribute.index
    ai_values = _per_subject(ratings, ai, subject).to_numpy(float) if ai else None

    # per rater x subject: the rater's mean value (0 where not rated) and whether they rated it
    r_idx = pd.Index(groups.index).get_indexer(ratings[rater])
    s_idx = subjects.get_indexer(ratings[subject])
    sums = np.zeros((len(groups), len(subjects)))
    counts = np.zeros_like(sums)
    np.add.at(sums, (r_idx, s_idx), ratings[value].to_numpy(float))
    np.add.at(counts, (r_idx, s_idx), 1.0)
    rated = (counts > 0).astype(float)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)

    levels = sorted(groups.dropna().unique())
    members = {g: np.flatnonzero(groups.to_numpy() == g) for g in levels}
    rng = np.random.default_rng(seed)
    weights = np.vstack([np.ones(len(groups)), np.zeros((n_resamples, len(groups)))])  # row 0: the sample
    for idx in [*members.values(), np.flatnonzero(groups.isna().to_numpy())]:
        if idx.size:
            weights[1:, idx] = resample_counts(rng, idx.size, n_resamples)

    def decisions(columns: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """R(x) for every weight row (default: the bootstrap's), over the raters ``columns`` (NaN where
        none of them rated x)."""
        w = weights[:, columns] if w is None else w
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w @ means[columns]) / (w @ rated[columns])

    raters_of = {RATERS: np.arange(len(groups))} | {f"rater group {g}": members[g] for g in levels}

    def rater_pvalue(r0: str, r1: str) -> tuple[float, str]:
        """The rater-level test of the gap (module doc): permutation between groups, jackknife t against the AI."""
        if r1 == AI and ai_values is not None:
            cols = raters_of[r0]
            if cols.size < 2:
                return float("nan"), RULE_JACKKNIFE
            left_out, _ = _gap_and_effect(decisions(cols, 1.0 - np.eye(cols.size)), ai_values, a)
            se = np.sqrt((cols.size - 1) / cols.size * np.sum((left_out - left_out.mean()) ** 2))
            gap, _ = _gap_and_effect(decisions(cols, np.ones((1, cols.size))), ai_values, a)
            with np.errstate(invalid="ignore", divide="ignore"):
                t = gap[0] / se
            return float(2 * stats.t.sf(abs(t), cols.size - 1)) if np.isfinite(t) else float("nan"), RULE_JACKKNIFE
        cols = np.concatenate([raters_of[r0], raters_of[r1]])
        codes = np.repeat([0, 1], [raters_of[r0].size, raters_of[r1].size])
        w = membership(permuted_assignments(codes, n_permutations, seed), 2)
        both = decisions(cols, w)
        gaps, _ = _gap_and_effect(both[:, 0], both[:, 1], a)
        return permutation_pvalue(np.abs(gaps))[1], RULE_PERMUTATION

    makers = {RATERS: decisions(np.arange(len(groups)))} | {f"rater group {g}": decisions(members[g]) for g in levels}
    sizes = {RATERS: len(groups)} | {f"rater group {g}": len(members[g]) for g in levels}
    if ai_values is not None:
        makers[AI] = np.broadcast_to(ai_values, makers[RATERS].shape)

    def compare(r0: str, r1: str) -> ParityComparison:
        few = [f"{m} has {sizes[m]} rater(s)" for m in (r0, r1) if sizes.get(m, min_raters) < min_raters]
        point = differential_parity(
            makers[r0][0],
            makers[r1][0],
            a,
            alpha=alpha,
            favourable=favourable,
            names=(r0, r1),
            groups=names_a,
            outcome=outcome,
        )
        gaps, effects = _gap_and_effect(makers[r0][1:], makers[r1][1:], a)
        fewest = min(sizes[m] for m in (r0, r1) if m in sizes)  # the AI has no raters
        no_ci = (float("nan"), float("nan"))
        gap = point.mean_difference[1] - point.mean_difference[0]
        pvalue, rule = rater_pvalue(r0, r1)
        pvalue = float("nan") if few else pvalue
        words = Wording(favourable, (r0, r1), names_a, outcome)
        verdict, direction, favoured = words.verdict(gap, pvalue, alpha)
        return ParityComparison(
            (r0, r1),
            point,
            gap,
            no_ci if few else _percentile(gaps, level, fewest),
            no_ci if few else _percentile(effects, level, fewest),
            point.n[0] + point.n[1],
            pvalue,
            rule,
            verdict,
            direction,
            favoured,
            f"no CI and no test: {', '.join(few)}, fewer than {min_raters}" if few else "",
        )

    overall = compare(RATERS, AI) if ai_values is not None else None
    by_group = {g: compare(f"rater group {g}", AI) for g in levels} if ai_values is not None else {}
    between = {(g, h): compare(f"rater group {g}", f"rater group {h}") for g, h in combinations(levels, 2)}
    n_raters = {g: len(members[g]) for g in levels}
    return RaterGroupParity(overall, by_group, between, n_raters, without, n_resamples, seed, n_permutations)
