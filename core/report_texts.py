"""What a report says about a table (``runs.reports``): its explanation (what it shows, how to read it,
the formula and its source), its heading, its columns' labels and the estimate whose precision its
numbers take. Neutral, so that each task type's module can state its own tables (``BlockTask.report_tables``)."""

from dataclasses import dataclass

CI_LABEL = "95% CI"
EFFORT = "Effort-aware fairness paper"
DP = "Differential parity paper"
FEEDBACK = "Disagreement-feedback poster (Telukunta & Nadendla)"
RESAMPLING = "percentile CI resampling raters (each rater's answers together); permutation test of the rater groups"


@dataclass(frozen=True)
class Explanation:
    """Two to four sentences: ``shows`` and ``read`` in words, then the formula and its source."""

    shows: str
    read: str
    formula: str
    source: str


@dataclass(frozen=True)
class ReportTable:
    """A table's section of a report: its heading, its columns (name -> label, in order), its
    explanation, the column whose estimate sets the table's precision (CIs), and ``figure``: the
    (category, estimate) columns drawn as bars per rater group with their CIs, if the section has a figure."""

    heading: str
    columns: dict[str, str]
    explanation: Explanation
    estimate: str | None = None
    figure: tuple[str, str] | None = None


GROUP_MEANS = {
    "subject_attribute": "Subject attribute",
    "subject_group": "Subject group",
    "rater_group": "Rater group",
    "mean": "Mean",
    "ci": CI_LABEL,
    "n_raters": "Raters",
    "n_answers": "Answers",
}
ICC_COLUMNS = {
    "condition": "Condition",
    "measure": "Measure",
    "type": "ICC",
    "icc": "Value",
    "ci": CI_LABEL,
    "F": "F",
    "df1": "df1",
    "df2": "df2",
    "pvalue": "p",
    "n_targets": "Stimuli",
    "n_raters": "Raters",
}
