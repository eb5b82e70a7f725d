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
from collections.abc import Iterable, Mapping, Sequence
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

from analysis.bts import left_out_sentence
from analysis.pipeline import PipelineResult
from analysis.repeated_measures import BOOTSTRAP, CLUSTER_WALD
from analysis.report import HEADINGS, NOTES, report_figures, report_tables, results_dict
from fairness import law_school
from fairness.calibration import boundary_note
from fairness.model_audit import AuditResult, audit_figures, audit_summary, audit_tables, notions_pivot
from fairness.rater_groups import ALL
from fairness.relative_reports import DP_NOTE, counts_figure, dp_results, flagged_cases, st_results
from fairness.situation_testing import SituationTestingResult
from research.export import table_to_csv
from runs.provenance import Provenance
from runs.report_explanations import (
    ANALYSIS,
    AUDIT,
    DESIGN,
    DIFFERENTIAL_PARITY,
    SITUATION_TESTING,
    ST_METHODS,
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
CI_LABEL = "95% CI"


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
    """``ci_low``/``ci_high`` (or a ``ci`` column of pairs) as one ``ci`` column of pairs, where ci_low was."""
    if {"ci_low", "ci_high"} <= set(frame.columns):
        position = list(frame.columns).index("ci_low")
        pairs = list(zip(frame["ci_low"], frame["ci_high"], strict=True))
        frame = frame.drop(columns=["ci_low", "ci_high"])
        frame.insert(position, "ci", pairs)
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
            if name == "ci":
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
        name == "ci" or bool(len(frame)) and all(_is_number(v) or v is None for v in frame[name].dropna())
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


def static_base() -> str:
    """STATIC_URL with its prefix. Reports are files kept for months, so they load the stable,
    unhashed static names (served by WhiteNoise as well) rather than the manifest's hashed ones."""
    return PrefixNode.handle_simple("STATIC_URL")


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
    ``methods`` (name -> definition in words), then the sections."""
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
            "static_url": static_base(),
            "provenance": provenance or Provenance(),
            "methods": dict(methods or {}),
            "download_prefix": slugify(title)[:40] or "report",
        },
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


def _table_section(
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


# The analysis report ----------------------------------------------------------------------------

ANALYSIS_COLUMNS = {
    "calibrations": {
        "condition": "Condition",
        "alpha": "alpha",
        "ci": CI_LABEL,
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
    "icc": {
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
    },
    "factor_shares": {
        "condition": "Condition",
        "pairs": "Pairs",
        "trajectory": "Trajectory",
        "aggregate": "Aggregate",
        "other": "Other",
    },
}
SHORT_METHODS = {BOOTSTRAP: "participant bootstrap", CLUSTER_WALD: "cluster Wald (CR1)"}  # the long forms: CSV
ANALYSIS_ESTIMATES = {"effect_sizes": "mean_difference", "icc": "icc", "rm_correlations": "r"}


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


def write_report(
    result: PipelineResult,
    pairs: pd.DataFrame,
    bts: pd.DataFrame,
    out_dir: Path,
    *,
    title: str,
    provenance: Provenance | None = None,
) -> Path:
    """The study analysis: report.html, results.json, one CSV per table and bts_scores.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = report_tables(result)
    for name, frame in tables.items():
        write_csv(frame, out_dir / f"{name}.csv")
    write_csv(bts, out_dir / "bts_scores.csv")
    write_json(results_dict(result), out_dir / "results.json")
    sections = []
    for name, frame in tables.items():
        if name == "table5":
            section = Section(title=HEADINGS[name], tables=regression_tables(frame) if len(frame) else [])
            section.explanation, section.csv = ANALYSIS[name], f"{name}.csv"
        else:
            notes = [ANALYSIS_FAMILIES[name]] if name in ANALYSIS_FAMILIES else []
            if name == "mixed_models" and len(frame):
                notes += mixed_model_notes(frame)
            if name == "participant_level" and len(frame):
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
            section = _table_section(
                HEADINGS[name],
                frame,
                explanation=ANALYSIS[name],
                csv=f"{name}.csv",
                columns=ANALYSIS_COLUMNS.get(name),
                estimate=ANALYSIS_ESTIMATES.get(name),
                notes=notes,
            )
        section.paragraphs = list(NOTES.get(name, []))
        sections.append(section)
    sections += figure_sections(
        report_figures(result, pairs, bts),
        [ANALYSIS["ratings_figure"], ANALYSIS["coefficient_figure"], ANALYSIS["bts_figure"]],
    )
    if provenance is None:
        provenance = Provenance(seeds={"bootstrap": result.seed})
    intro = [result.sample.sentence()] if result.sample else []
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)


