"""Differential parity on a study's answers: load the export, run the pure tests, write the report."""

from pathlib import Path

from fairness.relative_reports import differences_figure
from fairness.study_parity import disagreement_parity, fair_scores_vs_ai, subject_table, table_definitions
from research.export import ExportTables, export_tables
from runs.provenance import Provenance, participant_counts, study_provenance
from runs.reports.parity import write_dp_report
from studies.services import latest_study


def study_differential_parity(
    slug: str, tables: ExportTables, *, alpha: float = 0.05, favourable: str = "lower"
) -> tuple[dict, list]:
    """Tables (fair scores vs the AI, disagreements, both within each condition) and figures from the
    study's export ``tables``.
    The conditions are not bridged to each other: they are different tasks (see fairness.study_parity).
    ``favourable``: "lower" (default: a low risk score or label is good for the subject) or "higher"."""
    study = latest_study(slug)
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


def dp_provenance(slug: str, export: ExportTables, *, alpha: float, favourable: str) -> Provenance:
    """Provenance of a study's differential-parity report: the participants of the pairs export."""
    participants, dropped = participant_counts(export.pairs) if len(export.pairs) else ({}, {})
    return study_provenance(
        latest_study(slug),
        participants=participants,
        dropped=dropped,
        settings={"Significance level alpha": str(alpha), "Favourable direction": favourable},
    )


def write_study_dp_report(
    slug: str, out_dir: Path, *, alpha: float = 0.05, favourable: str = "lower"
) -> tuple[Path, dict]:
    """The study's differential-parity report (runs.reports.parity.write_dp_report) and its tables."""
    export = export_tables(slug)
    tables, figures = study_differential_parity(slug, export, alpha=alpha, favourable=favourable)
    path = write_dp_report(
        tables,
        figures,
        out_dir,
        title=f"{slug}: differential parity",
        definitions=table_definitions(favourable),
        provenance=dp_provenance(slug, export, alpha=alpha, favourable=favourable),
    )
    return path, tables
