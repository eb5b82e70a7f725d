"""The analysis report of a format 2 study: every task block per rater group (the tables its task
type names, ``BlockTask.report_tables``), rater groups and honesty."""

import json
from pathlib import Path

import pandas as pd

from analysis.bts import left_out_sentence
from core.report_texts import ReportTable
from fairness.rater_groups import ALL
from fairness.relative_reports import rater_group_bars
from runs.provenance import Provenance
from runs.report_explanations import (
    DESIGN,
)
from runs.reports.base import (
    Section,
    figure_context,
    render_report,
    table_section,
    write_csv,
    write_json,
)
from tasks import BLOCK_TASKS

# The tables of a format 2 analysis: those every block may have (the rater-group tests), the study's
# rater groups and honesty, and each task type's own (``BlockTask.report_tables``, from the registry).
GENERIC_TABLES = {
    "tests": ReportTable(
        "do the rater groups differ?",
        {
            "condition": "Condition",
            "measure": "Statistic",
            "subject_attribute": "Subject attribute",
            "subject_group": "Subject group",
            "difference": "Difference",
            "pvalue": "p (permutation)",
            "n_permutations": "Permutations",
        },
        DESIGN["tests"],
        estimate="difference",
    ),
}
DESIGN_TABLES = {**GENERIC_TABLES, **{n: t for task in BLOCK_TASKS.values() for n, t in task.report_tables.items()}}
HONESTY_COLUMNS = {
    "rater_group": "Rater group",
    "n_participants": "Participants",
    "n_questions": "Questions (mean)",
    "information": "Information",
    "prediction": "Prediction",
    "total": "Total",
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
    """A format 2 study's analysis (``fairness.task_blocks.DesignAnalysis``): report.html, results.json, one
    CSV per block and table (``<block>_<table>.csv``), rater_groups.csv and honesty.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(design_results(result), out_dir / "results.json")
    write_csv(result.rater_groups, out_dir / "rater_groups.csv")
    sections = [
        table_section(
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
            texts = DESIGN_TABLES[name]
            shown, columns, notes = frame, texts.columns, []
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
            elif name == "agree_error_rates":  # the accuracy's CI in the table; FPR's and FNR's in the CSV
                shown = frame.rename(columns={"accuracy_low": "ci_low", "accuracy_high": "ci_high"})
            section = table_section(
                f"Block {block.block} ({block.task}): {texts.heading}",
                shown,
                explanation=texts.explanation,
                csv=csv,
                columns=columns,
                estimate=texts.estimate,
                notes=notes,
            )
            if texts.figure is not None and not frame.empty:
                x, y = texts.figure
                title = f"Block {block.block}: {texts.heading}"
                section.figure = figure_context(rater_group_bars(frame, x=x, y=y, title=title))
            if i == 0:
                section.paragraphs = list(block.notes)
            sections.append(section)
    write_csv(result.honesty, out_dir / "honesty.csv")
    sections.append(
        table_section(
            "Honesty (Bayesian Truth Serum) by rater group",
            honesty_summary(result.honesty),
            empty="No question with a BTS follow-up was answered by enough participants to be scored.",
            explanation=DESIGN["honesty"],
            csv="honesty.csv",
            columns=HONESTY_COLUMNS,
            estimate="total",
            notes=[note for note in [left_out_sentence(result.honesty)] if note],
        )
    )
    intro = [_sample_sentence(result)]
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)