# The model audit ----------------------------------------------------------------------------------

EAIF_COLUMNS = {
    "model": "Model",
    "weights": "Weights",
    "alpha": "alpha",
    "eaif": "EaIF",
    "ci": CI_LABEL,
    "violation_share": "Violating pairs (share)",
    "method": "Method",
}
WORST_COLUMNS = {"id_i": "Subject i", "id_j": "Subject j", "D": "D", "d": "d", "violation": "D - d"}


def _exact_without_ci(eaif: pd.DataFrame) -> pd.DataFrame:
    """Exact EaIF rows have no sampling error: their zero-width CI is left blank."""
    exact = eaif["method"] == "exact"
    return eaif.assign(ci_low=eaif["ci_low"].mask(exact), ci_high=eaif["ci_high"].mask(exact))


def write_audit_report(result: AuditResult, out_dir: Path, *, title: str, provenance: Provenance | None = None) -> Path:
    """A model audit: report.html, results.json, eaif.csv, parity.csv, eagf_bins.csv and, with
    feedback, disagreement_notions.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in audit_tables(result).items():
        write_csv(frame, out_dir / f"{name}.csv")
    write_json(audit_summary(result), out_dir / "results.json")
    weights = ", ".join(f"{name} {format_estimate(alpha)}" for name, alpha in result.settings["weights"].items())
    intro = [f"{result.settings['n_subjects']} subjects. Effort weights alpha: {weights}."]
    sections = [
        _table_section(
            "Effort-aware individual fairness (Tables 1 and 7)",
            _exact_without_ci(result.eaif),
            explanation=AUDIT["eaif"],
            csv="eaif.csv",
            columns=EAIF_COLUMNS,
            estimate="eaif",
        ),
        _table_section(
            "Traditional (effort-unaware) demographic parity (Tables 6 and 8)",
            result.parity.rename_axis("model"),
            index=True,
            explanation=AUDIT["parity"],
            csv="parity.csv",
        ),
    ]
    notions = notions_pivot(result)
    if notions is not None:
        sections.append(
            _table_section(
                "Disagreement-derived notions (critic labels from yes/no feedback)",
                notions,
                index=True,
                explanation=AUDIT["notions"],
                csv="disagreement_notions.csv",
            )
        )
    cal = result.disagreement_calibration
    if cal is not None:
        sections.append(
            Section(
                title="Effort weight from disagreement feedback",
                explanation=AUDIT["disagreement_calibration"],
                paragraphs=[
                    f"alpha = {format_estimate(cal.alpha)}, {CI_LABEL} {format_ci(*cal.ci, cal.alpha)}; criterion: "
                    f"{cal.criterion}; {cal.n_subjects} subjects, {cal.n_participants} participants.",
                    *[note for note in [boundary_note(cal.alpha, cal.ci)] if note],
                ],
            )
        )
    sections.append(
        Section(
            title="Worst pairs",
            explanation=AUDIT["worst"],
            tables=[
                table_context(pairs.head(10), caption=f"Worst pairs: {model}", columns=WORST_COLUMNS)
                for model, pairs in result.worst.items()
            ],
        )
    )
    figures = audit_figures(result)
    n_groups = len(figures) - 1 - (cal is not None)
    explanations = [AUDIT["eaif_figure"], *[AUDIT["eagf_figure"]] * n_groups, AUDIT["calibration_curve"]]
    sections += figure_sections(figures, explanations)
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)


# Differential parity and situation testing ---------------------------------------------------------

DP_HEADINGS = {
    "fair_scores_vs_ai": "Participants' fair scores vs the AI's scores",
    "disagreements": "Participants' yes/no labels vs the AI's labels",
}
DP_COLUMNS = {
    "condition": "Condition",
    "comparison": "R0 - R1",
    "attribute": "Attribute",
    "group": "Group (A = 1)",
    "n_group": "n (group)",
    "n_rest": "n (rest)",
    "mean_diff_group": "Mean R0 - R1 (group)",
    "mean_diff_rest": "Mean R0 - R1 (rest)",
    "DPT": "DPT",
    "df": "df",
    "pvalue": "p (one-sided)",
    "DPD": "DPD",
    "effect": "Effect",
}


def _verdicts(frame: pd.DataFrame) -> list[str]:
    """The verdicts (in words) of the rows with evidence of a difference, as notes under the table."""
    if not {"verdict", "direction"} <= set(frame.columns):
        return []
    rows = frame[frame["direction"].notna() & (frame["direction"].astype(str) != "")]
    return [f"{r.condition}, {r.attribute} = {r.group}: {r.verdict}" for r in rows.itertuples(index=False)]


def write_dp_report(
    tables: dict[str, pd.DataFrame],
    figures: list,
    out_dir: Path,
    *,
    title: str,
    definitions: dict[str, str] | None = None,
    provenance: Provenance | None = None,
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
        family = (
            [
                f"p is not adjusted for multiple testing; the family is this table's {len(frame)} tests (Bonferroni: "
                f"compare p with alpha / {len(frame)})."
            ]
            if len(frame) > 1
            else []
        )
        columns = DP_COLUMNS if set(DP_COLUMNS) <= set(frame.columns) else None
        section = _table_section(
            DP_HEADINGS.get(name, _heading(name)),
            frame,
            empty="Nothing to test.",
            explanation=DIFFERENTIAL_PARITY.get(name),
            csv=f"{name}.csv",
            columns=columns,
            estimate="DPT" if "DPT" in frame else None,
            notes=family + (_verdicts(frame) if columns else []),
        )
        if name in definitions:
            section.paragraphs.insert(0, definitions[name])
        sections.append(section)
    sections += figure_sections(figures, [DIFFERENTIAL_PARITY["differences_figure"]] * len(figures))
    return render_report(out_dir, title, sections, intro=[DP_NOTE], provenance=provenance)


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
                summary=f"complainant {case.complainant}: p_c = {format_estimate(case.p_c)}, "
                f"p_t = {format_estimate(case.p_t)}, Δp = {format_estimate(case.delta)}{significant}",
                tables=[
                    table_context(case.row, index=True, caption="Complainant"),
                    table_context(case.control, index=True, caption=f"Control group ({len(case.control)})"),
                    table_context(case.test, index=True, caption=f"Test group ({len(case.test)})"),
                ],
            )
        )
    return Section(title=title, cases=cases, empty="No complainant flagged.", explanation=SITUATION_TESTING["flagged"])


def _counts_sections(result: SituationTestingResult, *, name: str = "", csv: str) -> list[Section]:
    """The counts table and its figure (``name``: the attribute tested, as a heading prefix)."""
    prefix = f"{_heading(name)}: " if name else ""
    title = f"{prefix}complainants flagged per k"
    fig = counts_figure(result)
    fig.update_layout(title=f"{prefix}flags against k, by method" if prefix else "Flags against k, by method")
    return [
        _table_section(title[:1].upper() + title[1:], result.counts, explanation=SITUATION_TESTING["counts"], csv=csv),
        *figure_sections([fig], [SITUATION_TESTING["counts_figure"]]),
    ]


def write_st_report(
    result: SituationTestingResult,
    data: pd.DataFrame,
    out_dir: Path,
    *,
    title: str,
    method: str | None = None,
    k: int | None = None,
    settings: dict | None = None,
    provenance: Provenance | None = None,
) -> Path:
    """Situation testing: report.html, results.json, counts.csv and individuals.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(result.counts, out_dir / "counts.csv")
    write_csv(result.individuals, out_dir / "individuals.csv")
    write_json(st_results(result, settings), out_dir / "results.json")
    method = method or ("CSTwo" if "CSTwo" in result.counts else "ST")
    k = k or int(result.counts["k"].min())
    sections = [
        *_counts_sections(result, csv="counts.csv"),
        flagged_section(result, k=k, method=method, data=data, title=f"Flagged complainants ({method}, k = {k})"),
    ]
    methods = {name: text for name, text in ST_METHODS.items() if name in result.counts}
    return render_report(out_dir, title, sections, provenance=provenance, methods=methods)


