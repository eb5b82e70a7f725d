"""Content of the differential-parity and situation-testing reports: figures, flagged cases and
JSON results (pure; no Django). The HTML is rendered from templates by ``runs.reports``."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from fairness.situation_testing import SituationTestingResult

DP_NOTE = (
    "DPT: Welch's t on per-item differences R0 - R1 between the groups (one-sided p); DPD: Cohen's d "
    "with pooled SD, labelled by the paper's Table 1."
)


def differences_figure(items: pd.DataFrame, *, difference: str, by: str, facet: str) -> go.Figure:
    """Box plots of the per-item differences R0 - R1 by group, one colour per facet (e.g. condition)."""
    fig = go.Figure()
    for value, part in items.groupby(facet):
        fig.add_trace(go.Box(x=part[by].astype(str), y=part[difference], name=str(value), boxmean=True))
    fig.update_layout(
        boxmode="group", title=f"Per-item differences ({difference}) by {by}", yaxis_title=difference, xaxis_title=by
    )
    return fig


def plain(value: object) -> str:
    """A label as Plotly shows it as text: Plotly reads <b>, <i>, <a href> in labels, so ``<``, ``>`` and ``&``
    are written as entities (a rater group "<i>judge</i>" is shown as typed, not in italics)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def rater_group_bars(
    table: pd.DataFrame,
    *,
    x: str,
    y: str,
    title: str,
    labels: Mapping[str, str] | None = None,
    facets: Sequence[str] = (),
) -> go.Figure:
    """Bars of ``y`` per ``x``, one colour per rater group (``rater_group``; one colour for a table without it),
    with the CI (``ci_low``, ``ci_high``, when the table has them) as error bars; rows without a value (a group
    whose estimate failed) are left out, and an empty category (the row over all subjects of a by-subject-group
    table) is labelled "all". ``facets``: columns that, where they vary, label an outer level of the x axis
    (Plotly's multicategory axis: e.g. measure · subject attribute, then subject group). The axes are titled by
    ``labels`` (column -> label, the report's column labels) or the column names."""
    fig = go.Figure()
    shown = table.dropna(subset=[y])
    outer = [f for f in facets if f in shown.columns and shown[f].nunique() > 1]
    parts = shown.groupby("rater_group", sort=False) if "rater_group" in shown.columns else [("", shown)]
    for group, part in parts:
        categories = [plain(v) for v in part[x].astype(str).replace("", "all")]
        facet = part[outer].astype(str).agg(" · ".join, axis=1).map(plain).tolist() if outer else []
        positions = [facet, categories] if outer else categories
        bars = go.Bar(x=positions, y=part[y], name=plain(group), showlegend="rater_group" in shown.columns)
        if {"ci_low", "ci_high"} <= set(part.columns):
            bars.error_y = {
                "type": "data",
                "symmetric": False,
                "array": (part["ci_high"] - part[y]).tolist(),
                "arrayminus": (part[y] - part["ci_low"]).tolist(),
            }
        fig.add_trace(bars)
    names = labels or {}
    fig.update_layout(
        barmode="group",
        title=title,
        xaxis_title=names.get(x, x),
        yaxis_title=names.get(y, y),
        legend_title="Rater group",
    )
    return fig


def dp_results(tables: dict[str, pd.DataFrame]) -> dict:
    """results.json of a differential-parity report: each table as records."""
    return {name: json.loads(frame.to_json(orient="records")) for name, frame in tables.items()}


def counts_figure(result: SituationTestingResult) -> go.Figure:
    """Complainants flagged per k, one line per method (significant counts dotted)."""
    fig = go.Figure()
    counts = result.counts
    for column in [c for c in counts.columns if c != "k"]:
        fig.add_trace(
            go.Scatter(
                x=counts["k"],
                y=counts[column],
                mode="lines+markers",
                name=column,
                line={"dash": "dot" if "_sig" in column else "solid"},
            )
        )
    fig.update_layout(
        title="Complainants flagged per k", xaxis_title="k (neighbours per group)", yaxis_title="complainants"
    )
    return fig


@dataclass(frozen=True)
class FlaggedCase:
    """One flagged complainant with the rows of its control and test neighbours."""

    complainant: int
    p_c: float
    p_t: float
    delta: float
    significant: bool  # the paper's Wald rule
    pvalue: float  # the one-sided Fisher exact test
    pvalue_adjusted: float  # adjusted over the method's and k's complainants
    row: pd.DataFrame
    control: pd.DataFrame
    test: pd.DataFrame


def flagged_cases(
    result: SituationTestingResult, *, k: int, method: str, data: pd.DataFrame, limit: int = 200
) -> list[FlaggedCase]:
    """Flagged complainants of one k and method (largest delta_p first), with their neighbours."""
    rows = result.individuals[(result.individuals["k"] == k) & result.individuals[method]]
    rows = rows.sort_values(f"{method}_delta", ascending=False).head(limit)
    cases = []
    for row in rows.itertuples(index=False):
        c = int(row.complainant)
        groups = result.groups_of(c, k, method)
        cases.append(
            FlaggedCase(
                complainant=c,
                p_c=float(getattr(row, f"{method}_p_c")),
                p_t=float(getattr(row, f"{method}_p_t")),
                delta=float(getattr(row, f"{method}_delta")),
                significant=bool(getattr(row, f"{method}_sig")),
                pvalue=float(getattr(row, f"{method}_pvalue")),
                pvalue_adjusted=float(getattr(row, f"{method}_pvalue_adjusted")),
                row=data.iloc[[c]],
                control=data.iloc[groups["control"]],
                test=data.iloc[groups["test"]],
            )
        )
    return cases


def st_results(result: SituationTestingResult, settings: dict | None = None) -> dict:
    """results.json of a situation-testing report: settings, counts per k and ``multiple_testing`` (the
    families: one per method and k, its complainants' tests)."""
    summary = {
        "settings": settings or {},
        "counts": json.loads(result.counts.to_json(orient="records")),
        "multiple_testing": result.multiple_testing,
    }
    return json.loads(json.dumps(summary, default=str))
