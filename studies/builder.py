"""Build a complete format 2 study file from a CSV of decision subjects (issue 10, section 2).

:func:`build_study` reads the CSV with :func:`core.uploads.read_csv_upload` (the upload limits:
bytes, rows, columns, duplicate or empty header names, empty file, not UTF-8) and is otherwise pure.
Every CSV row becomes one subject of the pool ``subjects``: ``id`` from ``id_column``, ``groups`` from
``group_columns``, the model ``ai`` from ``label_column`` / ``score_column``, the true outcome
(0/1, never shown to participants, never a feature) from ``outcome_column`` (the subject's ``outcome``;
the agree analysis's error rates are computed against it), and its features from ``feature_columns``.

Features are what participants see: the estimators (utility model, learned metric) weigh them and the
pairs and triplets are drawn by distance over them, so the pages show every feature and no other column
becomes one. ``feature_columns`` names them; without it they are the profile's columns that are not groups,
or, without a profile, every column not named as id, group, AI output or outcome (all shown in the table).
Columns named nowhere are kept hidden: not in the study file at all.
The file it returns has, in this order: consent, an ``instructions`` block, the stakeholder
questionnaire ``about_you`` (role, age range, gender, optional education), the attention check
``attention_1``, the task block, the attention check ``attention_2``, and the completion code.

Templates (the task block):

* ``disagreement``: an ``agree`` block ``agree`` ("The AI predicts that this person is high risk.
  Do you agree?") with the confidence question and the Bayesian Truth Serum follow-up. The AI's label
  is the label column; with only a score column, label = 1 when score >= 0.5.
* ``rating``: a ``rate`` block ``ratings``: "How risky do you think this person is?" on a 7-point
  Likert scale from "Not at all risky" to "Extremely risky" (answers 5-7 count as "risky" for BTS, if
  the researcher turns BTS on). A Likert scale, not 0-100, because people answer it faster and more
  consistently than a slider and its points can be named. The AI's score/label is kept (not shown)
  so that raters can be compared with the AI.
* ``comparable``: a ``pair_comparable`` block ``pairs`` ("Should these two people be treated
  alike?", with "How sure are you?") over pairs drawn by :func:`tasks.drawing.draw_pairs`: each subject
  with its nearest and with one far neighbour on the features.
* ``choice``: a ``choose`` block ``choices`` ("Which of these two persons should {decision}?", with "How
  sure are you?"; with the AI's score also the BTS follow-up) over pairs drawn by
  :func:`tasks.drawing.draw_pairs`.
* ``triplet``: a ``triplet`` block ``triplets`` ("Who is more similar to Person A: Person B or Person C?",
  with "How sure are you?") over triplets drawn by :func:`tasks.drawing.draw_triplets`.
* ``rank``: a ``rank`` block ``rankings`` ("Rank these persons by who should {decision}.") over rankings of 4
  subjects drawn by :func:`tasks.rank.draw_rankings`.
* ``feature_fairness``: a ``feature_fairness`` block ``features`` over the feature columns ("Is it fair to
  use {feature} to decide {decision}?", the eight latent properties, the BTS follow-up).

Each template is its task type's builder (``BlockTask.builder_block`` and the ``builder_*`` attributes):
``mix`` names the relations drawn per subject (the task's ``builder_relations``, default ``builder_mix``);
``decision`` the decision of the choice and feature_fairness questions (default ``builder_decision``).

``per_participant`` = M gives each participant M items (least-judged first, balanced);
``stratify_by`` = a column gives M / k items from each of its k values. Without M every participant
judges every item. Every bad input raises :class:`StudyBuildError` with all the problems found, each
naming the column, option or rows concerned.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from django.utils.translation import gettext

from core import strict_json
from studies.format2 import item_strata, placeholder_problems, placeholders
from studies.pools import subjects_from_frame
from studies.study_file import MAX_LIST_ITEMS, SLUG_PATTERN, InvalidStudyFile
from tasks import BLOCK_TASKS, block_task
from tasks.base import BuilderInput, BuilderProblem
from tasks.item_shapes import SUBJECTS

# build_study --template name -> the task type whose block it builds (``BlockTask.builder_template``)
BUILDERS = {task.builder_template: task for task in BLOCK_TASKS.values() if task.builder_template}
TEMPLATES = tuple(BUILDERS)
POOL = "subjects"
MODEL = "ai"
NOUN = "person"

ROLES = ("Member of the public", "Works in criminal justice", "Affected person or family", "Other")
AGE_RANGES = ("18-24", "25-34", "35-44", "45-54", "55-64", "65 or older", "Prefer not to say")
GENDERS = ("Woman", "Man", "Non-binary", "Another gender", "Prefer not to say")
EDUCATION = (
    "No formal qualification",
    "Secondary school",
    "Vocational training",
    "Undergraduate degree",
    "Postgraduate degree",
    "Prefer not to say",
)


# Built inside the web request only when the work is bounded (larger inputs: a background job, docs
# "Build a study from a dataset"): a file of at most research.study_upload.BUILD_INLINE_MAX_BYTES is parsed,
# and then built inline when it has at most INLINE_MAX_ROWS rows and INLINE_MAX_CELLS cells (rows x
# columns). The builder's work is O(cells) for the subjects and the study file's validation, and
# O(rows x cells) <= 500,000 column comparisons for the comparable template's Gower distances
# (bench/uploads.py --scenario study-files prints the time of the worst inline case). The bundled
# synthetic_defendants.csv (200 rows x 11 columns) is built inline.
INLINE_MAX_ROWS = 200
INLINE_MAX_CELLS = 2_500


def builds_inline(frame: pd.DataFrame) -> bool:
    """Whether a table this size is built inside a web request (see INLINE_MAX_ROWS, INLINE_MAX_CELLS)."""
    return len(frame) <= INLINE_MAX_ROWS and frame.size <= INLINE_MAX_CELLS


class StudyBuildError(ValueError):
    """The CSV or the options cannot make a study; ``problems`` lists each one, naming its column or option."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class BuildOptions:
    """The options of ``build_study`` (as the command names them)."""

    template: str
    id_column: str
    label_column: str | None = None
    score_column: str | None = None
    group_columns: tuple[str, ...] = ()
    outcome_column: str | None = None
    model_label_columns: tuple[str, ...] = ()  # other models' 0/1 labels, each model named by its column
    feature_columns: tuple[str, ...] | None = None  # None: the default (module docstring)
    profile: str | None = None
    per_participant: int | None = None
    stratify_by: str | None = None
    slug: str | None = None
    title: str | None = None
    completion_code: str | None = None
    decision: str | None = None
    mix: tuple[str, ...] = ()
    allow_tie: bool = False


