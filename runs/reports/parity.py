"""The differential-parity report of a study (``relative_fairness``)."""

from pathlib import Path

import pandas as pd

from analysis.families import adjust_table
from analysis.sensitivity import Sensitivity
from fairness.relative_reports import DP_NOTE, dp_results
from runs.provenance import Provenance
from runs.report_explanations import (
    DIFFERENTIAL_PARITY,
)
from runs.reports.base import (
    _heading,
    add_sensitivity,
    figure_sections,
    render_report,
    table_section,
    with_adjusted,
    write_csv,
    write_json,
)
from runs.reports.deviations import add_deviations

DP_HEADINGS = {
    "fair_scores_vs_ai": "Participants' fair scores vs the AI's scores",
    "disagreements": "Participants' yes/no labels vs the AI's labels",
}
DP_COLUMNS = {
    "condition": "Condition",
    "comparison": "R0 - R1",
    "attribute": "Attribute",
    "group": "Group (A = 1)",
    "n_group": "n (group)",
    "n_rest": "n (rest)",
    "mean_diff_group": "Mean R0 - R1 (group)",
    "mean_diff_rest": "Mean R0 - R1 (rest)",
    "DPT": "DPT",
    "df": "df",
    "pvalue": "p (one-sided)",
    "DPD": "DPD",
    "effect": "Effect",
}


def _verdicts(frame: pd.DataFrame) -> list[str]:
    """The verdicts (in words) of the rows with evidence of a difference, as notes under the table."""
    if not {"verdict", "direction"} <= set(frame.columns):
        return []
    rows = frame[frame["direction"].notna() & (frame["direction"].astype(str) != "")]
    return [f"{r.condition}, {r.attribute} = {r.group}: {r.verdict}" for r in rows.itertuples(index=False)]


def write_dp_report(
    tables: dict[str, pd.DataFrame],
    figures: list,
    out_dir: Path,
    *,
    title: str,
    definitions: dict[str, str] | None = None,
    provenance: Provenance | None = None,
    sensitivity: Sensitivity | None = None,
    multiple_testing: str = "holm",
    deviations: dict | None = None,
) -> Path:
    """Differential parity: report.html, results.json and one CSV per table. ``definitions`` (by table
    name, e.g. ``fairness.study_parity.TABLE_DEFINITIONS``) say at the top of each section what R0, R1
    and A are in words. Each table's tests are one family, adjusted by ``multiple_testing`` (holm, bh or
    none; ``analysis.families``): ``pvalue_adjusted`` beside ``pvalue``, a ``test_id`` per row, and
    results.json's ``multiple_testing`` = {"method", "families": {family: [test ids]}}. A preregistered study's
    report states first that it is exploratory (``deviations``, ``runs.analysis_plan.exploratory_deviations``)."""
    definitions = definitions or {}
    out_dir.mkdir(parents=True, exist_ok=True)
    families: dict[str, list[str]] = {}
    adjusted = {}
    for name, frame in tables.items():  # one family per table: "does this outcome differ for any group?"
        adjusted[name], found = adjust_table(frame, prefix=name, method=multiple_testing)
        families |= found
    multiple = {"method": multiple_testing, "families": families}
    for name, frame in adjusted.items():
        write_csv(frame, out_dir / f"{name}.csv")
    sections = []
    for name, frame in adjusted.items():
        family = (
            [
                f"The family is this table's {len(frame)} tests; p is adjusted within it ({multiple_testing}; "
                "analysis.families) beside the raw p, and a verdict is drawn from the raw p at alpha."
            ]
            if len(frame) > 1
            else []
        )
        columns = with_adjusted(DP_COLUMNS, frame, multiple) if set(DP_COLUMNS) <= set(frame.columns) else None
        section = table_section(
            DP_HEADINGS.get(name, _heading(name)),
            frame,
            empty="Nothing to test.",
            explanation=DIFFERENTIAL_PARITY.get(name),
            csv=f"{name}.csv",
            columns=columns,
            estimate="DPT" if "DPT" in frame else None,
            notes=family + (_verdicts(frame) if columns else []),
        )
        if name in definitions:
            section.paragraphs.insert(0, definitions[name])
        sections.append(section)
    sections += figure_sections(figures, [DIFFERENTIAL_PARITY["differences_figure"]] * len(figures))
    results, intro = {**dp_results(adjusted), "multiple_testing": multiple}, [DP_NOTE]
    add_sensitivity(sensitivity, out_dir, results=results, sections=sections, intro=intro)
    if deviations is not None:
        add_deviations(deviations, results=results, sections=sections, intro=intro)
    write_json(results, out_dir / "results.json")
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)