def write_law_school_report(
    results: law_school.LawSchoolResults,
    data: pd.DataFrame,
    out_dir: Path,
    *,
    k: Iterable[int],
    provenance: Provenance | None = None,
) -> Path:
    """The CST paper's LSAC experiment (``fairness.law_school.run``): counts per attribute,
    flagged complainants (CST without centres, smallest k), multiple discrimination, and this run's
    counts minus the published Tables 10-13."""
    out_dir.mkdir(parents=True, exist_ok=True)
    k_min = min(k)
    sections: list[Section] = []
    for name in ("gender", "race", "intersectional"):
        res = getattr(results, name)
        write_csv(res.counts, out_dir / f"counts_{name}.csv")
        sections += _counts_sections(res, name=name, csv=f"counts_{name}.csv")
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
    sections.append(
        _table_section(
            "Multiple discrimination (gender and race, each at alpha / 2)",
            results.multiple,
            explanation=SITUATION_TESTING["multiple"],
            csv="counts_multiple.csv",
        )
    )
    sections.append(_published_section(results))
    protected = "; ".join(f"{key} {value}" for key, value in results.n_protected.items())
    if results.mode == "reference":
        source = (
            "Mode: reference mode (the authors' code and their counterfactual files cf_LawSchool_lev3_do*.csv; "
            "z-scored distances; the race distance also counts sex; the intersectional counterfactual from one "
            "merged node female_nonwhite)."
        )
    else:
        equations = "; ".join(f"{node} <- {' + '.join(parents)}" for node, parents in law_school.DAG.items())
        source = (
            f"Mode: paper (the paper's equations). Counterfactuals: linear additive-noise SCM {equations}, fitted by "
            "least squares. The last section compares the counts with the published Tables 10-13."
        )
    intro = [
        f"Protected individuals: {protected}. Decision: admitted when 0.6 UGPA + 0.4 LSAT >= {law_school.MIN_SCORE}. "
        f"{source}"
    ]
    return render_report(
        out_dir,
        "Counterfactual situation testing: LSAC law-school data",
        sections,
        intro=intro,
        provenance=provenance,
        methods=ST_METHODS,
    )