def build_study(
    template: str,
    subjects_csv,
    id_column: str,
    *,
    label_column: str | None = None,
    score_column: str | None = None,
    group_columns: list[str] | tuple[str, ...] = (),
    outcome_column: str | None = None,
    model_label_columns: list[str] | tuple[str, ...] = (),
    feature_columns: list[str] | tuple[str, ...] | None = None,
    profile: str | None = None,
    per_participant: int | None = None,
    stratify_by: str | None = None,
    slug: str | None = None,
    title: str | None = None,
    completion_code: str | None = None,
    decision: str | None = None,
    mix: list[str] | tuple[str, ...] = (),
    allow_tie: bool = False,
    name: str | None = None,
) -> dict:
    """The study file (a dict, not yet validated) built from ``subjects_csv`` (a path, bytes or an uploaded
    file; ``name`` names it in messages, default the file's name). Raises :class:`StudyBuildError` or
    :class:`core.uploads.UploadError`."""
    from core.uploads import read_csv_upload  # Django settings (the limits) only when reading

    if name is None:
        name = Path(str(subjects_csv)).name if isinstance(subjects_csv, str | Path) else "subjects CSV"
    frame = read_csv_upload(subjects_csv, name=name, text_columns=(id_column,))
    options = BuildOptions(
        template=template,
        id_column=id_column,
        label_column=label_column,
        score_column=score_column,
        group_columns=tuple(group_columns or ()),
        outcome_column=outcome_column,
        model_label_columns=tuple(model_label_columns or ()),
        feature_columns=None if feature_columns is None else tuple(feature_columns),
        profile=profile,
        per_participant=per_participant,
        stratify_by=stratify_by,
        slug=slug,
        title=title,
        completion_code=completion_code,
        decision=decision,
        mix=tuple(mix or ()),
        allow_tie=allow_tie,
    )
    return build_study_from_frame(frame, options, name=name)


