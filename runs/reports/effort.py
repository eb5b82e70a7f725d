"""The effort analysis's sections of a study's analysis report (``runs.reports.design``: the study's
``pair_distance`` blocks rating trajectory, aggregate and overall, as a format 1 study's pairs): Tables 2-5 of
the effort-aware fairness paper, calibration, BTS, and the alphas' sensitivity to flagged participants."""

from pathlib import Path
from typing import Any

import pandas as pd

from analysis.pipeline import CalibrationsResult, PipelineResult
from analysis.repeated_measures import BOOTSTRAP, CLUSTER_WALD, TWO_WAY
from analysis.report import HEADINGS, NOTES, report_figures, report_tables
from analysis.sensitivity import Sensitivity, compare_estimates, sensitivity_of
from core.report_texts import ICC_COLUMNS
from runs.report_explanations import (
    ANALYSIS,
)
from runs.report_format import (
    format_ci,
    format_estimate,
    format_pvalue,
)
from runs.reports.base import (
    CI_LABEL,
    Section,
    Table,
    figure_sections,
    table_context,
    table_section,
    write_csv,
)

ANALYSIS_COLUMNS = {
    "calibrations": {
        "condition": "Condition",
        "alpha": "alpha",
        "ci": CI_LABEL,
        "estimand": "Estimand of the CI",
        "ci_participants": "95% CI, these stimuli",
        "ci_stimuli": "95% CI, generalising over stimuli",
        "n_stimuli": "Stimulus pairs",
        "a1": "a1 (d_S)",
        "a2": "a2 (d_E)",
        "n_participants": "Participants",
        "n_resamples": "Resamples",
    },
    "table2": {
        "condition": "Condition",
        "label": "Correlation",
        "coefficient": "Coefficient",
        "r": "r",
        "ci": CI_LABEL,
        "pvalue": "p",
        "pvalue_bonferroni": "p (Bonferroni)",
        "n": "N (pairs)",
    },
    "table3": {
        "condition": "Condition",
        "test_name": "Test",
        "comparison": "Comparison",
        "convention": "Convention",
        "statistic": "Statistic",
        "pvalue": "p",
        "pvalue_bonferroni": "p (Bonferroni)",
        "n": "N (pairs)",
    },
    "table4": {
        "condition": "Condition",
        "difference": "Difference",
        "estimate": "Δr",
        "ci": CI_LABEL,
        "n_resamples": "Resamples",
        "seed": "Seed",
    },
    "participant_level": {
        "model": "Model",
        "outcome": "Outcome",
        "hypothesis": "H0",
        "method": "Method",
        "estimate": "Estimate",
        "ci": CI_LABEL,
        "pvalue": "p",
        "pvalue_holm": "p (Holm)",
        "in_family": "In family",
    },
    "mixed_models": {
        "model": "Model",
        "outcome": "Outcome",
        "term": "Term",
        "coef": "b",
        "std_err": "SE",
        "ci": CI_LABEL,
        "pvalue": "p",
        "converged": "Converged",
    },
    "effect_sizes": {
        "model": "Model",
        "outcome": "Outcome",
        "n_participants": "Participants",
        "mean_difference": "Mean a2 - a1",
        "ci": CI_LABEL,
        "statistic": "t",
        "dof": "df",
        "pvalue": "p",
        "cohen_d": "Cohen's d",
        "cohen_d_ci": "d, 95% CI",
    },
    "rm_correlations": {
        "condition": "Condition",
        "label": "Correlation",
        "r": "r_rm",
        "ci": CI_LABEL,
        "dof": "df",
        "pvalue": "p",
    },
    "icc": ICC_COLUMNS,
    "factor_shares": {
        "condition": "Condition",
        "pairs": "Pairs",
        "trajectory": "Trajectory",
        "aggregate": "Aggregate",
        "other": "Other",
    },
}
SHORT_METHODS = {  # the long forms: CSV
    BOOTSTRAP: "participant bootstrap",
    CLUSTER_WALD: "cluster Wald (CR1)",
    TWO_WAY: "two-way bootstrap (participants x stimuli)",
}
ANALYSIS_ESTIMATES = {"effect_sizes": "mean_difference", "icc": "icc", "rm_correlations": "r"}