LAW_SCHOOL_DIFFERENCES = [
    "Why the paper mode differs from the published tables (each cause measured by changing it alone):",
    "1. Distance scaling (Eq. 4). The paper mode divides each feature difference by the feature's range in the "
    "factual data. The authors' code z-scores LSAT and UGPA instead, which weighs the two features differently: "
    "this alone makes every ST difference except race's (gender ST at k = 15: 28 here, 77 published). It also "
    "z-scores the counterfactual table with its own mean and standard deviation, which moves each counterfactual "
    "centre part of the way back to its factual position: most CST differences come from this (one scaling for "
    "both tables would give gender CST without centres 196 at k = 15 from the authors' own files; published 78).",
    "2. SCM fit. The authors round LSAT before the least-squares fit, round the counterfactuals to 3 decimals and "
    "clip them to [10, 48] and [0, 4]; the paper mode does none of this (race CF 232 instead of 231, and a few "
    "CST cases).",
    "3. Race distance. The authors' race test also counts sex in the distance (0 if equal, 1 if not); the paper "
    "mode uses LSAT and UGPA only (race ST at k = 15: 28 here, 33 with sex).",
    "4. Intersectional node. The authors merge race and sex into one node female_nonwhite, so their "
    "do(female_nonwhite := 0) moves only non-white women; the paper mode intervenes do(sex := Male, race := "
    "White) on the two-node DAG, which also moves white women and non-white men (CF 131 instead of 113).",
    "Their rounding of the Wald rule to 3 decimals and their control group (the k + 1 nearest protected "
    "individuals less the complainant) change one cell only (race ST significant at k = 250). "
    "law_school_experiment --mode reference reproduces every cell of Tables 10-13.",
]


def _published_section(results: law_school.LawSchoolResults) -> Section:
    """This run's counts minus the paper's Tables 10-13, for the k values both have."""
    section = Section(
        title="Comparison with the published tables (CST paper, Tables 10-13)",
        explanation=SITUATION_TESTING["published"],
    )
    section.paragraphs.append(
        "The published counts are for all 21,790 students of clean_LawSchool.csv, alpha = 0.05 (multiple: alpha / 2 "
        "per attribute), tau = 0; on other data the counts differ anyway."
    )
    names = ("gender", "race", "multiple", "intersectional")
    diffs = {
        name: law_school.differences(results.multiple if name == "multiple" else getattr(results, name).counts, name)
        for name in names
    }
    compared = diffs["multiple"]["k"].tolist()
    if not compared:
        section.paragraphs.append(f"None of the k values of this run is one the paper reports {law_school.K_LIST}.")
    elif not any((diff.drop(columns="k") != 0).any().any() for diff in diffs.values()):
        section.paragraphs.append(
            f"Every count of this run (k = {', '.join(map(str, compared))}) equals the published one."
        )
    else:
        if results.mode == "paper":
            section.paragraphs += LAW_SCHOOL_DIFFERENCES
        for name, diff in diffs.items():
            caption = (
                f"{_heading(name)}: this run minus {law_school.PUBLISHED_TABLES[name][0]} (0 = the published count)"
            )
            section.tables.append(table_context(diff, caption=caption))
    return section


