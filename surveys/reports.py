"""HTML reports, rendered from autoescaped templates (``templates/reports/``), plus their JSON and
CSV files.

The pure packages (``analysis/``, ``fairness/``) build the content: tables (DataFrames), Plotly
figures and JSON-ready dicts. This module turns tables into lists of formatted strings that the
template iterates over, emits each figure's JSON with ``json_script`` (drawn by
``static/surveys/figures.js``), and writes ``report.html``, ``results.json`` and the CSV files (cells
and column names neutralised for spreadsheets) into ``out_dir``. No HTML is built in Python, and
the page carries no inline script, so it runs under the site's Content-Security-Policy.
"""

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from django.template.loader import render_to_string
from django.templatetags.static import PrefixNode
from django.utils.text import slugify

from analysis.pipeline import PipelineResult
from analysis.report import HEADINGS, NOTES, report_figures, report_tables, results_dict
from fairness import law_school
from fairness.model_audit import AuditResult, audit_figures, audit_summary, audit_tables, eaif_pivot, notions_pivot
from fairness.relative_reports import DP_NOTE, counts_figure, dp_results, flagged_cases, st_results
from fairness.situation_testing import SituationTestingResult
from surveys.export import table_to_csv

TEMPLATE = "reports/report.html"


@dataclass(frozen=True)
class Table:
    """A table as the template shows it: column names and rows of formatted cells."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Figure:
    """A Plotly figure as plain JSON (``data``, ``layout``), drawn by figures.js; ``id`` is set when
    the report is rendered."""

    title: str
    data: dict
    id: str = ""

    @property
    def data_id(self) -> str:
        return f"{self.id}-data"


@dataclass(frozen=True)
class Case:
    """An expandable entry (e.g. a flagged complainant with its neighbours)."""

    id: str
    summary: str
    tables: list[Table]


@dataclass
class Section:
    """One section of a report: a heading (listed in the nav bar), text, tables, a figure, cases."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figure: Figure | None = None
    cases: list[Case] = field(default_factory=list)
    empty: str = ""
    id: str = ""


_PVALUE = re.compile(r"^(p|pvalue.*|p_value.*|.*_p)$")


def is_pvalue_column(name: object) -> bool:
    """Columns holding p-values: ``p``, ``pvalue*``, ``p_value*`` or ``*_p``."""
    return isinstance(name, str) and bool(_PVALUE.match(name))


def format_value(value: Any, *, pvalue: bool = False) -> str:
    """A cell as text: integers as is, floats with 4 decimals (3 significant digits when tiny or
    huge), p-values with 3 decimals or ``< .001``, missing values empty."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return ""
        if pvalue:
            return "< .001" if v < 0.001 else f"{v:.3f}"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
            return f"{v:.3g}"
        return f"{v:.4f}"
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ", ".join(format_value(v, pvalue=pvalue) for v in value) + "]"
    return str(value)


def _label(name: object) -> str:
    if isinstance(name, tuple):
        return " · ".join(str(part) for part in name if part != "")
    return "" if name is None else str(name)


def table_context(frame: pd.DataFrame, *, index: bool = False, caption: str = "") -> Table:
    """A DataFrame as column names and rows of formatted strings (``index=True`` keeps the index
    as the first column(s))."""
    if index:
        frame = frame.reset_index()
    columns = list(frame.columns)
    pvalues = [is_pvalue_column(c) for c in columns]
    rows = [
        [format_value(v, pvalue=p) for v, p in zip(row, pvalues, strict=True)]
        for row in frame.itertuples(index=False, name=None)
    ]
    return Table([_label(c) for c in columns], rows, caption)


def figure_context(fig: go.Figure | Mapping) -> Figure:
    """A Plotly figure (or its dict) as plain JSON for ``json_script``."""
    data = json.loads(pio.to_json(fig)) if isinstance(fig, go.Figure) else json.loads(json.dumps(dict(fig)))
    title = (data.get("layout") or {}).get("title") or {}
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    return Figure(text or "Figure", data)


def figure_sections(figures: Iterable[go.Figure | Mapping]) -> list[Section]:
    """One section per figure, titled by the figure's title."""
    return [Section(title=context.title, figure=context) for context in map(figure_context, figures)]


def static_base() -> str:
    """STATIC_URL with its prefix. Reports are files kept for months, so they load the stable,
    unhashed static names (served by WhiteNoise as well) rather than the manifest's hashed ones."""
    return PrefixNode.handle_simple("STATIC_URL")