def estimand_notes(frame: pd.DataFrame) -> list[str]:
    """The headline rows' estimands, one line per model and estimand (two per model with generalise = stimuli:
    the two-way bootstrap rows' and the participant-level rows')."""
    if "estimand" not in frame:
        return []
    pairs = frame[["model", "estimand"]].drop_duplicates()
    return [f"Estimand, {model}: {estimand}." for model, estimand in pairs.itertuples(index=False)]


def mixed_model_notes(frame: pd.DataFrame) -> list[str]:
    """One line per mixed model: its variance components, sizes and warning (the same for every row of
    the model, so shown once under the table rather than in every row)."""
    notes = []
    for (model, outcome), rows in frame.groupby(["model", "outcome"], sort=False):
        row = rows.iloc[0]
        line = (
            f"{model}, {outcome}: variance participant {format_estimate(row['var_participant'])}, stimulus "
            f"{format_estimate(row['var_stimulus'])}, residual {format_estimate(row['var_residual'])}; "
            f"{row['n']} ratings, {row['n_participants']} participants, {row['n_stimuli']} stimuli"
        )
        note = row.get("note")
        notes.append(f"{line}; {note}" if isinstance(note, str) and note else line)
    return notes


ANALYSIS_FAMILIES = {
    "table2": "Multiple-testing family of p (Bonferroni): the five correlations of one condition.",
    "table3": "Multiple-testing family of p (Bonferroni): the four tests of one convention and condition.",
}
TABLE5_STARS = (0.01, 0.05, 0.1)  # the paper's Table 5 levels
OUTCOMES = {"d": "overall input-space distance d", "D": "output-space (fair-score) distance D"}
EQUATIONS = {"d": "Eq. 5", "D": "Eq. 6"}
TERMS = {"Intercept": "Intercept", "d_aggr": "d_S: Aggregate", "d_traj": "d_E: Trajectory"}


def regression_tables(table5: pd.DataFrame) -> list[Table]:
    """Table 5 as one table per model and outcome (the paper's columns): term, b with stars (clustered
    p, the paper's Table 5 levels), OLS SE and p, clustered SE, CI and p; fit statistics as notes."""
    tables = []
    for (model, outcome), part in table5.groupby(["model", "outcome"], sort=False):
        ols = part[part["se"] == "ols"].set_index("term")
        clustered = part[part["se"] == "clustered"].set_index("term")
        frame = pd.DataFrame(
            {
                "term": [
                    TERMS.get(t, t.replace("d_aggr", "d_S").replace("d_traj", "d_E").replace(":", " × "))
                    for t in clustered.index
                ],
                "coef": clustered["coef"].to_numpy(),
                "stars": clustered["stars"].to_numpy(),
                "std_err": ols["std_err"].reindex(clustered.index).to_numpy(),
                "pvalue": ols["pvalue"].reindex(clustered.index).to_numpy(),
                "se": clustered["std_err"].to_numpy(),
                "ci_low": clustered["ci_low"].to_numpy(),
                "ci_high": clustered["ci_high"].to_numpy(),
                "pvalue_clustered": clustered["pvalue"].to_numpy(),
            }
        )
        fit, fit_c = ols.iloc[0], clustered.iloc[0]
        equation = "Eq. 7-8" if model.startswith("moderation") else EQUATIONS[outcome]
        notes = [
            f"R² = {format_estimate(fit['r_squared'])}, adjusted R² = {format_estimate(fit['r_squared_adj'])}, "
            f"F = {format_estimate(fit['f_statistic'])}, N = {int(fit['n'])} pairs.",
            f"Wald tests (clustered): a1 = a2 = 0: χ² = {format_estimate(fit_c['wald_joint_chi2'])}, "
            f"p {_p_text(fit_c['wald_joint_p'])}; a1 = a2: χ² = {format_estimate(fit_c['wald_equal_chi2'])}, "
            f"p {_p_text(fit_c['wald_equal_p'])}.",
        ]
        tables.append(
            table_context(
                frame,
                caption=f"{model}: {OUTCOMES[outcome]} ({equation})",
                columns={
                    "term": "Term",
                    "coef": "b",
                    "std_err": "SE (OLS)",
                    "pvalue": "p (OLS)",
                    "se": "SE (clustered)",
                    "ci": f"{CI_LABEL} (clustered)",
                    "pvalue_clustered": "p (clustered)",
                },
                estimate="coef",
                star_levels=TABLE5_STARS,
                notes=notes,
            )
        )
    return tables