def build_study_from_frame(frame: pd.DataFrame, options: BuildOptions, *, name: str) -> dict:
    """The study file for a table already read (see :func:`build_study`)."""
    subjects = _subjects(frame, options, name=name)
    pool: dict = {"key": POOL, "subject_noun": NOUN, "subjects": subjects, "display": _display(frame, options)}
    if options.outcome_column:
        pool["outcome_column"] = options.outcome_column
    block = _task_block(frame, subjects, options)
    items = block_task(block).item_count(block, pool)
    if options.per_participant is not None:
        block["assignment"] = {"per_participant": options.per_participant}
        if options.stratify_by:
            block["assignment"]["stratify_by"] = options.stratify_by
        _check_assignment(block, pool, options, options.per_participant, items)
    shown = options.per_participant or items
    minutes = math.ceil(3 + shown * BUILDERS[options.template].builder_seconds / 60)
    default_slug = _slugify(f"{Path(name).stem}-{options.template}")
    return {
        "format": 2,
        "slug": options.slug or default_slug,
        "title": options.title or f"{options.template.capitalize()} study: {Path(name).stem.replace('_', ' ')}",
        "description": (
            f"Built by build_study (template {options.template}) from {name}: {len(subjects)} subjects; "
            f"each participant sees {shown} item{'s' if shown != 1 else ''}."
        ),
        "consent": {
            "text": (
                "This is a research study about how people judge decisions made with the help of AI.\n\n"
                f"You will read short descriptions of people and answer questions about them. It takes about "
                f"{minutes} minutes. Your answers are stored under a pseudonym and used for research only. You may "
                "stop at any time.\n\nDo you agree to take part?"
            )
        },
        "completion": {"code": options.completion_code or _default_code(subjects, options)},
        "attention": {"exclude_if_failed": 1, "return_if_failed": 2},
        "seed": 0,
        "pools": [pool],
        "blocks": [
            {
                "key": "instructions",
                "type": "instructions",
                "text": gettext(BUILDERS[options.template].builder_instructions),
            },
            stakeholder_questionnaire(),
            {
                "key": "attention_1",
                "type": "attention",
                "question": 'This question checks that you are reading carefully. Please choose "Somewhat".',
                "options": ["Not at all", "A little", "Somewhat", "Very much"],
                "correct": "Somewhat",
            },
            block,
            {
                "key": "attention_2",
                "type": "attention",
                "question": 'To show that you are still reading carefully, please choose "Blue".',
                "options": ["Red", "Green", "Blue", "Yellow"],
                "correct": "Blue",
            },
        ],
    }


def stakeholder_questionnaire() -> dict:
    """The default questionnaire: stakeholder role, age range, gender (required) and education (optional)."""
    return {
        "key": "about_you",
        "type": "questionnaire",
        "title": "About you",
        "intro": "These questions let us compare the judgements of different groups of people.",
        "questions": [
            {
                "key": "role",
                "type": "single_choice",
                "text": "Which of these describes you best?",
                "options": list(ROLES),
            },
            {"key": "age", "type": "single_choice", "text": "How old are you?", "options": list(AGE_RANGES)},
            {"key": "gender", "type": "single_choice", "text": "What is your gender?", "options": list(GENDERS)},
            {
                "key": "education",
                "type": "single_choice",
                "text": "What is your highest level of education?",
                "options": list(EDUCATION),
                "required": False,
            },
        ],
    }


# ---------------------------------------------------------------------------------------------------------
# Checks and subjects


def profile_columns(profile: str) -> list[str]:
    """The column names a profile text uses (``{column}``; ``{{`` and ``}}`` are literal braces);
    StudyBuildError for malformed braces or a placeholder with a format spec, conversion or index
    (:func:`studies.format2.placeholder_problems`, the study files' rule)."""
    problems = placeholder_problems(profile)
    if problems:
        raise StudyBuildError([f"--profile: {rule}" for rule in problems])
    return list(dict.fromkeys(placeholders(profile)))


def _not_features(options: BuildOptions) -> dict[str, str]:
    """The columns that are never features, with the option that names each."""
    roles = {c: "--group-columns" for c in options.group_columns}
    roles |= {c: "--model-label-columns" for c in options.model_label_columns}
    for option, column in (
        ("--outcome-column", options.outcome_column),
        ("--score-column", options.score_column),
        ("--label-column", options.label_column),
        ("--id-column", options.id_column),
    ):
        if column:
            roles[column] = option
    return roles


