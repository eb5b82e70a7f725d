"""The analysis report of a format 2 study: every task block per rater group (the tables its task
type names, ``BlockTask.report_tables``), rater groups and honesty."""

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.bts import left_out_sentence
from analysis.pipeline import PipelineResult
from analysis.report import results_dict
from analysis.sensitivity import Sensitivity, compare_estimates, sensitivity_of
from core.report_texts import ReportTable
from fairness.rater_group_parity import RULE_JACKKNIFE, RULE_PERMUTATION
from fairness.rater_groups import ALL, TOO_FEW
from fairness.relative_reports import rater_group_bars
from runs.provenance import Provenance
from runs.report_explanations import (
    DESIGN,
)
from runs.reports.base import (
    Section,
    add_sensitivity,
    figure_context,
    render_report,
    table_section,
    with_adjusted,
    write_csv,
    write_json,
)
from runs.reports.deviations import add_deviations
from runs.reports.effort import effort_sections
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
            "difference": "Difference (max - min)",
            "pvalue": "p (max - min)",
            "weighted": "W (size-weighted)",
            "weighted_pvalue": "p (W)",
            "n_permutations": "Permutations",
        },
        DESIGN["tests"],
        estimate="difference",
        procedures=("block family, Holm",),
    ),
    "pairwise": ReportTable(
        "pairs of rater groups (Holm-adjusted)",
        {
            "condition": "Condition",
            "measure": "Statistic",
            "subject_attribute": "Subject attribute",
            "subject_group": "Subject group",
            "group_a": "Group a",
            "group_b": "Group b",
            "difference": "b - a",
            "pvalue": "p",
            "pvalue_holm": "p (Holm)",
        },
        DESIGN["pairwise"],
        estimate="difference",
        procedures=("pairwise family, Holm",),
    ),
    "subject_groups": ReportTable(
        "subject groups compared",
        {
            "subject_attribute": "Subject attribute",
            "subject_group": "Subject group",
            "lower": "Bin from",
            "upper": "Bin below",
            "n_subjects": "Subjects",
            "status": "Status",
        },
        DESIGN["subject_groups"],
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
        sentence += " (every one answered)."
    else:
        sentence += (
            f" ({without} without an answer to {' or '.join(result.by)}, e.g. a code the import"
            f' could not map to an option: they count in the "{ALL}" rows, in no rater-group row and in no'
            " test between rater groups)."
        )
    few = result.rater_groups[result.rater_groups["status"] == TOO_FEW]
    if len(few):
        who = "1 participant is" if result.n_too_few == 1 else f"{result.n_too_few} participants are"
        sentence += (
            f" {who} in rater groups with fewer than {result.options['min_group_size']}"
            f' participants, too few to compare ({", ".join(few["rater_group"])}): they count in the "{ALL}"'
            " rows only."
        )
    return sentence


EFFORT_STORED = (
    "The first sections (calibration, headline tests, Tables 2-5, factors and their figures) are the effort "
    "analysis of the pair_distance blocks rating trajectory, aggregate and overall, headed, written and named "
    "as in a format 1 report; its calibration alpha of each condition is stored as a Likert Calibration, which "
    "audits (audit_models) and relative_fairness use."
)


@dataclass(frozen=True)
class EffortOfDesign:
    """The effort pipeline's result on a format 2 study's pairs table, or (``result`` None) why there is none;
    ``sensitivity``: its alphas without the participants flagged for answer quality; ``bts``: the participants'
    honesty scores over the pairs' overall ratings (``analysis.bts.participant_bts``); ``applies``: False for a
    study without pair_distance blocks, whose report then says nothing of effort (results.json keeps the note)."""

    result: PipelineResult | None
    note: str
    sensitivity: Sensitivity | None = None
    bts: pd.DataFrame = field(default_factory=pd.DataFrame)
    applies: bool = True


def sample_sentences(result) -> list[str]:
    """Who was analysed (the participants dropped by reason, as ``analysis.sample.SampleSelection`` says) and how
    they split into rater groups."""
    return [result.sample.sentence(), _sample_sentence(result)] if result.sample else [_sample_sentence(result)]


def design_results(result) -> dict:
    """results.json of a format 2 analysis: settings, the sample (``included``, ``dropped`` by reason,
    ``include_incomplete``, rater groups), every block's tables as records, honesty; ``calibrations`` (none
    until the effort analysis adds its own: :func:`write_design_report`)."""
    return {
        "format": 2,
        "by": list(result.by),
        "seed": result.seed,
        "n_resamples": result.n_resamples,
        "n_permutations": result.n_permutations,
        "group_options": result.options,
        "parity_rules": {"between rater groups": RULE_PERMUTATION, "against the AI": RULE_JACKKNIFE},
        "sample": {
            **(result.sample.as_dict() if result.sample else {}),
            "participants": result.n_participants,
            "without_group": result.n_without_group,
            "sentence": " ".join(sample_sentences(result)),
        },
        "calibrations": [],
        "multiple_testing": result.multiple_testing,
        "warnings": list(result.warnings),
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


def design_sensitivity(all_result, without) -> Sensitivity:
    """Every headline table's estimates (``ReportTable.headline``) of the analysis with all participants
    (``all_result``) and without the flagged ones (``without``; None when none is left)."""
    other = {} if without is None else {(b.block, n): f for b in without.blocks for n, f in b.tables.items()}
    pieces = [
        compare_estimates(
            frame,
            other.get((block.block, name), frame.iloc[0:0]),
            estimate=column,
            prefix=f"{block.block} {name}",
        )
        for block in all_result.blocks
        for name, frame in block.tables.items()
        if (column := DESIGN_TABLES[name].headline) is not None
    ]
    return sensitivity_of(pieces, all_result.n_participants - (without.n_participants if without else 0))


def write_design_report(
    result,
    out_dir: Path,
    *,
    title: str,
    provenance: Provenance | None = None,
    sensitivity: Sensitivity | None = None,
    effort: EffortOfDesign | None = None,
    deviations: dict | None = None,
) -> Path:
    """A format 2 study's analysis (``fairness.task_blocks.DesignAnalysis``): report.html, results.json, one
    CSV per block and table (``<block>_<table>.csv``), rater_groups.csv and honesty.csv; with
    ``sensitivity`` also its section and sensitivity.csv; with ``effort`` the effort analysis of the
    ``pair_distance`` blocks, first, under the names of a format 1 report (which the dashboard links): its
    sections and figures, ``<table>.csv`` (``calibrations.csv``, ``table2.csv``, ...) and ``bts_scores.csv``,
    in results.json its ``calibrations``, ``multiple_testing``, ``exclusions`` and tables at the top level and
    ``effort.sample`` (the participants with rated pairs); or why there is none (``effort.note``). A
    preregistered study's report states its ``deviations`` from the plan first (``results.json``'s
    ``deviations``: ``runs.analysis_plan.registered_deviations``; null when the study is not registered)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(result.rater_groups, out_dir / "rater_groups.csv")
    sections = [
        table_section(
            f"Rater groups: {result.rater_group}",
            result.rater_groups,
            explanation=DESIGN["rater_groups"],
            csv="rater_groups.csv",
            columns={"rater_group": "Rater group", "n_participants": "Participants", "status": "Status"},
        )
    ]
    without = [block for block in result.blocks if not block.tables]
    for block in (block for block in result.blocks if block.tables):
        for i, (name, frame) in enumerate(block.tables.items()):
            csv = f"{block.block}_{name}.csv"
            write_csv(frame, out_dir / csv)
            texts = DESIGN_TABLES[name]
            view = BLOCK_TASKS[block.task].present(name, frame)
            section = table_section(
                f"Block {block.block} ({block.task}): {texts.heading}",
                view.frame,
                explanation=texts.explanation,
                csv=csv,
                columns=with_adjusted(view.columns or texts.columns, view.frame, result.multiple_testing),
                estimate=texts.estimate,
                notes=list(view.notes),
            )
            if texts.figure is not None and not frame.empty:
                x, y = texts.figure
                heading = f"Block {block.block}: {texts.heading}"  # not ``title``: that is the report's
                section.figure = figure_context(
                    rater_group_bars(frame, x=x, y=y, title=heading, labels=texts.columns, facets=texts.figure_facets)
                )
            if i == 0:
                section.paragraphs = list(block.notes)
            sections.append(section)
    if without:  # every block appears: here with its reason when it has no table
        sections.append(
            Section(
                title="Blocks without a table",
                paragraphs=[f"Block {b.block} ({b.task}): {' '.join(b.notes)}" for b in without],
                explanation=DESIGN["without_tables"],
            )
        )
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
    results, intro = design_results(result), [*sample_sentences(result), *result.warnings]
    if effort is not None and effort.result:  # first, under format 1's names (results.json keys, CSV files)
        effort_results = results_dict(effort.result)
        results["effort"] = {"sample": effort_results.pop("sample")}  # who has rated pairs
        design_families = results["multiple_testing"]
        results |= {key: value for key, value in effort_results.items() if key != "seed"}
        # the task blocks' families, and the effort analysis's headline family (always Holm) under "effort"
        results["multiple_testing"] = {**design_families, "effort": effort_results["multiple_testing"]}
        intro.append(EFFORT_STORED)
        sections = effort_sections(effort.result, effort.bts, out_dir) + sections
    elif effort is not None:
        results["effort"] = {"note": effort.note}
        if effort.applies:
            intro.append(effort.note)
    add_sensitivity(sensitivity, out_dir, results=results, sections=sections, intro=intro)
    add_deviations(deviations, results=results, sections=sections, intro=intro)
    write_json(results, out_dir / "results.json")
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)