def _p_text(value: Any) -> str:
    text = format_pvalue(value)
    return text if text.startswith("<") else f"= {text}"


def effort_sections(result: PipelineResult, bts: pd.DataFrame, out_dir: Path) -> list[Section]:
    """The effort analysis's report sections (calibrations, Tables 2-5, headline tests, factors), each table
    also written as ``<name>.csv`` into ``out_dir`` (``table2.csv``, ...: the names the dashboard links), then
    its figures (Likert ratings, coefficients, the participants' BTS scores ``bts``, also written as
    ``bts_scores.csv``)."""
    tables = report_tables(result)
    for name, frame in tables.items():
        write_csv(frame, out_dir / f"{name}.csv")
    sections = []
    for name, frame in tables.items():
        title = HEADINGS[name]
        if name == "table5":
            section = Section(title=title, tables=regression_tables(frame) if len(frame) else [])
            section.explanation, section.csv = ANALYSIS[name], f"{name}.csv"
        else:
            notes = [ANALYSIS_FAMILIES[name]] if name in ANALYSIS_FAMILIES else []
            if name == "mixed_models" and len(frame):
                notes += mixed_model_notes(frame)
            if name == "participant_level" and len(frame):
                notes += estimand_notes(frame)
                frame = frame.assign(method=frame["method"].replace(SHORT_METHODS))
            if name == "effect_sizes" and len(frame):
                frame = frame.assign(
                    cohen_d_ci=[
                        format_ci(lo, hi, d)
                        for lo, hi, d in zip(
                            frame["cohen_d_ci_low"], frame["cohen_d_ci_high"], frame["cohen_d"], strict=True
                        )
                    ]
                )
            section = table_section(
                title,
                frame,
                explanation=ANALYSIS[name],
                csv=f"{name}.csv",
                columns=ANALYSIS_COLUMNS.get(name),
                estimate=ANALYSIS_ESTIMATES.get(name),
                notes=notes,
            )
        section.paragraphs = list(NOTES.get(name, []))
        sections.append(section)
    write_csv(bts, out_dir / "bts_scores.csv")
    assert result.sample is not None  # run_pipeline always sets it
    return sections + figure_sections(
        report_figures(result, result.sample.pairs, bts),
        [ANALYSIS["ratings_figure"], ANALYSIS["coefficient_figure"], ANALYSIS["bts_figure"]],
    )


def _alphas(result: PipelineResult | CalibrationsResult) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"condition": c.condition, "alpha": c.alpha, "ci_low": c.ci[0], "ci_high": c.ci[1]}
            for c in result.calibrations
        ],
        columns=["condition", "alpha", "ci_low", "ci_high"],
    )


def alpha_sensitivity(
    all_result: PipelineResult | CalibrationsResult, without: PipelineResult | CalibrationsResult | None
) -> Sensitivity:
    """Each condition's alpha (the effort study's headline estimate) with all participants and without the
    flagged ones (``without``; None when too few are left)."""
    others = _alphas(without) if without is not None else _alphas(all_result).iloc[0:0]
    n_all = all_result.sample.included if all_result.sample else 0
    n_without = without.sample.included if without is not None and without.sample else 0
    return sensitivity_of(
        [compare_estimates(_alphas(all_result), others, estimate="alpha", prefix="alpha")], n_all - n_without
    )
