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
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairness.disagreement import (
    NOTIONS,
    DisagreementNotions,
    counts_per_cluster,
    disagreement_notions,
    notions_from_counts,
)

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


def spread_test(values: np.ndarray) -> tuple[float, float]:
    """(T, p) from per-assignment group values (row 0 observed): T = max_r - min_r of row 0 (groups
    with a NaN value ignored) and p = (1 + #{T*_b >= T}) / (1 + B) over rows 1..B."""
    with np.errstate(invalid="ignore"):
        spread = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    observed = spread[0]
    if not np.isfinite(observed):
        return float("nan"), float("nan")
    exceed = int(np.sum(spread[1:] >= observed - 1e-12))  # a NaN spread (no group estimable) counts as below
    return float(observed), (1 + exceed) / len(spread)


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
            "n_raters": n_raters,
            "n_answers": n_answers,
        }
        for name, notion in notions.notions.items()
    ]


@dataclass(frozen=True)
class RaterGroupTest:
    """Permutation test of H0: the statistic does not differ between rater groups."""

    statistic_name: str
    statistic: float  # difference(): max_r T_r - min_r T_r
    pvalue: float
    n_permutations: int
    by_group: dict[str, float]


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


def ratio_ci(sums: np.ndarray, rng: np.random.Generator, n_resamples: int, level: float) -> tuple[float, float]:
    """Percentile bootstrap CI of sum(totals) / sum(counts) over raters (rows of ``sums``: a rater's
    total and count), resampling raters with replacement: the clusters of a rater's answers stay whole."""
    weights = rng.multinomial(len(sums), np.full(len(sums), 1 / len(sums)), size=n_resamples)
    tail = (1 - level) / 2
    boot = (weights @ sums[:, 0]) / (weights @ sums[:, 1])
    return tuple(float(q) for q in np.quantile(boot, [tail, 1 - tail]))


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
    assignments = permuted_assignments(group_of_rater, n_permutations, seed)
    counts = (membership(assignments, len(group_levels)) @ cells).reshape(
        len(assignments), len(group_levels), len(m_levels), len(k_levels), 2
    )
    notions = notions_from_counts(counts) if any(name != "DR" for name in statistics) else {}
    tests = {}
    for name in statistics:
        if name == "DR":
            values = counts[..., 1].sum(axis=(-1, -2)) / counts.sum(axis=(-1, -2, -3))
        else:
            lower, upper, _ = notions[name]
            values = (lower + upper) / 2
        observed, pvalue = spread_test(values)
        tests[name] = RaterGroupTest(
            statistic_name=name,
            statistic=observed,
            pvalue=pvalue,
            n_permutations=n_permutations,
            by_group={str(g): float(v) for g, v in zip(group_levels, values[0], strict=True)},
        )
    return tests
