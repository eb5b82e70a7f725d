"""Differential parity on a study's answers: load the export, run the pure tests, write the report."""

from pathlib import Path

from analysis.sensitivity import Sensitivity, compare_estimates, sensitivity_of
from fairness.relative_reports import differences_figure
from fairness.study_parity import disagreement_parity, fair_scores_vs_ai, subject_table, table_definitions
from research.export import ExportTables, export_tables
from runs.analysis_plan import exploratory_deviations
from runs.analysis_runs import without_flagged
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


def dp_sensitivity(slug: str, export: ExportTables, tables: dict, *, alpha: float, favourable: str) -> Sensitivity:
    """Each differential parity test's DPT (its p and verdict) with all participants and without those
    flagged for answer quality (``export`` and ``tables``: the report's, under the study's own exclusions)."""
    exports: dict[str, ExportTables] = {"none": export}  # replaced when the study excludes by a flag

    def analyse(mode: str) -> dict:
        exports[mode] = export_tables(slug, quality_exclusion=mode)
        return study_differential_parity(slug, exports[mode], alpha=alpha, favourable=favourable)[0]

    everyone, without = without_flagged(analyse, tables, latest_study(slug).spec)
    kept = {mode: int((found.participants["excluded"] == 0).sum()) for mode, found in exports.items()}
    pieces = [
        compare_estimates(frame, (without or {}).get(name, frame.iloc[0:0]), estimate="DPT", prefix=name)
        for name, frame in everyone.items()
        if "DPT" in frame
    ]
    return sensitivity_of(pieces, kept["none"] - kept["flagged"])


def write_study_dp_report(
    slug: str, out_dir: Path, *, alpha: float = 0.05, favourable: str = "lower", multiple_testing: str = "holm"
) -> tuple[Path, dict]:
    """The study's differential-parity report (runs.reports.parity.write_dp_report, with its sensitivity to
    the participants flagged for answer quality, each table's tests adjusted by ``multiple_testing``) and
    its tables."""
    export = export_tables(slug)
    tables, figures = study_differential_parity(slug, export, alpha=alpha, favourable=favourable)
    path = write_dp_report(
        tables,
        figures,
        out_dir,
        title=f"{slug}: differential parity",
        definitions=table_definitions(favourable),
        provenance=dp_provenance(slug, export, alpha=alpha, favourable=favourable),
        sensitivity=dp_sensitivity(slug, export, tables, alpha=alpha, favourable=favourable),
        multiple_testing=multiple_testing,
        deviations=exploratory_deviations(latest_study(slug), what="a differential-parity run"),
    )
    return path, tables