def render_report(out_dir: Path, title: str, sections: list[Section], *, intro: Iterable[str] = ()) -> Path:
    """Render ``reports/report.html`` into ``out_dir/report.html`` (section ids assigned here)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for i, section in enumerate(sections, start=1):
        base = slugify(section.title)[:40] or f"section-{i}"
        section.id = base if base not in seen else f"{base}-{i}"
        seen.add(section.id)
        if section.figure is not None:
            section.figure.id = f"{section.id}-figure"
    page = render_to_string(
        TEMPLATE, {"title": title, "intro": list(intro), "sections": sections, "static_url": static_base()}
    )
    path = out_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def write_json(data: Any, path: Path) -> None:
    """Write ``data`` as indented JSON (NumPy numbers as numbers, anything else as text)."""
    path.write_text(json.dumps(data, indent=1, default=_json_default), encoding="utf-8")


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write a table as CSV with cells and column names neutralised for spreadsheets."""
    path.write_text(table_to_csv(frame), encoding="utf-8")


def _heading(name: str) -> str:
    """``fair_scores_vs_ai`` -> ``Fair scores vs ai``: only the first letter capitalised."""
    text = name.replace("_", " ")
    return text[:1].upper() + text[1:]


def _table_section(title: str, frame: pd.DataFrame, *, index: bool = False, empty: str = "Nothing to show.") -> Section:
    if frame is None or not len(frame):
        return Section(title=title, empty=empty)
    return Section(title=title, tables=[table_context(frame, index=index)])


# The analysis report ----------------------------------------------------------------------------


def write_report(result: PipelineResult, pairs: pd.DataFrame, bts: pd.DataFrame, out_dir: Path, *, title: str) -> Path:
    """The study analysis: report.html, results.json, one CSV per table and bts_scores.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = report_tables(result)
    for name, frame in tables.items():
        write_csv(frame, out_dir / f"{name}.csv")
    write_csv(bts, out_dir / "bts_scores.csv")
    write_json(results_dict(result), out_dir / "results.json")
    intro = [f"Seed {result.seed}.", result.sample.sentence()] if result.sample else [f"Seed {result.seed}."]
    sections = [_table_section(HEADINGS[name], frame) for name, frame in tables.items()]
    for section, name in zip(sections, tables, strict=True):
        section.paragraphs = list(NOTES.get(name, []))
    sections += figure_sections(report_figures(result, pairs, bts))
    return render_report(out_dir, title, sections, intro=intro)


# The model audit ----------------------------------------------------------------------------------


def write_audit_report(result: AuditResult, out_dir: Path, *, title: str) -> Path:
    """A model audit: report.html, results.json, eaif.csv, parity.csv, eagf_bins.csv and, with
    feedback, disagreement_notions.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in audit_tables(result).items():
        write_csv(frame, out_dir / f"{name}.csv")
    write_json(audit_summary(result), out_dir / "results.json")
    weights = ", ".join(f"{name} {alpha:.4g}" for name, alpha in result.settings["weights"].items())
    intro = [f"{result.settings['n_subjects']} subjects. Effort weights alpha: {weights}."]
    sections = [
        _table_section("Effort-aware individual fairness (Tables 1 and 7)", eaif_pivot(result), index=True),
        _table_section(
            "Traditional (effort-unaware) demographic parity (Tables 6 and 8)",
            result.parity.rename_axis("model"),
            index=True,
        ),
    ]
    notions = notions_pivot(result)
    if notions is not None:
        sections.append(
            _table_section("Disagreement-derived notions (critic labels from yes/no feedback)", notions, index=True)
        )
    cal = result.disagreement_calibration
    if cal is not None:
        sections.append(
            Section(
                title="Effort weight from disagreement feedback",
                paragraphs=[
                    f"alpha = {cal.alpha:.2f} (95% CI {cal.ci[0]:.2f}-{cal.ci[1]:.2f}); criterion: {cal.criterion}; "
                    f"{cal.n_subjects} subjects, {cal.n_participants} participants."
                ],
            )
        )
    sections.append(
        Section(
            title="Worst pairs",
            paragraphs=["The ten pairs with the largest violation D - d per model."],
            tables=[
                table_context(pairs.head(10), caption=f"Worst pairs: {model}") for model, pairs in result.worst.items()
            ],
        )
    )
    sections += figure_sections(audit_figures(result))
    return render_report(out_dir, title, sections, intro=intro)