# The analysis of a format 2 study ----------------------------------------------------------------

DESIGN_HEADINGS = {
    "disagreement_rate": "disagreement rate by rater group",
    "notions": "disagreement-derived notions by rater group",
    "ratings": "mean ratings by rater group and subject group",
    "icc": "agreement among raters (ICC)",
    "parity": "differential parity of rater groups and the AI",
    "shares": "share 'treat alike' by rater group",
    "pairs": "share 'treat alike' per pair",
    "agreement": "agreement among raters (Fleiss' kappa)",
    "alpha": "effort weight alpha by rater group",
    "tests": "do the rater groups differ?",
}
_GROUP_MEANS = {
    "subject_attribute": "Subject attribute",
    "subject_group": "Subject group",
    "rater_group": "Rater group",
    "mean": "Mean",
    "ci": CI_LABEL,
    "n_raters": "Raters",
    "n_answers": "Answers",
}
DESIGN_COLUMNS = {
    "disagreement_rate": {**_GROUP_MEANS, "mean": "DR"},
    "notions": {
        "subject_attribute": "Subject attribute",
        "rater_group": "Rater group",
        "statistic": "Notion",
        "value": "Value",
        "lower": "Lower",
        "upper": "Upper",
        "ci": CI_LABEL,
        "n_raters": "Raters",
        "n_answers": "Answers",
    },
    "ratings": _GROUP_MEANS,
    "icc": ANALYSIS_COLUMNS["icc"],
    "parity": {
        "subject_attribute": "Subject attribute",
        "subject_group": "Group (A = 1)",
        "R0": "R0",
        "R1": "R1",
        "gap": "Gap m1 - m0",
        "ci": f"{CI_LABEL} (gap)",
        "DPT": "DPT",
        "df": "df",
        "pvalue": "p (one-sided)",
        "DPD": "DPD",
        "effect": "Effect",
        "n_subjects": "Subjects",
        "note": "Note",
    },
    "shares": {**_GROUP_MEANS, "mean": "Share"},
    "pairs": {"pair": "Pair", "rater_group": "Rater group", "share": "Share", "n_answers": "Answers"},
    "agreement": {"rater_group": "Rater group", "kappa": "Kappa", "n_items": "Pairs", "raters_per_item": "Raters/pair"},
    "alpha": {
        "condition": "Condition",
        "rater_group": "Rater group",
        "alpha": "alpha",
        "ci": CI_LABEL,
        "n_participants": "Participants",
        "n_observations": "Pairs rated",
        "note": "Note",
    },
    "tests": {
        "condition": "Condition",
        "measure": "Statistic",
        "subject_attribute": "Subject attribute",
        "subject_group": "Subject group",
        "difference": "Difference",
        "pvalue": "p (permutation)",
        "n_permutations": "Permutations",
    },
    "honesty": {
        "rater_group": "Rater group",
        "n_participants": "Participants",
        "n_questions": "Questions (mean)",
        "information": "Information",
        "prediction": "Prediction",
        "total": "Total",
    },
}
DESIGN_ESTIMATES = {
    "ratings": "mean",
    "disagreement_rate": "mean",
    "shares": "mean",
    "icc": "icc",
    "parity": "gap",
    "tests": "difference",
}


PAIRS_SHOWN = 30
PARITY_ALPHA = 0.05  # the level of parity_by_rater_group's verdicts


def divisive_pairs(pairs: pd.DataFrame, limit: int = PAIRS_SHOWN) -> pd.DataFrame:
    """The per-pair shares as one row per pair and one column per rater group, the ``limit`` pairs on which
    the rater groups differ most first (the full table is the section's CSV)."""
    wide = pairs.pivot_table(index="pair", columns="rater_group", values="share", aggfunc="first")
    groups = [c for c in wide.columns if c != ALL]
    spread = wide[groups].max(axis=1) - wide[groups].min(axis=1)
    wide = wide[[ALL, *groups]].assign(spread=spread).sort_values("spread", ascending=False)
    return wide.head(limit).reset_index().rename_axis(columns=None)


