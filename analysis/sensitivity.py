"""Sensitivity of headline estimates to the participants flagged for answer quality: the same estimate
computed with all participants and without the flagged ones, side by side, and whether the conclusion
changes.

A conclusion changes (platform's rule, stated in every report) when

- the estimate exists in one analysis only (a rater group or subject group too small without the flagged),
- the estimate without the flagged lies outside the 95% CI of the estimate with all participants
  (``<estimate>_ci_low``/``_ci_high`` or ``ci_low``/``ci_high``; "outside the interval = a different
  value"),
- the table's test (``pvalue``) is significant at .05 in one analysis and not in the other, or
- the table's ``verdict`` (differential parity's) reads differently.

Flagged participants are a subset of all, so the two estimates are not independent and the rule is a
screening rule (a robustness check), not a test of their difference.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

COLUMNS = ["estimate", "all", "without_flagged", "conclusion_changes", "reason"]
# Columns that name a row of a headline table (the rest are numbers or notes).
KEYS = (
    "model",
    "condition",
    "rater_group",
    "subject_attribute",
    "subject_group",
    "subject_groups",
    "subject",
    "statistic",
    "measure",
    "feature",
    "R0",
    "R1",
    "comparison",
    "attribute",
    "group",
)
LEVEL = 0.05


def _label(prefix: str, row: pd.Series, keys: Sequence[str]) -> str:
    parts = [f"{key}={row[key]}" for key in keys if pd.notna(row[key]) and row[key] != ""]
    return f"{prefix}: " + ", ".join(parts) if parts else prefix


def _reason(row: pd.Series, has: set[str]) -> str:
    if pd.isna(row["all"]) or pd.isna(row["without_flagged"]):
        return "estimated in one analysis only"
    if "ci" in has and pd.notna(row["ci_low"]) and not row["ci_low"] <= row["without_flagged"] <= row["ci_high"]:
        return "outside the 95% CI with all participants"
    if "pvalue" in has and pd.notna(row["pvalue_all"]) and pd.notna(row["pvalue_without"]):
        if (row["pvalue_all"] < LEVEL) != (row["pvalue_without"] < LEVEL):
            return "significance at .05 changes"
    if "verdict" in has and row["verdict_all"] != row["verdict_without"]:
        return "verdict changes"
    return ""


def compare_estimates(all_frame: pd.DataFrame, without: pd.DataFrame, *, estimate: str, prefix: str) -> pd.DataFrame:
    """One row per estimate of a headline table (``estimate`` its column; rows matched by the ``KEYS``
    columns the table has): ``estimate`` (``prefix`` and the row's keys), ``all``, ``without_flagged``,
    ``conclusion_changes`` (bool) and ``reason`` (the module's rule that fired, empty when none)."""
    keys = [k for k in KEYS if k in all_frame.columns or k in without.columns]
    ci = next((c for c in (f"{estimate}_ci", "ci") if f"{c}_low" in all_frame.columns), None)
    tests = [c for c in ("pvalue", "verdict") if c in all_frame.columns]
    left = all_frame.reindex(columns=[*keys, estimate, *tests])
    left = left.rename(columns={estimate: "all", **{c: f"{c}_all" for c in tests}})
    if ci is not None:
        left[["ci_low", "ci_high"]] = all_frame[[f"{ci}_low", f"{ci}_high"]].to_numpy(float)
    right = without.reindex(columns=[*keys, estimate, *tests])
    right = right.rename(columns={estimate: "without_flagged", **{c: f"{c}_without" for c in tests}})
    for frame in (left, right):
        frame[keys] = frame[keys].astype(object).where(frame[keys].notna(), "")
    if not keys:  # one estimate per table
        left["_row"], right["_row"] = np.arange(len(left)), np.arange(len(right))
        keys_on = ["_row"]
    else:
        keys_on = keys
    merged = left.merge(right, on=keys_on, how="outer", sort=False)
    if merged.empty:
        return pd.DataFrame(columns=COLUMNS)
    has = {*tests, *(["ci"] if ci is not None else [])}
    merged["reason"] = [_reason(row, has) for _, row in merged.iterrows()]
    merged["conclusion_changes"] = merged["reason"] != ""
    merged["estimate"] = [_label(prefix, row, keys) for _, row in merged.iterrows()]
    return merged[COLUMNS].reset_index(drop=True)


@dataclass(frozen=True)
class Sensitivity:
    """A report's headline estimates with all participants and without the ``n_flagged`` flagged ones
    (``table``: :data:`COLUMNS`, rows of :func:`compare_estimates`)."""

    table: pd.DataFrame
    n_flagged: int

    def sentence(self) -> str:
        """'Without the 3 participants flagged for answer quality, 2 of 14 headline estimates change their
        conclusion.'"""
        if not self.n_flagged:
            return "No participant was flagged for answer quality: every headline estimate is the same without them."
        n, changed = len(self.table), int(self.table["conclusion_changes"].sum()) if len(self.table) else 0
        who = f"the {self.n_flagged} participant{'s' * (self.n_flagged != 1)} flagged for answer quality"
        return (
            f"Without {who}, {changed} of {n} headline estimate{'s' * (n != 1)} "
            f"change{'s' * (changed == 1)} {'its' if changed == 1 else 'their'} conclusion."
        )


def sensitivity_of(pieces: Iterable[pd.DataFrame], n_flagged: int) -> Sensitivity:
    """The :class:`Sensitivity` of a report from its tables' :func:`compare_estimates` rows."""
    frames = [frame for frame in pieces if len(frame)]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    return Sensitivity(table.astype({"conclusion_changes": bool}), n_flagged)
