"""Disagreement feedback split by who answered: stakeholder (rater) groups compared (no Django).

The disagreement poster's premise is that diverse stakeholders judge an AI's labels differently. For
each rater group r (a questionnaire answer such as stakeholder role, or a demographic), the rates and
notions of :mod:`fairness.disagreement` are computed from r's answers alone: subject groups m, model
labels k, disagreement s = 1 when the rater's own label differs from the model's. A statistic T is
either the disagreement rate DR_r = P(s = 1 | rater in r) or a notion's value (CA, AE, EO, PE, OMR;
the midpoint of its bounds when it is not identified). Between rater groups, in Fairlearn's terms,
``difference(T) = max_r T_r - min_r T_r`` and ``ratio(T) = min_r T_r / max_r T_r``.

Inference respects the design: every rater answers many subjects, so answers are not independent.
Confidence intervals resample raters (a cluster bootstrap: each rater's answers stay together), and
the test of "no difference between rater groups" permutes the group labels across raters (each
rater keeps their answers and the group sizes are kept), with p = (1 + #{T*_b >= T}) / (1 + B)
(Phipson & Smyth 2010), exact under exchangeable raters whatever their individual response styles.

Between-group tests (:func:`compare_groups`), all on permutations of the labels across raters:
* T = max_r T_r - min_r T_r (``statistic``), every group counting alike;
* W = sum_r w_r (T_r - Tbar)^2 / sum_r w_r with Tbar = sum_r w_r T_r / sum_r w_r (``weighted_statistic``),
  the weighted variance of the group values, w_r the group's size (its answers; alpha: its participants),
  so that a group of one rater moves W little. For a disagreement rate (a 0/1 answer's mean per group,
  w_r = answers) N W / (p (1 - p)) is Pearson's chi-square of the groups x {agree, disagree} table
  (N answers, p the pooled rate); its p-value here permutes raters, not answers, and so respects that a
  rater's answers are not independent;
* every pair of groups: T_s - T_r with p permuting the labels of the two groups' raters only (two-sided,
  |d*| >= |d|), and Holm's adjustment over the pairs of one statistic (``pvalue_holm``; Holm 1979),
  which keeps the family-wise error at the level.
A rater group with fewer than ``MIN_GROUP_SIZE`` raters (default 10) is "too few to compare"
(:func:`apply_min_group_size`): left out of the group rows and tests, or pooled into "other" on request.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from fairness.disagreement import (
    NOTIONS,
    DisagreementNotions,
    counts_per_cluster,
    disagreement_notions,
    notions_from_counts,
)
from fairness.group_options import MIN_GROUP_SIZE

STATISTICS = ("DR", *NOTIONS)
SEPARATOR = " / "


def rater_group_labels(frame: pd.DataFrame, columns: str | Sequence[str]) -> pd.Series:
    """The rater group of every row: the value of one column, or of several joined by " / " (e.g.
    ``["role", "gender"]`` gives "judge / female"); missing where any of the columns is missing."""
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ValueError("name at least one column that defines the rater groups")
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise ValueError(f"answers lack the column(s) {', '.join(map(repr, missing))}")
    parts = frame[names]
    given = parts.notna().all(axis=1)
    labels = pd.Series(None, index=frame.index, dtype=object, name=SEPARATOR.join(names))
    text = [parts.loc[given, c].astype(str) for c in names]
    labels[given] = text[0].str.cat(text[1:], sep=SEPARATOR) if len(text) > 1 else text[0]
    return labels


def group_of_raters(frame: pd.DataFrame, rater: str, columns: str | Sequence[str]) -> pd.Series:
    """One rater group per rater (index: rater; missing when a group column is missing), from
    :func:`rater_group_labels`; a rater with two different groups is refused."""
    if rater not in frame.columns:
        raise ValueError(f"answers lack the column {rater!r}")
    labels = rater_group_labels(frame, columns)
    per_rater = labels.groupby(frame[rater]).nunique()
    if (per_rater > 1).any():
        raise ValueError(
            f"rater {per_rater.index[per_rater > 1][0]!r} belongs to several rater groups: a rater group is a "
            "property of the rater (e.g. a questionnaire answer), one per rater"
        )
    return labels.groupby(frame[rater]).first()


def permuted_assignments(group_of_rater: np.ndarray, n_permutations: int, seed: int) -> np.ndarray:
    """Row 0: the observed group code of every rater; rows 1..B: random permutations of it (group sizes kept)."""
    if n_permutations < 1:
        raise ValueError("n_permutations must be at least 1")
    rng = np.random.default_rng(seed)
    return np.vstack([group_of_rater, *(rng.permutation(group_of_rater) for _ in range(n_permutations))])


def membership(assignments: np.ndarray, n_groups: int) -> np.ndarray:
    """Indicator weights (assignments x groups x raters) of the rows of :func:`permuted_assignments`."""
    return (assignments[:, None, :] == np.arange(n_groups)[None, :, None]).astype(float)


def permutation_pvalue(statistics: np.ndarray) -> tuple[float, float]:
    """(observed, p) from one statistic per assignment (row 0 observed): p = (1 + #{S*_b >= S}) / (1 + B)
    over rows 1..B; a NaN permuted statistic counts as below, a NaN observed one gives (NaN, NaN)."""
    observed = statistics[0]
    if not np.isfinite(observed):
        return float("nan"), float("nan")
    exceed = int(np.sum(statistics[1:] >= observed - 1e-12))
    return float(observed), (1 + exceed) / len(statistics)


def spread_test(values: np.ndarray) -> tuple[float, float]:
    """(T, p) from per-assignment group values (row 0 observed): T = max_r - min_r of row 0 (groups
    with a NaN value ignored) and p = (1 + #{T*_b >= T}) / (1 + B) over rows 1..B."""
    with np.errstate(invalid="ignore"):
        spread = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    return permutation_pvalue(spread)


def weighted_spread(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """W = sum_r w_r (T_r - Tbar)^2 / sum_r w_r, Tbar = sum_r w_r T_r / sum_r w_r, per row of
    ``values`` and ``weights`` (assignments x groups); a group with a NaN value gets weight 0."""
    w = np.where(np.isfinite(values), weights, 0.0)
    t = np.where(np.isfinite(values), values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = w.sum(axis=-1)
        mean = (w * t).sum(axis=-1) / total
        return (w * (t - mean[..., None]) ** 2).sum(axis=-1) / total


TOO_FEW = "too few to compare"
OTHER = "other"


def apply_min_group_size(
    groups: pd.Series, min_size: int = MIN_GROUP_SIZE, *, pool_small: bool = False
) -> tuple[pd.Series, pd.DataFrame]:
    """``groups`` (rater -> group label, missing: no group) with every group of fewer than ``min_size``
    raters set missing, or with ``pool_small`` relabelled OTHER (itself too few when still smaller);
    and the table of every group: rater_group, n_participants, status ("compared", TOO_FEW, or
    "pooled into other")."""
    if min_size < 1:
        raise ValueError(f"the minimum rater-group size must be at least 1, not {min_size}")
    sizes = groups.value_counts()
    small = sizes.index[sizes < min_size]
    rows = {g: (int(n), "compared") for g, n in sizes.items()}
    if pool_small and len(small):
        groups = groups.where(~groups.isin(small), OTHER)
        rows |= {g: (int(sizes[g]), f"pooled into {OTHER}") for g in small}
        pooled = int((groups == OTHER).sum())
        rows[OTHER] = (pooled, "compared" if pooled >= min_size else TOO_FEW)
    else:
        rows |= {g: (int(sizes[g]), TOO_FEW) for g in small}
    groups = groups.where(~groups.isin([g for g, (_, status) in rows.items() if status == TOO_FEW]))
    table = pd.DataFrame(
        [{"rater_group": str(g), "n_participants": n, "status": status} for g, (n, status) in rows.items()]
    )
    return groups, table.sort_values("rater_group", ignore_index=True)


ALL = "all participants"  # the row of every rater group's table that pools all raters


@dataclass(frozen=True)
class RaterGroupNotions:
    """Disagreement rates and notions for all answers (``overall``) and per rater group (``by_group``)."""

    overall: DisagreementNotions
    by_group: dict[str, DisagreementNotions]
    n_raters: dict[str, int]
    n_answers: dict[str, int]
    dr_ci: dict[str, tuple[float, float] | None]

    def value(self, group: str, statistic: str = "DR") -> float:
        notions = self.by_group[group]
        return notions.overall_dr if statistic == "DR" else notions.notions[statistic].value

    def difference(self, statistic: str = "DR") -> float:
        """max_r T_r - min_r T_r over the rater groups."""
        values = [self.value(g, statistic) for g in self.by_group]
        return float(np.nanmax(values) - np.nanmin(values))

    def ratio(self, statistic: str = "DR") -> float:
        """min_r T_r / max_r T_r over the rater groups (1 when they agree; NaN when the maximum is 0)."""
        values = [self.value(g, statistic) for g in self.by_group]
        top = np.nanmax(values)
        return float(np.nanmin(values) / top) if top > 0 else float("nan")

    def frame(self) -> pd.DataFrame:
        """One row per rater group and statistic: value, bounds, bootstrap CI (over raters), raters, answers."""
        rows = []
        for group, notions in self.by_group.items():
            ci = self.dr_ci[group]
            rows.append(
                {
                    "rater_group": group,
                    "statistic": "DR",
                    "value": notions.overall_dr,
                    "lower": notions.overall_dr,
                    "upper": notions.overall_dr,
                    "ci_low": ci[0] if ci else np.nan,
                    "ci_high": ci[1] if ci else np.nan,
                    "n_raters": self.n_raters[group],
                    "n_answers": self.n_answers[group],
                }
            )
            rows += notion_rows(group, notions, self.n_raters[group], self.n_answers[group])
        return pd.DataFrame(rows)


def notion_rows(group: str, notions: DisagreementNotions, n_raters: int, n_answers: int) -> list[dict]:
    """One row per disagreement notion of one rater group (the rows of ``RaterGroupNotions.frame``)."""
    return [
        {
            "rater_group": group,
            "statistic": name,
            "value": notion.value,
            "lower": notion.lower,
            "upper": notion.upper,
            "ci_low": notion.ci[0] if notion.ci else np.nan,
            "ci_high": notion.ci[1] if notion.ci else np.nan,
            "pvalue": np.nan if notion.pvalue is None else notion.pvalue,
            "n_raters": n_raters,
            "n_answers": n_answers,
        }
        for name, notion in notions.notions.items()
    ]


@dataclass(frozen=True)
class PairwiseDifference:
    """T_second - T_first of two rater groups, its permutation p (two-sided) and Holm-adjusted p."""

    groups: tuple[str, str]
    difference: float
    pvalue: float
    pvalue_holm: float


@dataclass(frozen=True)
class RaterGroupTest:
    """Permutation tests of H0: the statistic does not differ between rater groups (module doc)."""

    statistic_name: str
    statistic: float  # difference(): max_r T_r - min_r T_r
    pvalue: float
    n_permutations: int
    by_group: dict[str, float]
    weighted_statistic: float = float("nan")  # W: the size-weighted variance of the group values
    weighted_pvalue: float = float("nan")
    pairwise: tuple[PairwiseDifference, ...] = ()

    def row(self) -> dict:
        """The test as a row of a report's tests table."""
        return {
            "difference": self.statistic,
            "pvalue": self.pvalue,
            "weighted": self.weighted_statistic,
            "weighted_pvalue": self.weighted_pvalue,
            "n_permutations": self.n_permutations,
        }

    def pairwise_rows(self) -> list[dict]:
        """One row per pair of groups: group_a, group_b, difference (b - a), pvalue, pvalue_holm."""
        return [
            {"group_a": p.groups[0], "group_b": p.groups[1], "difference": p.difference, "pvalue": p.pvalue}
            | {"pvalue_holm": p.pvalue_holm}
            for p in self.pairwise
        ]


# values_of(raters, assignments, n_groups) -> {statistic: (values, weights)}, both assignments x groups:
# each group's statistic and size when the raters ``raters`` (indices) have the group codes of each row
GroupValues = Callable[[np.ndarray, np.ndarray, int], dict[str, tuple[np.ndarray, np.ndarray]]]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979): with the m p-values sorted, p_(1) <= ... <= p_(m),
    adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)); NaN entries stay NaN and are not counted.
    (Hand-written: statsmodels' ``multipletests`` gives the same values but runs ``gc.collect()`` on every
    call, half a second per test family in a report.)"""
    p = np.asarray(pvalues, float)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    steps = np.minimum(1.0, (len(order) - np.arange(len(order))) * p[order])
    out[order] = np.maximum.accumulate(steps)
    return out.tolist()


def compare_groups(
    codes: np.ndarray, levels: Sequence[str], values_of: GroupValues, *, n_permutations: int, seed: int
) -> dict[str, RaterGroupTest]:
    """The module doc's tests of every statistic ``values_of`` gives: T and W on the same permutations
    of all raters' group ``codes`` (0 .. len(levels) - 1), and every pair of groups on permutations of
    the two groups' raters."""
    values = values_of(np.arange(len(codes)), permuted_assignments(codes, n_permutations, seed), len(levels))
    pairs: dict[str, list[PairwiseDifference]] = {name: [] for name in values}
    for i, j in combinations(range(len(levels)), 2):
        raters = np.flatnonzero((codes == i) | (codes == j))
        if len(levels) == 2:  # the pair is all raters: the same permutations
            pair = values
        else:
            pair = values_of(raters, permuted_assignments((codes[raters] == j).astype(int), n_permutations, seed), 2)
        for name, (v, _) in pair.items():
            difference = v[:, 1] - v[:, 0]
            _, p = permutation_pvalue(np.abs(difference))
            pairs[name].append(PairwiseDifference((str(levels[i]), str(levels[j])), float(difference[0]), p, p))
    tests = {}
    for name, (v, w) in values.items():
        statistic, pvalue = spread_test(v)
        weighted, weighted_p = permutation_pvalue(weighted_spread(v, w))
        adjusted = holm([p.pvalue for p in pairs[name]])
        tests[name] = RaterGroupTest(
            statistic_name=name,
            statistic=statistic,
            pvalue=pvalue,
            n_permutations=n_permutations,
            by_group={str(g): float(x) for g, x in zip(levels, v[0], strict=True)},
            weighted_statistic=weighted,
            weighted_pvalue=weighted_p,
            pairwise=tuple(
                PairwiseDifference(p.groups, p.difference, p.pvalue, q)
                for p, q in zip(pairs[name], adjusted, strict=True)
            ),
        )
    return tests


def _checked(answers: pd.DataFrame, columns: dict[str, str | Sequence[str]]) -> pd.DataFrame:
    """The named columns under short names; ``columns["rater_group"]`` may name several columns."""
    labels = rater_group_labels(answers, columns["rater_group"])
    answers = answers.assign(**{labels.name: labels})
    columns = {**columns, "rater_group": labels.name}
    missing = [c for c in columns.values() if c not in answers.columns]
    if missing:
        raise ValueError(f"answers lack the column(s) {', '.join(map(repr, missing))}")
    frame = answers[list(columns.values())].rename(columns={v: k for k, v in columns.items()})
    if frame.isna().any().any():
        bad = frame.columns[frame.isna().any()].tolist()
        raise ValueError(f"answers have missing values in {', '.join(repr(columns[c]) for c in bad)}")
    per_rater = frame.groupby("rater")["rater_group"].nunique()
    if (per_rater > 1).any():
        raise ValueError(
            f"rater {per_rater.index[per_rater > 1][0]!r} belongs to several rater groups: a rater group is a "
            "property of the rater (e.g. a questionnaire answer), one per rater"
        )
    frame["rater_group"] = frame["rater_group"].astype(str)
    if frame["rater_group"].nunique() < 2:
        raise ValueError("rater groups are compared: need answers from at least two rater groups")
    return frame


def notions_by_rater_group(
    answers: pd.DataFrame,
    *,
    rater_group: str | Sequence[str],
    rater: str = "participant",
    subject_group: str = "group",
    model_label: str = "model_label",
    disagreement: str = "disagreement",
    n_resamples: int = 0,
    seed: int = 0,
    level: float = 0.95,
) -> RaterGroupNotions:
    """Rates and notions per rater group; ``answers`` has one row per answer with the named columns.

    ``rater_group`` names one column or several (combined as "a / b", see :func:`rater_group_labels`).
    With ``n_resamples`` > 0 every CI is a percentile bootstrap over the group's raters.
    """
    frame = _checked(
        answers,
        {
            "rater": rater,
            "rater_group": rater_group,
            "m": subject_group,
            "k": model_label,
            "s": disagreement,
        },
    )
    labels = sorted(pd.unique(frame["k"]).tolist())
    overall = disagreement_notions(
        frame["m"], frame["k"], frame["s"], labels=labels, subjects=frame["rater"], n_resamples=n_resamples, seed=seed
    )
    by_group, n_raters, n_answers, dr_ci = {}, {}, {}, {}
    rng = np.random.default_rng(seed)
    for group, part in sorted(frame.groupby("rater_group"), key=lambda item: item[0]):
        by_group[group] = disagreement_notions(
            part["m"], part["k"], part["s"], labels=labels, subjects=part["rater"], n_resamples=n_resamples, seed=seed
        )
        sums = part.groupby("rater")["s"].agg(["sum", "count"]).to_numpy(float)
        n_raters[group], n_answers[group] = len(sums), len(part)
        dr_ci[group] = ratio_ci(sums, rng, n_resamples, level) if n_resamples else None
    return RaterGroupNotions(overall, by_group, n_raters, n_answers, dr_ci)


@lru_cache(maxsize=1024)  # two scipy calls per interval; the same (level, n) for every group of a size
def expanded_tail(level: float, n: int) -> float:
    """The lower tail of Hesterberg's (2015) expanded percentile interval from n clusters:
    Phi(sqrt(n / (n - 1)) t_{n-1, (1 - level) / 2}) in place of (1 - level) / 2."""
    return float(stats.norm.cdf(np.sqrt(n / (n - 1)) * stats.t.ppf((1 - level) / 2, n - 1)))


def ratio_ci(sums: np.ndarray, rng: np.random.Generator, n_resamples: int, level: float) -> tuple[float, float]:
    """Expanded percentile bootstrap CI of sum(totals) / sum(counts) over the n raters (rows of ``sums``: a
    rater's total and count), resampling raters with replacement: the clusters of a rater's answers stay
    whole. The plain percentile interval runs narrow with few raters (88% for a nominal 95% with 10 in
    ``simulation.coverage_studies``), so its tail is taken at Phi(sqrt(n / (n - 1)) t_{n-1, (1 - level) / 2})
    instead of (1 - level) / 2 (Hesterberg 2015, "What teachers should know about the bootstrap", the
    expanded percentile interval). NaN with fewer than two raters."""
    n = len(sums)
    if n < 2:
        return float("nan"), float("nan")
    weights = rng.multinomial(n, np.full(n, 1 / n), size=n_resamples)
    tail = expanded_tail(level, n)
    boot = (weights @ sums[:, 0]) / (weights @ sums[:, 1])
    low, high = np.quantile(boot, [tail, 1 - tail])
    return float(low), float(high)


def rater_group_difference_test(
    answers: pd.DataFrame,
    *,
    rater_group: str | Sequence[str],
    statistic: str = "DR",
    rater: str = "participant",
    subject_group: str = "group",
    model_label: str = "model_label",
    disagreement: str = "disagreement",
    n_permutations: int = 2000,
    seed: int = 0,
) -> RaterGroupTest:
    """Permute rater-group labels across raters and compare ``difference(statistic)`` (see module doc)."""
    columns = dict(rater=rater, subject_group=subject_group, model_label=model_label, disagreement=disagreement)
    return rater_group_difference_tests(
        answers, rater_group=rater_group, statistics=(statistic,), **columns, n_permutations=n_permutations, seed=seed
    )[statistic]


def rater_group_difference_tests(
    answers: pd.DataFrame,
    *,
    rater_group: str | Sequence[str],
    statistics: Sequence[str] = STATISTICS,
    rater: str = "participant",
    subject_group: str = "group",
    model_label: str = "model_label",
    disagreement: str = "disagreement",
    n_permutations: int = 2000,
    seed: int = 0,
) -> dict[str, RaterGroupTest]:
    """:func:`rater_group_difference_test` of several statistics on the same permutations of the
    rater-group labels (the per-rater counts and the permuted group counts are built once)."""
    unknown = [name for name in statistics if name not in STATISTICS]
    if unknown:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, not {unknown[0]!r}")
    frame = _checked(
        answers,
        {"rater": rater, "rater_group": rater_group, "m": subject_group, "k": model_label, "s": disagreement},
    )
    raters, rater_idx = np.unique(frame["rater"].astype(str), return_inverse=True)
    m_levels = sorted(pd.unique(frame["m"]).tolist(), key=str)
    k_levels = sorted(pd.unique(frame["k"]).tolist())
    if len(m_levels) < 2 and any(name != "DR" for name in statistics):
        raise ValueError("notions compare subject groups: need at least two subject groups")
    cells = counts_per_cluster(
        rater_idx, len(raters), frame["m"], frame["k"], frame["s"].to_numpy(int), m_levels, k_levels
    )
    first = pd.Series(frame["rater_group"].to_numpy()).groupby(rater_idx).first()
    group_levels, group_of_rater = np.unique(first.to_numpy(), return_inverse=True)

    def values_of(kept: np.ndarray, assignments: np.ndarray, n_groups: int) -> dict:
        counts = (membership(assignments, n_groups) @ cells[kept]).reshape(
            len(assignments), n_groups, len(m_levels), len(k_levels), 2
        )
        answers = counts.sum(axis=(-1, -2, -3))
        notions = notions_from_counts(counts) if any(name != "DR" for name in statistics) else {}
        out = {}
        for name in statistics:
            if name == "DR":
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[name] = (counts[..., 1].sum(axis=(-1, -2)) / answers, answers)
            else:
                lower, upper, _ = notions[name]
                out[name] = ((lower + upper) / 2, answers)
        return out

    return compare_groups(
        group_of_rater, [str(g) for g in group_levels], values_of, n_permutations=n_permutations, seed=seed
    )
