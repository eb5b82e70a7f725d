"""The codebook of a study's export: every column of every table the study exports, with its type,
allowed values and meaning. Meanings and types come from ``research.export.COLUMNS`` and
``TASK_MEASURES``; the allowed values that depend on the study (condition and block keys, question
options, scales, measure ranges) from its study files (every version)."""

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from research.answer_rows import FORMAT1_PAGES
from research.export import demo_columns, table_to_csv
from research.tables import COLUMNS, TASK_MEASURES, Column, tables_of
from studies.format2 import questionnaire_columns
from studies.models import Study

CODEBOOK_COLUMNS = ("table", "column", "type", "allowed_values", "meaning", "source")
# Who measured an answer-quality column (``Column.source``), as the codebook writes it.
SOURCE_NAMES = {"server": "server-measured", "client": "client-reported", "": ""}
BINARY = "0, 1"


def _join(values) -> str:
    return ", ".join(str(v) for v in dict.fromkeys(values))


def _conditions(spec: dict) -> list[str]:
    return [c["key"] for c in spec.get("conditions", [{"key": "main"}])]


def _tasks(spec: dict) -> list[dict]:
    return [b for b in spec["blocks"] if b["type"] == "task"]


def _likert_points(specs: list[dict]) -> list[int]:
    return [b["likert"]["points"] for s in specs for b in _tasks(s) if b["task"] == "pair_distance"]


def _format1_parts(spec: dict) -> bool:
    """Whether the answers table names format 1's blocks and tasks for this file: a format 1 file's
    conversion (blocks with ``page_key``, ``tasks.questions.answers_block``)."""
    return any("page_key" in block for block in spec["blocks"])


def _answer_tasks(specs: list[dict]) -> list[str]:
    """Task names in the answers table: format 1's for a converted file, else the block types and tasks."""
    tasks: list[str] = []
    for spec in specs:
        if _format1_parts(spec):
            tasks += [task for _, task in FORMAT1_PAGES.values()]
            continue
        tasks += ["screening"] if spec.get("screening") else []
        for block in spec["blocks"]:
            if block["type"] in ("questionnaire", "attention", "detection"):
                tasks.append(block["type"])
            elif block["type"] == "task":
                tasks.append(block["task"])
    return list(dict.fromkeys(tasks))


def _scale(column: Column, specs: list[dict], task: str) -> str:
    """A measure's values, with the study's Likert points and rating scales filled in."""
    if column.values == "1..points":
        return _join(f"1..{p}" for p in _likert_points(specs))
    if column.values == "scale":
        scales = []
        for block in (b for s in specs for b in _tasks(s) if b["task"] == task):
            scale = block["scale"]
            if scale["type"] == "likert":
                labels = "; ".join(f"{i} = {label}" for i, label in enumerate(scale["labels"], 1))
                scales.append(f"{block['key']}: {labels}")
            else:
                scales.append(f"{block['key']}: {scale['min']}..{scale['max']}")
        return " | ".join(scales)
    return BINARY if column.type == "0/1" else column.values


def _value_ranges(specs: list[dict]) -> str:
    """The answers table's ``value`` per measure."""
    parts = []
    for task in _answer_tasks(specs):
        for measure, column in TASK_MEASURES.get(task, {}).items():
            values = _scale(column, specs, task)
            if column.type != "string" and values:
                parts.append(f"{measure} ({task}): {values}")
    return "; ".join(parts)


def _question_row(block: str, question: dict) -> tuple[str, str, str]:
    """(type, allowed values, meaning) of one questionnaire column."""
    kind = question["type"]
    meaning = question["text"] + ("" if question.get("required", True) else " (optional; blank if unanswered)")
    meaning += f" [block {block}]"
    if kind == "single_choice":
        return "string", " | ".join(question["options"]), meaning
    if kind == "multiple_choice":
        return "string", "options joined by '; ': " + " | ".join(question["options"]), meaning
    if kind == "number":
        low, high = question.get("min", ""), question.get("max", "")
        return ("integer" if question.get("integer") else "number"), f"{low}..{high}", meaning
    if kind == "likert":
        return "integer", "; ".join(f"{i} = {label}" for i, label in enumerate(question["labels"], 1)), meaning
    return "string", f"free text, at most {question.get('max_length', 500)} characters", meaning


def _questions(specs: list[dict]) -> dict[str, tuple[str, dict]]:
    """Each questionnaire column (``questionnaire_columns``) -> (block key, question), in file order."""
    questions = {
        (b["key"], q["key"]): (b["key"], q)
        for s in specs
        for b in s["blocks"]
        if b["type"] == "questionnaire"
        for q in b["questions"]
    }
    return {header: questions[key] for key, header in questionnaire_columns(specs).items()}


