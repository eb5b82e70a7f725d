"""Differential parity on a study's answers: load the export, run the pure tests, write the report."""

from pathlib import Path

from fairness.relative_reports import differences_figure
from fairness.study_parity import disagreement_parity, fair_scores_vs_ai, subject_table, table_definitions
from surveys.export import export_tables
from surveys.reports import write_dp_report
from surveys.services import latest_study


def study_differential_parity(slug: str, *, alpha: float = 0.05, favourable: str = "lower") -> tuple[dict, list]:
    """Tables (fair scores vs the AI, disagreements, both within each condition) and figures for a study.
    The conditions are not bridged to each other: they are different tasks (see fairness.study_parity).
    ``favourable``: "lower" (default: a low risk score or label is good for the subject) or "higher"."""
    study = latest_study(slug)
    tables = export_tables(slug)
    pairs = tables.pairs[tables.pairs["excluded"] != 1]
    subjects = subject_table(study.spec)
    scores, items = fair_scores_vs_ai(pairs, subjects, alpha=alpha, favourable=favourable)
    result = {
        "fair_scores_vs_ai": scores,
        "disagreements": disagreement_parity(
            tables.disagreements[tables.disagreements["excluded"] != 1], alpha=alpha, favourable=favourable
        )
        if len(tables.disagreements)
        else scores.iloc[0:0],
    }
    figures = (
        [
            differences_figure(items, difference="difference", by=col, facet="condition")
            for col in ("race", "sex")
            if col in items
        ]
        if len(items)
        else []
    )
    return result, figures


def write_study_dp_report(slug: str, out_dir: Path, *, alpha: float = 0.05, favourable: str = "lower") -> Path:
    """The study's differential-parity report (surveys.reports.write_dp_report)."""
    tables, figures = study_differential_parity(slug, alpha=alpha, favourable=favourable)
    return write_dp_report(
        tables, figures, out_dir, title=f"{slug}: differential parity", definitions=table_definitions(favourable)
    )
