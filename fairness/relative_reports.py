"""HTML/JSON/CSV reports for differential parity and situation testing (pure)."""

import html
import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from fairness.html_report import figures_html, table, write_page
from fairness.situation_testing import SituationTestingResult


def differences_figure(items: pd.DataFrame, *, difference: str, by: str, facet: str) -> go.Figure:
    """Box plots of the per-item differences R0 - R1 by group, one colour per facet (e.g. condition)."""
    fig = go.Figure()
    for value, part in items.groupby(facet):
        fig.add_trace(go.Box(x=part[by].astype(str), y=part[difference], name=str(value), boxmean=True))
    fig.update_layout(
        boxmode="group", title=f"Per-item differences ({difference}) by {by}", yaxis_title=difference, xaxis_title=by
    )
    return fig


def write_dp_report(tables: dict[str, pd.DataFrame], figures: list, out_dir: Path, *, title: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    (out_dir / "results.json").write_text(
        json.dumps({k: json.loads(v.to_json(orient="records")) for k, v in tables.items()}, indent=1)
    )
    parts = [
        "<p>DPT: Welch's t on per-item differences R0 - R1 between the groups (one-sided p); DPD: Cohen's d "
        "with pooled SD, labelled by the paper's Table 1.</p>"
    ]
    for name, frame in tables.items():
        parts += [
            f"<h2>{html.escape(name.replace('_', ' '))}</h2>",
            table(frame) if len(frame) else "<p>Nothing to test.</p>",
        ]
    return write_page(out_dir, title, parts + figures_html(figures))


def counts_figure(result: SituationTestingResult) -> go.Figure:
    fig = go.Figure()
    counts = result.counts
    for column in [c for c in counts.columns if c != "k"]:
        fig.add_trace(
            go.Scatter(
                x=counts["k"],
                y=counts[column],
                mode="lines+markers",
                name=column,
                line={"dash": "dot" if column.endswith("_sig") else "solid"},
            )
        )
    fig.update_layout(
        title="Complainants flagged per k", xaxis_title="k (neighbours per group)", yaxis_title="complainants"
    )
    return fig


def flagged_table(result: SituationTestingResult, *, k: int, method: str, data: pd.DataFrame, limit: int = 200) -> str:
    """Flagged complainants of one k and method, each expandable to its control and test neighbours."""
    rows = result.individuals[(result.individuals["k"] == k) & result.individuals[method]]
    rows = rows.sort_values(f"{method}_delta", ascending=False).head(limit)
    if rows.empty:
        return "<p>No complainant flagged.</p>"
    out = []
    for row in rows.itertuples(index=False):
        c = int(row.complainant)
        groups = result.groups_of(c, k, method)
        sig = " (significant)" if getattr(row, f"{method}_sig") else ""
        out.append(
            f"<details id='c{c}'><summary>complainant {c}: p_c = {getattr(row, f'{method}_p_c'):.3f}, "
            f"p_t = {getattr(row, f'{method}_p_t'):.3f}, delta_p = {getattr(row, f'{method}_delta'):.3f}{sig}</summary>"
            f"<p>Complainant</p>{table(data.iloc[[c]], index=True)}"
            f"<p>Control group ({len(groups['control'])})</p>{table(data.iloc[groups['control']], index=True)}"
            f"<p>Test group ({len(groups['test'])})</p>{table(data.iloc[groups['test']], index=True)}</details>"
        )
    return "\n".join(out)


def write_st_report(
    result: SituationTestingResult,
    data: pd.DataFrame,
    out_dir: Path,
    *,
    title: str,
    method: str | None = None,
    k: int | None = None,
    settings: dict | None = None,
) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    result.counts.to_csv(out_dir / "counts.csv", index=False)
    result.individuals.to_csv(out_dir / "individuals.csv", index=False)
    (out_dir / "results.json").write_text(
        json.dumps(
            {"settings": settings or {}, "counts": json.loads(result.counts.to_json(orient="records"))},
            indent=1,
            default=str,
        )
    )
    method = method or ("CSTwo" if "CSTwo" in result.counts else "ST")
    k = k or int(result.counts["k"].min())
    parts = [
        f"<p>Settings: {html.escape(json.dumps(settings or {}, default=str))}</p>",
        table(result.counts),
        *figures_html([counts_figure(result)]),
        f"<h2>Flagged complainants ({method}, k = {k})</h2>",
        flagged_table(result, k=k, method=method, data=data),
    ]
    return write_page(out_dir, title, parts)