# Differential parity and situation testing ---------------------------------------------------------


def write_dp_report(
    tables: dict[str, pd.DataFrame],
    figures: list,
    out_dir: Path,
    *,
    title: str,
    definitions: dict[str, str] | None = None,
) -> Path:
    """Differential parity: report.html, results.json and one CSV per table. ``definitions`` (by table
    name, e.g. ``fairness.study_parity.TABLE_DEFINITIONS``) say at the top of each section what R0, R1
    and A are in words."""
    definitions = definitions or {}
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        write_csv(frame, out_dir / f"{name}.csv")
    write_json(dp_results(tables), out_dir / "results.json")
    sections = []
    for name, frame in tables.items():
        section = _table_section(_heading(name), frame, empty="Nothing to test.")
        if name in definitions:
            section.paragraphs.insert(0, definitions[name])
        sections.append(section)
    sections += figure_sections(figures)
    return render_report(out_dir, title, sections, intro=[DP_NOTE])


def flagged_section(
    result: SituationTestingResult, *, k: int, method: str, data: pd.DataFrame, title: str, limit: int = 200
) -> Section:
    """Flagged complainants of one k and method, each expandable to its control and test groups."""
    cases = []
    for case in flagged_cases(result, k=k, method=method, data=data, limit=limit):
        significant = " (significant)" if case.significant else ""
        cases.append(
            Case(
                id=f"{slugify(title)[:30]}-c{case.complainant}",
                summary=f"complainant {case.complainant}: p_c = {case.p_c:.3f}, p_t = {case.p_t:.3f}, "
                f"delta_p = {case.delta:.3f}{significant}",
                tables=[
                    table_context(case.row, index=True, caption="Complainant"),
                    table_context(case.control, index=True, caption=f"Control group ({len(case.control)})"),
                    table_context(case.test, index=True, caption=f"Test group ({len(case.test)})"),
                ],
            )
        )
    return Section(title=title, cases=cases, empty="No complainant flagged.")


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
    """Situation testing: report.html, results.json, counts.csv and individuals.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(result.counts, out_dir / "counts.csv")
    write_csv(result.individuals, out_dir / "individuals.csv")
    write_json(st_results(result, settings), out_dir / "results.json")
    method = method or ("CSTwo" if "CSTwo" in result.counts else "ST")
    k = k or int(result.counts["k"].min())
    settings_text = "; ".join(f"{key} {format_value(value)}" for key, value in (settings or {}).items())
    sections = [
        _table_section("Complainants flagged per k", result.counts),
        *figure_sections([counts_figure(result)]),
        flagged_section(result, k=k, method=method, data=data, title=f"Flagged complainants ({method}, k = {k})"),
    ]
    return render_report(out_dir, title, sections, intro=[f"Settings: {settings_text}."] if settings_text else [])


def write_law_school_report(
    results: law_school.LawSchoolResults, data: pd.DataFrame, out_dir: Path, *, k: Iterable[int]
) -> Path:
    """The CST paper's LSAC experiment (``fairness.law_school.run``): counts per attribute,
    flagged complainants (CST without centres, smallest k) and multiple discrimination."""
    out_dir.mkdir(parents=True, exist_ok=True)
    k_min = min(k)
    sections: list[Section] = []
    for name in ("gender", "race", "intersectional"):
        res = getattr(results, name)
        write_csv(res.counts, out_dir / f"counts_{name}.csv")
        fig = counts_figure(res)
        fig.update_layout(title=f"{name}: complainants flagged per k")
        sections.append(_table_section(f"{_heading(name)}: complainants flagged per k", res.counts))
        sections += figure_sections([fig])
        sections.append(
            flagged_section(
                res,
                k=k_min,
                method="CSTwo",
                data=data,
                limit=50,
                title=f"{_heading(name)}: flagged by CST without centres (k = {k_min})",
            )
        )
    write_csv(results.multiple, out_dir / "counts_multiple.csv")
    sections.append(_table_section("Multiple discrimination (gender and race, each at alpha / 2)", results.multiple))
    protected = "; ".join(f"{key} {value}" for key, value in results.n_protected.items())
    intro = [
        f"Protected individuals: {protected}. Decision: admitted when 0.6 UGPA + 0.4 LSAT >= {law_school.MIN_SCORE}. "
        f"Counterfactuals: linear SCM {law_school.DAG}."
    ]
    return render_report(out_dir, "Counterfactual situation testing: LSAC law-school data", sections, intro=intro)
