"""What every report shares: tables, figures, cases and sections as the templates
(``templates/reports/``) show them, rendering, and writing results.json and CSV files.

The pure packages (``analysis/``, ``fairness/``) build the content: tables (DataFrames), Plotly
figures and JSON-ready dicts. This module turns tables into lists of formatted strings that the
template iterates over, emits each figure's JSON with ``json_script`` (drawn by
``static/surveys/figures.js``), and writes ``report.html`` (with the assets it loads, so that it opens
from disk), ``results.json`` and the CSV files (cells and column names neutralised for spreadsheets)
into ``out_dir``. No HTML is built in Python, and
the page carries no inline script, so it runs under the site's Content-Security-Policy.
"""

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from django.template.loader import render_to_string
from django.utils.text import slugify

from analysis.families import ADJUSTED
from analysis.sensitivity import Sensitivity
from core import strict_json
from core.report_texts import CI_LABEL
from research.export import table_to_csv
from runs.provenance import Provenance
from runs.report_assets import ASSETS_DIR, copy_report_assets
from runs.report_explanations import (
    SENSITIVITY,
    Explanation,
)
from runs.report_format import (
    STAR_LEVELS,
    decimals_for,
    format_ci,
    format_estimate,
    format_pvalue,
    stars_legend,
)

TEMPLATE = "reports/report.html"


@dataclass(frozen=True)
class Table:
    """A table as the template shows it: column names, rows of formatted cells, which columns are
    numeric (right-aligned), and notes under it (star legend, multiple-testing family, fit statistics)."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def head(self) -> list[tuple[str, bool]]:
        """(label, numeric) per column."""
        return list(zip(self.columns, self.numeric or [False] * len(self.columns), strict=True))

    @property
    def body(self) -> list[list[tuple[str, str | None, bool]]]:
        """Rows of (cell, stars, numeric). In a numeric column with significance stars the stars are
        split off (None elsewhere), so that the numbers stay aligned."""
        numeric = self.numeric or [False] * len(self.columns)
        starred = [num and any(row[i].endswith("*") for row in self.rows) for i, num in enumerate(numeric)]
        return [
            [
                (cell.rstrip("*"), cell[len(cell.rstrip("*")) :], num) if star else (cell, None, num)
                for cell, num, star in zip(row, numeric, starred, strict=True)
            ]
            for row in self.rows
        ]


@dataclass
class Figure:
    """A Plotly figure as plain JSON (``data``, ``layout``), drawn by figures.js with PNG and SVG
    download buttons; ``id`` is set when the report is rendered and names the downloaded file."""

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
    """One section of a report: a heading (listed in the nav bar), its explanation (what it shows, how
    to read it, formula and source), notes, tables, a figure, cases, and the CSV file with its full
    numbers (``csv``, a file beside report.html)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figure: Figure | None = None
    cases: list[Case] = field(default_factory=list)
    empty: str = ""
    id: str = ""
    explanation: Explanation | None = None
    csv: str = ""


_PVALUE = re.compile(r"^(p|pvalue.*|p_value.*|.*_p)$")
_ESTIMATES = ("r", "coef", "estimate", "statistic", "alpha", "eaif", "value", "DPT")


def is_pvalue_column(name: object) -> bool:
    """Columns holding p-values: ``p``, ``pvalue*``, ``p_value*`` or ``*_p``."""
    return isinstance(name, str) and bool(_PVALUE.match(name))