def chosen_features(frame: pd.DataFrame, options: BuildOptions) -> list[str]:
    """The feature columns: ``feature_columns``, else the profile's columns that are not groups or the id,
    else every column not named as id, group, AI output or outcome (module docstring)."""
    if options.feature_columns is not None:
        return list(options.feature_columns)
    others = _not_features(options)
    if options.profile is not None:
        return [c for c in profile_columns(options.profile) if c not in others and c != "id"]
    return [str(c) for c in frame.columns if c not in others]


def _check_columns(frame: pd.DataFrame, options: BuildOptions) -> list[str]:
    """Every named column exists, features are shown and are not the id, a group, the AI's or the outcome,
    a profile names only features and groups."""
    problems = []
    if options.template not in TEMPLATES:
        problems.append(f"--template: {options.template!r} is not a template; choose one of {', '.join(TEMPLATES)}")
    columns = [str(c) for c in frame.columns]
    available = ", ".join(columns)
    named = [
        ("--id-column", options.id_column),
        ("--label-column", options.label_column),
        ("--score-column", options.score_column),
        *(("--group-columns", c) for c in options.group_columns),
        ("--outcome-column", options.outcome_column),
        *(("--model-label-columns", c) for c in options.model_label_columns),
        *(("--feature-columns", c) for c in options.feature_columns or ()),
        ("--stratify-by", options.stratify_by),
    ]
    for option, column in named:
        if column and column not in columns:
            problems.append(f"{option}: column {column!r} is not in the CSV; its columns are: {available}")
    others = _not_features(options)
    for column in options.feature_columns or ():
        if column in others:
            problems.append(
                f"--feature-columns: {column!r} is named by {others[column]}; a feature is a column participants see "
                "and the estimators weigh, never the id, a group, the AI's output or the outcome"
            )
    if options.feature_columns is not None and len(set(options.feature_columns)) < len(options.feature_columns):
        problems.append("--feature-columns: a column is named twice")
    if options.profile is not None:
        shown = profile_columns(options.profile)
        model_columns = {options.label_column, options.score_column, *options.model_label_columns} - {None}
        features = set(options.feature_columns or ())
        for column in shown:
            if column == options.outcome_column:
                problems.append(f"--profile: {{{column}}} is the outcome column; participants must not see the outcome")
            elif column in model_columns:
                problems.append(
                    f"--profile: {{{column}}} is the model's column; a profile shows the id, features and groups only"
                )
            elif column not in columns and column != "id":
                problems.append(
                    f"--profile: placeholder {{{column}}} is not a column of the CSV; its columns are: {available}"
                )
            elif options.feature_columns is not None and column not in {"id", *features, *options.group_columns}:
                problems.append(
                    f"--profile: {{{column}}} is neither a feature nor a group column (it is kept hidden): add it to "
                    "--feature-columns or --group-columns, or take it out of the profile"
                )
        for column in options.feature_columns or ():
            if column not in shown and column in columns and column not in others:
                problems.append(
                    f"--feature-columns: {column!r} is not in --profile, so participants would not see it: add "
                    f"{{{column}}} to the profile or leave it out of the features"
                )
    if options.stratify_by and options.stratify_by in (
        options.id_column,
        options.label_column,
        options.score_column,
        *options.model_label_columns,
    ):
        problems.append(
            f"--stratify-by: {options.stratify_by!r} is the id or the model's column; choose a group or feature column"
        )
    elif (
        options.stratify_by
        and options.stratify_by in columns
        and not problems
        and options.stratify_by not in {*options.group_columns, *chosen_features(frame, options)}
    ):
        problems.append(
            f"--stratify-by: {options.stratify_by!r} is kept hidden (and the outcome is never shown); choose a "
            "group or feature column"
        )
    if options.stratify_by and options.per_participant is None:
        problems.append("--stratify-by needs --per-participant (the number of items each participant sees)")
    task = BUILDERS.get(options.template)
    if task is not None and task.item_shape is not SUBJECTS and options.stratify_by:
        problems.append(
            f"--stratify-by is not available for the {options.template} template: its items are "
            f"{task.item_shape.plural}, not subjects"
        )
    with_mix = [name for name, t in BUILDERS.items() if t.builder_relations]
    if options.mix and (task is None or not task.builder_relations):
        problems.append(f"--mix is for the templates that draw items from the pool: {', '.join(with_mix)}")
    elif task is not None and (unknown := [r for r in options.mix if r not in task.builder_relations]):
        problems.append(
            f"--mix: {unknown[0]!r} is not a relation of the {options.template} template; "
            f"choose from {', '.join(task.builder_relations)}"
        )
    elif len(set(options.mix)) < len(options.mix):
        problems.append("--mix: a relation is named twice")
    with_decision = [name for name, t in BUILDERS.items() if t.builder_decision]
    if options.decision is not None and (task is None or not task.builder_decision):
        problems.append(f"--decision is for the templates whose question names it: {', '.join(with_decision)}")
    with_tie = [name for name, t in BUILDERS.items() if t.builder_allows_tie]
    if options.allow_tie and (task is None or not task.builder_allows_tie):
        problems.append(
            f"--allow-tie is for the templates whose choices can end in a tie that the analysis models: "
            f"{', '.join(with_tie)}"
        )
    if task is not None and task.builder_needs_model and not (options.label_column or options.score_column):
        problems.append(
            f"the {options.template} template needs the AI's prediction: give --label-column and/or --score-column"
        )
    return problems


