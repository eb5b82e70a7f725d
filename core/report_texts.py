"""What a report says about a table (``runs.reports``): its explanation (what it shows, how to read it,
the formula and its source), its heading, its columns' labels and the estimate whose precision its
numbers take. Neutral, so that each task type's module can state its own tables (``BlockTask.report_tables``)."""

from dataclasses import dataclass
from typing import Any

CI_LABEL = "95% CI"
EFFORT = "Effort-aware fairness paper"
DP = "Differential parity paper"
FEEDBACK = "Disagreement-feedback poster (Telukunta & Nadendla)"
RESAMPLING = (
    "expanded percentile CI (Hesterberg 2015) resampling raters (each rater's answers together); permutation test "
    "of the rater groups"
)
# analysis.coverage.REGISTRY keys (simulation.coverage_studies) of the procedures whose CIs or tests tables print
YES_NO_MEANS = ("rater-group mean, yes/no answers",)
RATING_MEANS = ("rater-group mean, 7-point ratings",)
ICC_PROCEDURES = (
    "ICC(1,1)",
    "ICC(A,1)",
    "ICC(C,1)",
    "ICC(1,k)",
    "ICC(A,k)",
    "ICC(C,k)",
    "ICC F test, one-way",
    "ICC F test, two-way",
)
MAJORITY_CI = (
    "participants' CI: percentile, raters resampled within the design's blocks; the majority's CI: estimate +- z "
    "sqrt(subject variance + rater-resampling variance), for the expected rate of a crowd of this size drawn from "
    "the rater population on subjects like these (it covers these subjects' too; coverage measured by simulation)"
)
IN_GROUP_RATE_PROCEDURES = ("in-group rate, these subjects", "in-group rate over blocks, subjects like these")
MAJORITY_PROCEDURES = tuple(  # analysis.coverage.REGISTRY keys (simulation.coverage_studies)
    f"majority accuracy, {blocks}, {estimand}"
    for blocks in ("20 blocks", "1 block")
    for estimand in ("these subjects", "subjects like these")
)


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
    (category, estimate) columns drawn as bars per rater group with their CIs, if the section has a figure;
    ``figure_facets``: columns labelling an outer level of the figure's x axis where they vary (e.g. the
    measure and subject attribute of the subject groups); ``headline``: the column of a headline estimate,
    which the report's sensitivity table gives with all participants and without those flagged for answer
    quality (``analysis.sensitivity``); ``procedures``: the keys of ``analysis.coverage.REGISTRY`` whose
    simulations measure the coverage of its intervals and the size of its tests."""

    heading: str
    columns: dict[str, str]
    explanation: Explanation
    estimate: str | None = None
    figure: tuple[str, str] | None = None
    headline: str | None = None
    figure_facets: tuple[str, ...] = ()
    procedures: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableView:
    """What a report shows of a table whose CSV holds all of it: the rows (a DataFrame), their column
    labels (None: the ``ReportTable``'s) and notes under the table."""

    frame: Any
    columns: dict[str, str] | None = None
    notes: tuple[str, ...] = ()


GROUP_MEANS = {
    "subject_attribute": "Subject attribute",
    "subject_group": "Subject group",
    "rater_group": "Rater group",
    "mean": "Mean",
    "ci": CI_LABEL,
    "n_raters": "Raters",
    "n_answers": "Answers",
}
ERROR_RATE_COLUMNS = {  # fairness.error_rates.error_rates, the accuracy's CI shown (FPR's and FNR's in the CSV)
    "subject_attribute": "Subject attribute",
    "subject_group": "Subject group",
    "rater_group": "Rater group",
    "source": "Predictions of",
    "accuracy": "Accuracy",
    "ci": f"Accuracy {CI_LABEL}",
    "fpr": "FPR",
    "fnr": "FNR",
    "n": "n",
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
IN_GROUP = ReportTable(
    "rater group x subject group: in-group bias",
    {
        "measure": "Measure",
        "subject_attribute": "Subject attribute",
        "subject_group": "Subject group",
        "rater_group": "Rater group",
        "gap": "Gap (group - rest)",
        "ci": CI_LABEL,
        "n_raters": "Raters",
    },
    Explanation(
        "For each subject group, each rater's own gap: the rater's mean answer on subjects of that group minus "
        "on the other subjects, averaged per rater group (the measure: a rating, the share disagreeing with the "
        "AI, or the share predicting the positive label).",
        "Rater groups whose gaps differ treat the subject groups differently (an interaction); when the rater "
        "groups are the subject groups (raters' and defendants' race) that is in-group bias. A rater's gap "
        "cancels the rater's own leniency; the test (under 'do the rater groups differ?', 'in-group: ...') "
        "permutes raters' group labels, so raters, not answers, are the units. The CI is a t interval over the "
        "group's raters: it covers the rater population's mean gap on these subjects only.",
        "gap_i = mean_i(g) - mean_i(rest); T = max_r mean gap_r - min_r mean gap_r, p = (1 + #{T* >= T}) / (1 + B)",
        "Biswas et al. (COMPASS 2020) for in-group bias in recidivism predictions; t interval over the rater "
        "group's raters; permutation test of the rater groups (Phipson & Smyth 2010)",
    ),
    estimate="gap",
    procedures=("in-group gap, these subjects",),
)
IN_GROUP_RATES = ReportTable(
    "rater group x subject group: each rater group's mean per subject group",
    {
        "measure": "Measure",
        **{k: v for k, v in GROUP_MEANS.items() if k not in ("n_answers", "ci")},
        "ci": f"{CI_LABEL}, these subjects",
        "ci_blocks": f"{CI_LABEL}, subjects like these",
        "n_blocks": "Stimulus blocks",
    },
    Explanation(
        "The cells of the in-group table: per rater group, the mean answer on each subject group (a rating, the "
        "share disagreeing with the AI, or the share predicting the positive label), each rater's own mean "
        "counted once.",
        "In the figure, bars of one colour are one rater group: rater groups whose bars rise and fall differently "
        "across the subject groups interact with them (the gaps and their test are in the in-group table); "
        "parallel bars at different heights are a main effect (one group answers higher for every subject group). "
        "The first CI is a t interval over raters: it covers the rater population's mean on these subjects only. "
        "The second generalises to subjects like these: a t interval over stimulus blocks (raters who answered the "
        "same subjects), empty when raters share no blocks; it is the one to quote about the subject population.",
        "mean_{r,g} = (1/n_r) sum_{i in r} mean_i(g); CI t_{n_r - 1} over raters; CI over blocks t_{B - 1} over "
        "the B block means",
        "Biswas et al. (COMPASS 2020), respondent race x defendant race; Judd, Westfall & Kenny (2012) on "
        "stimuli as a random factor",
    ),
    estimate="mean",
    procedures=IN_GROUP_RATE_PROCEDURES,
    figure=("subject_group", "mean"),
    figure_facets=("measure", "subject_attribute"),
)