def honesty_summary(honesty: pd.DataFrame) -> pd.DataFrame:
    """Mean BTS scores of all scored participants and of each rater group."""
    columns = ["n_questions", "information", "prediction", "total"]
    if honesty.empty:
        return pd.DataFrame()
    overall = honesty[columns].mean().to_frame().T.assign(rater_group=ALL, n_participants=len(honesty))
    grouped = honesty.dropna(subset=["rater_group"]).groupby("rater_group")
    per_group = grouped[columns].mean().assign(n_participants=grouped.size()).reset_index()
    return pd.concat([overall, per_group], ignore_index=True)


def _sample_sentence(result) -> str:
    without = result.n_without_group
    sentence = f"{result.n_participants} participants analysed, split by {result.rater_group}"
    if not without:
        return sentence + " (every one answered)."
    return (
        sentence + f" ({without} without an answer to {' or '.join(result.by)}, e.g. a code the import"
        f' could not map to an option: they count in the "{ALL}" rows, in no rater-group row and in no'
        " test between rater groups)."
    )


def design_results(result) -> dict:
    """results.json of a format 2 analysis: settings, rater groups, every block's tables as records, honesty."""
    return {
        "format": 2,
        "by": list(result.by),
        "seed": result.seed,
        "n_resamples": result.n_resamples,
        "n_permutations": result.n_permutations,
        "sample": {
            "participants": result.n_participants,
            "without_group": result.n_without_group,
            "sentence": _sample_sentence(result),
        },
        "rater_groups": result.rater_groups.to_dict("records"),
        "blocks": [
            {
                "block": block.block,
                "task": block.task,
                "notes": block.notes,
                "tables": {name: json.loads(frame.to_json(orient="records")) for name, frame in block.tables.items()},
            }
            for block in result.blocks
        ],
        "honesty": json.loads(honesty_summary(result.honesty).to_json(orient="records")),
        "honesty_min_respondents": result.honesty.attrs.get("min_respondents"),
        "honesty_left_out": result.honesty.attrs.get("left_out", {}),  # question -> respondents
    }


def write_design_report(result, out_dir: Path, *, title: str, provenance: Provenance | None = None) -> Path:
    """A format 2 study's analysis (``runs.design_analysis.DesignAnalysis``): report.html, results.json, one
    CSV per block and table (``<block>_<table>.csv``), rater_groups.csv and honesty.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(design_results(result), out_dir / "results.json")
    write_csv(result.rater_groups, out_dir / "rater_groups.csv")
    sections = [
        _table_section(
            f"Rater groups: {result.rater_group}",
            result.rater_groups,
            explanation=DESIGN["rater_groups"],
            csv="rater_groups.csv",
            columns={"rater_group": "Rater group", "n_participants": "Participants"},
        )
    ]
    for block in result.blocks:
        if not block.tables:
            sections.append(Section(title=f"Block {block.block} ({block.task})", paragraphs=list(block.notes)))
            continue
        for i, (name, frame) in enumerate(block.tables.items()):
            csv = f"{block.block}_{name}.csv"
            write_csv(frame, out_dir / csv)
            shown, columns, notes = frame, DESIGN_COLUMNS[name], []
            if name == "pairs":
                shown = divisive_pairs(frame)
                columns = {c: {"pair": "Pair", "spread": "Spread"}.get(c, c) for c in shown.columns}
                notes = [f"The {len(shown)} pairs on which the rater groups differ most; every pair is in the CSV."]
            elif name == "parity":  # the gap's CI in the table; DPD's CI in the CSV
                shown = frame.rename(columns={"gap_ci_low": "ci_low", "gap_ci_high": "ci_high"})
                notes = [
                    f"{r.subject_attribute} = {r.subject_group}: {r.verdict}"
                    for r in frame.itertuples(index=False)
                    if r.pvalue < PARITY_ALPHA
                ]
            section = _table_section(
                f"Block {block.block} ({block.task}): {DESIGN_HEADINGS[name]}",
                shown,
                explanation=DESIGN[name],
                csv=csv,
                columns=columns,
                estimate=DESIGN_ESTIMATES.get(name),
                notes=notes,
            )
            if i == 0:
                section.paragraphs = list(block.notes)
            sections.append(section)
    write_csv(result.honesty, out_dir / "honesty.csv")
    sections.append(
        _table_section(
            "Honesty (Bayesian Truth Serum) by rater group",
            honesty_summary(result.honesty),
            empty="No question with a BTS follow-up was answered by enough participants to be scored.",
            explanation=DESIGN["honesty"],
            csv="honesty.csv",
            columns=DESIGN_COLUMNS["honesty"],
            estimate="total",
            notes=[note for note in [left_out_sentence(result.honesty)] if note],
        )
    )
    intro = [_sample_sentence(result)]
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)