def _subjects(frame: pd.DataFrame, options: BuildOptions, *, name: str) -> list[dict]:
    """The pool's subjects (:func:`studies.pools.subjects_from_frame`: blank cells, ids, labels, scores
    checked there); with only a score column, the AI's label is score >= 0.5."""
    problems = _check_columns(frame, options)
    if problems:
        raise StudyBuildError(problems)
    if frame.empty:
        raise StudyBuildError([f"{name}: the CSV has a header but no data rows"])
    if len(frame) > MAX_LIST_ITEMS:
        raise StudyBuildError([f"{name}: {len(frame):,} rows; a pool holds at most {MAX_LIST_ITEMS:,} subjects"])
    frame = frame.astype({c: str for c in frame.columns if frame[c].dtype == bool})  # JSON has no booleans here
    model = {
        key: column
        for key, column in (("label_column", options.label_column), ("score_column", options.score_column))
        if column
    }
    try:
        subjects = subjects_from_frame(
            frame,
            where=name,
            id_column=options.id_column,
            feature_columns=chosen_features(frame, options),
            group_columns=list(options.group_columns),
            models={
                **({MODEL: model} if model else {}),
                **{c: {"label_column": c} for c in options.model_label_columns},
            }
            or None,
            outcome_column=options.outcome_column,
        )
    except InvalidStudyFile as exc:
        raise StudyBuildError([str(p) for p in exc.problems]) from exc
    for subject in subjects:
        output = subject["models"].get(MODEL)
        if output is not None and "label" not in output:
            output["label"] = int(output["score"] >= 0.5)
    return subjects


def _display(frame: pd.DataFrame, options: BuildOptions) -> dict:
    """The profile text if given, else a table of the feature and group columns (in the CSV's order)."""
    if options.profile is not None:
        return {"profile": options.profile}
    shown = {*chosen_features(frame, options), *options.group_columns}
    return {"table": [str(c) for c in frame.columns if c in shown]}


def _task_block(frame: pd.DataFrame, subjects: list[dict], options: BuildOptions) -> dict:
    """The template's task block: key, type and pool, then what its task type's builder makes
    (``BlockTask.builder_block``) of the subjects and the feature columns (those participants see)."""
    task = BUILDERS[options.template]
    source = BuilderInput(
        subjects,
        frame[chosen_features(frame, options)],
        POOL,
        MODEL,
        MAX_LIST_ITEMS,
        decision=options.decision,
        mix=options.mix,
        allow_tie=options.allow_tie,
    )
    try:
        return {"key": task.builder_key, "type": "task", "pool": POOL, **task.builder_block(source)}
    except BuilderProblem as exc:
        raise StudyBuildError([str(exc)]) from exc


