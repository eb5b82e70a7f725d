"""The analysis report: HTML with Plotly figures, plus JSON and CSV tables (pure; no Django)."""

import html
import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from analysis.pipeline import PipelineResult
from fairness.html_report import figures_html, table, write_page

TABLES = ("table2", "table3", "table4", "table5", "factor_shares")


def ratings_figure(pairs: pd.DataFrame) -> go.Figure:
    """Violins of the three Likert distances per condition."""
    fig = go.Figure()
    for column, name in (("d_traj", "trajectory d_E"), ("d_aggr", "aggregate d_S"), ("d_overall", "overall d")):
        fig.add_trace(
            go.Violin(x=pairs["condition"], y=pairs[column], name=name, box_visible=True, meanline_visible=True)
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
    fig = go.Figure(go.Histogram(x=bts["total"], nbinsx=30, name="BTS"))
    fig.update_layout(title="Participants' mean BTS score (binarised overall question)", xaxis_title="BTS score")
    return fig


def write_report(result: PipelineResult, pairs: pd.DataFrame, bts: pd.DataFrame, out_dir: Path, *, title: str) -> Path:
    """Write report.html (+ plotly.min.js beside it), results.json and one CSV per table."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        getattr(result, name).to_csv(out_dir / f"{name}.csv", index=False)
    bts.to_csv(out_dir / "bts_scores.csv", index=False)
    calibrations = [c.__dict__ | {"ci": list(c.ci)} for c in result.calibrations]
    pd.DataFrame(calibrations).to_csv(out_dir / "calibrations.csv", index=False)
    (out_dir / "results.json").write_text(json.dumps(results_dict(result), indent=1, default=float))
    figures = [ratings_figure(pairs), coefficient_figure(result), bts_figure(bts)]
    body = [f"<p>Seed {result.seed}. Exclusions: {html.escape(str(result.exclusions))}</p>"]
    body.append("<h2>Calibration (alpha = a2 / (a1 + a2))</h2>" + table(pd.DataFrame(calibrations)))
    for name, heading in (
        ("table2", "Table 2: Spearman correlations"),
        ("table3", "Table 3: Hotelling and Steiger tests"),
        ("table4", "Table 4: bootstrap 95% CIs of r_traj - r_aggr"),
        ("table5", "Table 5: regressions"),
        ("factor_shares", "Rationale factors chosen"),
    ):
        body.append(f"<h2>{heading}</h2>" + table(getattr(result, name)))
    body.extend(figures_html(figures))
    return write_page(out_dir, title, body)


def results_dict(result: PipelineResult) -> dict:
    return {
        "seed": result.seed,
        "exclusions": result.exclusions,
        "calibrations": [c.__dict__ | {"ci": list(c.ci)} for c in result.calibrations],
        **{name: json.loads(getattr(result, name).to_json(orient="records")) for name in TABLES},
    }