def _study_values(specs: list[dict], versions: list[int], slug: str) -> dict[str, str]:
    """Allowed values of columns that every table shares or that the study's files fix."""
    blocks = []
    for spec in specs:
        blocks += [b for b, _ in FORMAT1_PAGES.values()] if _format1_parts(spec) else [b["key"] for b in spec["blocks"]]
    distance_blocks = [b for s in specs for b in _tasks(s) if b["task"] == "pair_distance"]
    relations = [p.get("relation", "") for b in distance_blocks for p in b["pairs"]]
    measures = [m for task in _answer_tasks(specs) for m in TASK_MEASURES.get(task, {})]
    return {
        "study": slug,
        "study_version": _join(versions),
        "condition": _join(c for s in specs for c in _conditions(s)),
        "block": _join(blocks),
        "task": _join(_answer_tasks(specs)),
        "measure": _join(measures),
        "value": _value_ranges(specs),
        "relation": _join(r for r in relations if r),
        "d_traj": _join(f"1..{p}" for p in _likert_points(specs)),
        "d_aggr": _join(f"1..{p}" for p in _likert_points(specs)),
        "d_overall": _join(f"1..{p}" for p in _likert_points(specs)),
    }


def codebook_of(slug: str) -> pd.DataFrame:
    """One row per column of every table the study ``slug`` exports (``CODEBOOK_COLUMNS``)."""
    versions = list(Study.objects.filter(slug=slug).order_by("version").values_list("version", "spec"))
    if not versions:
        raise ValueError(f"no study with slug {slug!r}")
    specs = [spec for _, spec in versions]
    shared = _study_values(specs, [v for v, _ in versions], slug)
    rows = []
    for table in tables_of(specs):
        for name, column in COLUMNS[table].items():
            if name == "demo_*":
                for demo, values in demo_columns(specs).items():
                    meaning = f"The subject's {demo[5:]} (from the study file's subjects)."
                    rows.append((table, demo, "string", _join(values), meaning, ""))
            elif name == "<question>":
                for header, (block, question) in _questions(specs).items():
                    rows.append((table, header, *_question_row(block, question), ""))
            else:
                allowed = shared.get(name) or (BINARY if column.type == "0/1" else column.values)
                rows.append((table, name, column.type, allowed, column.meaning, SOURCE_NAMES[column.source]))
    return pd.DataFrame(rows, columns=list(CODEBOOK_COLUMNS))


def _markdown_cell(value: str) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def codebook_markdown(slug: str, codebook: pd.DataFrame) -> str:
    """The codebook as Markdown: one section and table per export table."""
    lines = [f"# Codebook: {slug}", ""]
    for table, rows in codebook.groupby("table", sort=False):
        lines += [f"## {table}", "", "| column | type | allowed values | meaning | source |", "|---|---|---|---|---|"]
        for row in rows.itertuples():
            cells = (row.column, row.type, row.allowed_values, row.meaning, row.source)
            lines.append("| " + " | ".join(_markdown_cell(c) for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def write_codebook(slug: str, out_dir: Path) -> list[Path]:
    """Write ``codebook.csv`` and ``codebook.md`` into ``out_dir``; returns the paths."""
    codebook = codebook_of(slug)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "codebook.csv", out_dir / "codebook.md"
    csv_path.write_text(table_to_csv(codebook), encoding="utf-8")
    md_path.write_text(codebook_markdown(slug, codebook), encoding="utf-8")
    return [csv_path, md_path]


@dataclass(frozen=True)
class TableLabels:
    """What a typed or labelled file (Parquet, SPSS, Stata) needs of one table's codebook: each
    column's ``types`` and ``meanings`` (the variable labels), ``value_labels`` (code -> label: 0/1
    columns, Likert questions) and ``codes`` (text -> code: single-choice questions, stored in SPSS /
    Stata as labelled numbers, options numbered from 1 in the file's order)."""

    types: dict[str, str]
    meanings: dict[str, str]
    value_labels: dict[str, dict[int, str]] = field(default_factory=dict)
    codes: dict[str, dict[str, int]] = field(default_factory=dict)


def export_labels(slug: str) -> dict[str, TableLabels]:
    """Per exported table of the study ``slug``: its columns' types, meanings and value labels, from
    the codebook (``codebook_of``) and the study files' questions."""
    codebook = codebook_of(slug)
    specs = list(Study.objects.filter(slug=slug).order_by("version").values_list("spec", flat=True))
    questions = _questions(specs)
    labels = {}
    for table, rows in codebook.groupby("table", sort=False):
        value_labels: dict[str, dict[int, str]] = {}
        codes: dict[str, dict[str, int]] = {}
        for name, kind in zip(rows["column"], rows["type"], strict=True):
            documented = COLUMNS[table].get(name)
            if kind == "0/1" and documented is not None:
                value_labels[name] = dict(enumerate(documented.labels))
            elif table == "questionnaire" and name in questions:
                question = questions[name][1]
                if question["type"] == "likert":
                    value_labels[name] = dict(enumerate(question["labels"], 1))
                elif question["type"] == "single_choice":
                    value_labels[name] = dict(enumerate(question["options"], 1))
                    codes[name] = {option: code for code, option in value_labels[name].items()}
        labels[table] = TableLabels(
            types=dict(zip(rows["column"], rows["type"], strict=True)),
            meanings=dict(zip(rows["column"], rows["meaning"], strict=True)),
            value_labels=value_labels,
            codes=codes,
        )
    return labels