def _check_assignment(block: dict, pool: dict, options: BuildOptions, m: int, items: int) -> None:
    """M items (``m``, the --per-participant given) per participant fit the pool, and with strata M / k items
    from each of the k values."""
    noun = BUILDERS[options.template].item_shape.plural
    if m < 1:
        raise StudyBuildError([f"--per-participant must be at least 1 (got {m})"])
    if m > items:
        raise StudyBuildError([f"--per-participant {m} is larger than the pool: there are only {items} {noun}"])
    if not options.stratify_by:
        return
    strata = item_strata(block, pool, options.stratify_by)
    if strata is None:  # _check_columns and subjects_from_frame: a column of the CSV, no blank cell, items subjects
        raise StudyBuildError([f"--stratify-by {options.stratify_by!r} is not a column of every subject"])
    k = len(strata)
    if m % k:
        raise StudyBuildError(
            [
                f"--per-participant {m} is not divisible by the {k} values of --stratify-by {options.stratify_by!r} "
                f"({', '.join(strata)}); choose a multiple of {k}"
            ]
        )
    small = [f"{value!r} has {len(ids)}" for value, ids in strata.items() if len(ids) < m // k]
    if small:
        raise StudyBuildError(
            [
                f"--stratify-by {options.stratify_by!r}: each participant needs {m // k} subjects of each value, "
                f"but {', '.join(small)}"
            ]
        )


def _slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")
    if not re.fullmatch(SLUG_PATTERN, slug):
        slug = f"study-{slug}".strip("-")[:60].strip("-") if slug else "built-study"
    return slug


def _default_code(subjects: list[dict], options: BuildOptions) -> str:
    """A completion code derived from the content, so that building twice gives the same file."""
    digest = hashlib.sha256(json.dumps([options.template, subjects], sort_keys=True).encode()).hexdigest()
    return digest[:8].upper()


# ---------------------------------------------------------------------------------------------------------
# The study file's bytes and a summary for the preview


def study_file_bytes(spec: dict, *, max_bytes: int | None = None) -> bytes:
    """The study file as written by ``build_study --out`` (JSON, one-space indent, final newline);
    StudyBuildError when it is larger than ``max_bytes`` (the limit for loading it)."""
    raw = (strict_json.dumps(spec, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    if max_bytes is not None and len(raw) > max_bytes:
        raise StudyBuildError(
            [f"the study file would be {len(raw):,} bytes, more than the limit of {max_bytes:,}: use fewer rows"]
        )
    return raw


@dataclass(frozen=True)
class BlockSummary:
    key: str
    kind: str  # the block's type, or the task type of a task block
    items: int | None  # items of a task block (subjects or pairs)
    per_participant: int | None  # items each participant sees (None: not a task block)


@dataclass(frozen=True)
class StudySummary:
    slug: str
    title: str
    pool_size: int
    per_participant: int  # items of the task block each participant sees
    stratify_by: str | None
    strata: dict[str, int]  # stratum value -> subjects in the pool
    per_stratum: int | None  # items per stratum each participant sees
    blocks: list[BlockSummary]
    pages_per_participant: int
    example_subject: str
    profile_text: str
    profile_table: list[tuple[str, str]]


def summarise_study(spec: dict) -> StudySummary:
    """What a study built here contains (a validated file): its blocks, the pool, each participant's share,
    the first subject's profile as participants see it (:meth:`studies.content.StudyContent.profile`)."""
    pool = spec["pools"][0]
    subjects = pool["subjects"]
    blocks, pages, task = [], 0, None
    for block in spec["blocks"]:
        if block["type"] != "task":
            blocks.append(BlockSummary(block["key"], block["type"], None, None))
            pages += 1
            continue
        items = block_task(block).item_count(block, pool)
        shown = block.get("assignment", {}).get("per_participant", items)
        blocks.append(BlockSummary(block["key"], block["task"], items, shown))
        pages += shown
        task = block
    assignment = task.get("assignment", {}) if task else {}
    column = assignment.get("stratify_by")
    strata: dict[str, int] = {}
    if task is not None and column:
        by_value = item_strata(task, pool, column)
        if by_value is None:  # a validated file's stratify_by is a column of every subject (format2)
            raise ValueError(f"stratify_by {column!r} is not a column of every subject")
        strata = {value: len(ids) for value, ids in by_value.items()}
    shown = next((b.per_participant for b in blocks if b.per_participant is not None), 0)  # the task block's
    from studies.content import study_content  # Django (caches, models) only for the preview
    from studies.services import spec_digest

    example = study_content(spec, spec_digest(spec)).profile(pool["key"], subjects[0]["id"])
    return StudySummary(
        slug=spec["slug"],
        title=spec["title"],
        pool_size=len(subjects),
        per_participant=shown,
        stratify_by=column,
        strata=strata,
        per_stratum=shown // len(strata) if strata else None,
        blocks=blocks,
        pages_per_participant=pages,
        example_subject=subjects[0]["id"],
        profile_text=example.text,
        profile_table=example.table,
    )
