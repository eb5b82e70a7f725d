"""The analysis report's content: tables (DataFrames), Plotly figures and the JSON results (pure;
no Django). The HTML is rendered from templates by ``surveys.reports.write_report``."""

import json

import pandas as pd
import plotly.graph_objects as go

from analysis.pipeline import PipelineResult

TABLES = ("table2", "table3", "table4", "table5", "factor_shares")
HEADINGS = {
    "calibrations": "Calibration (alpha = a2 / (a1 + a2))",
    "table2": "Table 2: Spearman correlations",
    "table3": "Table 3: Hotelling and Steiger tests (paper convention beside the Spearman-adjusted one)",
    "table4": "Table 4: bootstrap 95% CIs of r_traj - r_aggr",
    "table5": "Table 5: regressions",
    "factor_shares": "Rationale factors chosen",
}
NOTES = {
    "calibrations": [
        "Caveat: alpha is a ratio of linear weights of Likert ratings, used by EaIF as the weight of squared "
        "differences of effort E and aggregate S on their own scales; read it as the relative importance of "
        "trajectory over aggregate, not as a calibrated metric weight (see analysis.pipeline.alpha_from)."
    ],
    "table3": [
        "Rows with convention 'paper' reproduce the paper's Table 3: Hotelling's t and, as its "
        "'Steiger's Z-test (Meng, Rosenthal and Rubin 1992)', the Meng-Rosenthal-Rubin Z, both on the "
        "Spearman correlations without any Spearman adjustment.",
        "Rows with convention 'fieller' are the better-calibrated statistics for Spearman correlations: "
        "Hotelling's t and Steiger's Z1* divided by sqrt(1.06) (Fieller-Hartley-Pearson variance "
        "1.06/(n-3)). Bonferroni p-values are over the four tests of one convention and condition.",
    ],
}


def ratings_figure(pairs: pd.DataFrame) -> go.Figure:
    """Violins of the three Likert distances per condition."""
    fig = go.Figure()
    for column, name in (("d_traj", "trajectory d_E"), ("d_aggr", "aggregate d_S"), ("d_overall", "overall d")):
        fig.add_trace(
            go.Violin(
                x=pairs["condition"],
                y=pairs[column],
                name=name,
                box_visible=True,
                meanline_visible=True,
                spanmode="hard",
            )
        )
    fig.update_layout(violinmode="group", title="Likert ratings per condition", yaxis_title="Likert (1 = very similar)")
    return fig


def coefficient_figure(result: PipelineResult) -> go.Figure:
    """Eq. 5-6 coefficients with 95% CIs (participant-clustered SEs) per condition."""
    t5 = result.table5
    rows = t5[
        (t5["se"] == "clustered") & t5["term"].isin(["d_aggr", "d_traj"]) & ~t5["model"].str.startswith("moderation")
    ]
    fig = go.Figure()
    for (model, outcome), group in rows.groupby(["model", "outcome"]):
        fig.add_trace(
            go.Scatter(
                x=group["coef"],
                y=[f"{model} · {outcome} · {t}" for t in group["term"]],
                mode="markers",
                name=f"{model} ({outcome})",
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": group["ci_high"] - group["coef"],
                    "arrayminus": group["coef"] - group["ci_low"],
                },
            )
        )
    fig.update_layout(
        title="Regression coefficients with 95% CIs (clustered by participant)", xaxis_title="coefficient"
    )
    return fig


def bts_figure(bts: pd.DataFrame) -> go.Figure:
    """Histogram of participants' mean BTS scores."""
    fig = go.Figure(go.Histogram(x=bts["total"], nbinsx=30, name="BTS"))
    fig.update_layout(title="Participants' mean BTS score (binarised overall question)", xaxis_title="BTS score")
    return fig


def calibrations_table(result: PipelineResult) -> pd.DataFrame:
    """One row per condition: alpha, its CI, a1, a2, participants, resamples, seed."""
    return pd.DataFrame([c.__dict__ | {"ci": list(c.ci)} for c in result.calibrations])


def report_tables(result: PipelineResult) -> dict[str, pd.DataFrame]:
    """The report's tables by file name (``calibrations`` first, then Tables 2-5 and factors)."""
    return {"calibrations": calibrations_table(result), **{name: getattr(result, name) for name in TABLES}}


def report_figures(result: PipelineResult, pairs: pd.DataFrame, bts: pd.DataFrame) -> list[go.Figure]:
    """Likert violins, regression coefficients, BTS histogram."""
    return [ratings_figure(pairs), coefficient_figure(result), bts_figure(bts)]


def results_dict(result: PipelineResult) -> dict:
    """results.json: seed, exclusions, calibrations and every table as records."""
    return {
        "seed": result.seed,
        "exclusions": result.exclusions,
        "calibrations": [c.__dict__ | {"ci": list(c.ci)} for c in result.calibrations],
        **{name: json.loads(getattr(result, name).to_json(orient="records")) for name in TABLES},
    }