def format_value(value: Any, *, pvalue: bool = False, decimals: int | None = None) -> str:
    """A cell as text: integers as is, floats at a sensible precision (``runs.report_format``),
    p-values with 3 decimals or ``< .001``, pairs as ``[lo, hi]``, booleans yes/no, missing empty."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ", ".join(format_value(v, pvalue=pvalue, decimals=decimals) for v in value) + "]"
    if isinstance(value, float | np.floating) and math.isnan(float(value)):
        return ""
    if pvalue and isinstance(value, float | np.floating):
        return format_pvalue(value)
    return format_estimate(value, decimals)


def _label(name: object) -> str:
    if isinstance(name, tuple):
        return " · ".join(str(part) for part in name if part != "")
    return "" if name is None else str(name)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)


def _with_ci(frame: pd.DataFrame) -> pd.DataFrame:
    """``ci_low``/``ci_high`` (or a ``ci`` column of pairs) as one ``ci`` column of pairs, where ci_low was;
    likewise every other ``ci_<kind>_low``/``ci_<kind>_high`` as ``ci_<kind>``."""
    for low in [c for c in frame.columns if isinstance(c, str) and c.startswith("ci") and c.endswith("_low")]:
        name, high = low.removesuffix("_low"), f"{low.removesuffix('_low')}_high"
        if high in frame.columns:
            position = list(frame.columns).index(low)
            pairs = list(zip(frame[low], frame[high], strict=True))
            frame = frame.drop(columns=[low, high])
            frame.insert(position, name, pairs)
    return frame


def table_context(
    frame: pd.DataFrame,
    *,
    index: bool = False,
    caption: str = "",
    columns: Mapping[str, str] | None = None,
    estimate: str | None = None,
    star_levels: Sequence[float] = STAR_LEVELS,
    notes: Iterable[str] = (),
) -> Table:
    """A DataFrame as column names and rows of formatted strings, like a paper's table.

    ``index=True`` keeps the index as the first column(s). ``columns`` maps the frame's columns to the
    labels shown, in order (others stay in the CSV only; ``ci`` is the merged interval). The estimate
    column (``estimate``, else the first of r, coef, estimate, statistic, alpha, eaif, value, DPT)
    sets the row's precision for its CI and standard error, and carries the ``stars`` column with a
    legend (``star_levels``) under the table."""
    if index:
        frame = frame.reset_index()
    frame = _with_ci(frame)
    names = [c for c in frame.columns if c != "stars"] if columns is None else [c for c in columns if c in frame]
    estimate = estimate or next((c for c in _ESTIMATES if c in frame.columns), None)
    starred = "stars" in frame.columns and estimate in names
    rows = []
    for record in frame.to_dict("records"):
        decimals = None
        if estimate is not None and _is_number(record[estimate]) and not isinstance(record[estimate], int | np.integer):
            errors = [record[c] for c in ("std_err", "se") if c in record and _is_number(record[c])]
            decimals = max(decimals_for(v) for v in [record[estimate], *errors])
        cells = []
        for name in names:
            value = record[name]
            if name == "ci" or _pair(value):
                cells.append(format_ci(*value, decimals=decimals) if _pair(value) else "")
            elif name in ("std_err", "se") and decimals is not None:
                cells.append(format_value(value, decimals=decimals))
            elif name == estimate and starred:
                cells.append(f"{format_value(value, decimals=decimals)}{record['stars'] or ''}")
            else:
                cells.append(format_value(value, pvalue=is_pvalue_column(name)))
        rows.append(cells)
    labels = [columns[c] if columns else (CI_LABEL if c == "ci" else _label(c)) for c in names]
    numeric = [
        name == "ci"
        or bool(len(frame))
        and (all(map(_pair, frame[name])) or all(_is_number(v) or v is None for v in frame[name].dropna()))
        for name in names
    ]
    legend = [f"Stars: {stars_legend(star_levels)}."] if starred else []
    return Table(labels, rows, caption, numeric, legend + list(notes))


def _pair(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray) and len(value) == 2


def figure_context(fig: go.Figure | Mapping) -> Figure:
    """A Plotly figure (or its dict) as plain JSON for ``json_script``."""
    data = json.loads(pio.to_json(fig)) if isinstance(fig, go.Figure) else json.loads(json.dumps(dict(fig)))
    title = (data.get("layout") or {}).get("title") or {}
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    return Figure(text or "Figure", data)


def figure_sections(
    figures: Iterable[go.Figure | Mapping], explanations: Iterable[Explanation | None] = ()
) -> list[Section]:
    """One section per figure, titled by the figure's title, with the explanations in order."""
    contexts = list(map(figure_context, figures))
    notes = list(explanations) + [None] * len(contexts)
    return [
        Section(title=context.title, figure=context, explanation=note)
        for context, note in zip(contexts, notes, strict=False)
    ]


def render_report(
    out_dir: Path,
    title: str,
    sections: list[Section],
    *,
    intro: Iterable[str] = (),
    provenance: Provenance | None = None,
    methods: Mapping[str, str] | None = None,
) -> Path:
    """Render ``reports/report.html`` into ``out_dir/report.html`` (section ids assigned here): the
    provenance block first (``provenance``, else the date and software versions), ``intro`` notes,
    ``methods`` (name -> definition in words), then the sections. The styles and scripts it loads are
    copied into ``out_dir/report-assets/`` (``runs.report_assets``), so the file opens from disk."""
    out_dir.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for i, section in enumerate(sections, start=1):
        base = slugify(section.title)[:40] or f"section-{i}"
        section.id = base if base not in seen else f"{base}-{i}"
        seen.add(section.id)
        if section.figure is not None:
            section.figure.id = f"{section.id}-figure"
    page = render_to_string(
        TEMPLATE,
        {
            "title": title,
            "intro": list(intro),
            "sections": sections,
            "static_url": f"{ASSETS_DIR}/",
            "provenance": provenance or Provenance(),
            "methods": dict(methods or {}),
            "download_prefix": slugify(title)[:40] or "report",
        },
    )
    path = out_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    copy_report_assets(out_dir)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


ADJUSTMENT_NAMES = {"holm": "Holm", "bh": "BH", "none": "unadjusted"}


def with_adjusted(columns: dict[str, str], frame: pd.DataFrame, multiple_testing: dict) -> dict[str, str]:
    """``columns`` (name -> label) with each shown p-value's adjusted column (``analysis.families``) right
    after it, labelled with the method, where the table has one."""
    method = ADJUSTMENT_NAMES.get(multiple_testing.get("method", ""), "adjusted")
    out: dict[str, str] = {}
    for name, label in columns.items():
        out[name] = label
        if name + ADJUSTED in frame.columns:
            out[name + ADJUSTED] = f"{label}, {method}"
    return out


def write_json(data: Any, path: Path) -> Any:
    """Write ``data`` as indented JSON (NumPy numbers as numbers, anything else as text); a NaN or an infinity
    raises ``core.strict_json.NonFiniteJSON``. Returns what was written, as plain JSON values (what reading the
    file gives)."""
    text = strict_json.dumps(data, indent=1, default=_json_default)
    path.write_text(text, encoding="utf-8")
    return json.loads(text)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write a table as CSV with cells and column names neutralised for spreadsheets."""
    path.write_text(table_to_csv(frame), encoding="utf-8")


def _heading(name: str) -> str:
    """``fair_scores_vs_ai`` -> ``Fair scores vs ai``: only the first letter capitalised."""
    text = name.replace("_", " ")
    return text[:1].upper() + text[1:]


def table_section(
    title: str,
    frame: pd.DataFrame,
    *,
    index: bool = False,
    empty: str = "Nothing to show.",
    explanation: Explanation | None = None,
    csv: str = "",
    **table: Any,
) -> Section:
    """A section of one table (``table``: options of :func:`table_context`)."""
    section = Section(title=title, empty=empty, explanation=explanation, csv=csv)
    if frame is not None and len(frame):
        section.tables = [table_context(frame, index=index, **table)]
    return section


SENSITIVITY_COLUMNS = {
    "estimate": "Estimate",
    "all": "All participants",
    "without_flagged": "Without flagged",
    "conclusion_changes": "Conclusion changes",
    "reason": "Why",
}


def sensitivity_section(sensitivity: Sensitivity, out_dir: Path) -> Section:
    """The report's sensitivity section (``sensitivity.csv`` written beside it, every headline estimate with
    all participants and without the flagged ones): the estimates whose conclusion changes, and how many
    others keep theirs."""
    table = sensitivity.table
    write_csv(table, out_dir / "sensitivity.csv")
    changed = table[table["conclusion_changes"]].assign(conclusion_changes="yes")
    section = table_section(
        "Sensitivity: without participants flagged for answer quality",
        changed,
        empty="No headline estimate changes its conclusion without the flagged participants.",
        explanation=SENSITIVITY,
        csv="sensitivity.csv",
        columns=SENSITIVITY_COLUMNS,
    )
    kept = len(table) - len(changed)
    section.paragraphs = [sensitivity.sentence()]
    if len(changed) and kept:
        section.paragraphs.append(
            f"The other {kept} headline estimate{'s keep their' if kept != 1 else ' keeps its'} conclusion "
            "(all of them in sensitivity.csv)."
        )
    return section


def add_sensitivity(
    sensitivity: Sensitivity | None, out_dir: Path, *, results: dict, sections: list[Section], intro: list[str]
) -> None:
    """A report's sensitivity to the flagged participants, if it has one: ``results["sensitivity"]`` (the
    flagged count, the sentence and the rows), its section (:func:`sensitivity_section`) and its sentence
    in the introduction."""
    if sensitivity is None:
        return
    results["sensitivity"] = {
        "n_flagged": sensitivity.n_flagged,
        "sentence": sensitivity.sentence(),
        "estimates": json.loads(sensitivity.table.to_json(orient="records")),
    }
    sections.append(sensitivity_section(sensitivity, out_dir))
    intro.append(sensitivity.sentence())
