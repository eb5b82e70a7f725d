"""Judgements collected elsewhere (a Qualtrics or Prolific export) stored as a completed format 2 study, so
that the platform's exports and per-rater-group analyses run on them (``import_judgements``).

One CSV row per judgement, in long form: the participant, the item (a subject, a pair's two subjects, or a
triplet's anchor and two others), the answer, and optionally the participant's questionnaire answers and the
subjects' groups, features and model outputs (repeated on every row; a subject's first row counts). Columns are
named by options (:class:`JudgementColumns`). The study has one condition, the task block (plan = the
participant's items in the file's order) and a questionnaire with one optional single-choice question per
questionnaire column. A second import of the same slug changes nothing (``participation.imports``).
"""

import re
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pandas as pd
from django.db import transaction

from participation.imports import (
    CrowdDataset,
    CrowdImportResult,
    ImportedAnswer,
    ImportedParticipant,
    _already_imported,
    _store,
)
from tasks import BLOCK_TASKS
from tasks.questions import questionnaire_question, task_question

SET_TASKS = {"choose": "choice", "pair_comparable": "comparable", "triplet": "closer"}  # task -> stored measure
ENDS = {"choose": ("a", "b"), "pair_comparable": ("a", "b"), "triplet": ("anchor", "b", "c")}  # an item's subjects
SUBJECT_TASKS = {"agree": "agree", "rate": "rating"}
TASKS = ("agree", "rate", "choose", "pair_comparable", "triplet")
BLOCK, QUESTIONNAIRE, CONDITION, POOL, MODEL = "judgements", "questionnaire", "main", "subjects", "model"
EQUALLY = {"", "equal", "equally"}  # a choose answer naming neither subject


class InvalidJudgements(ValueError):
    """The file does not fit the options: every problem as ``FILE:row N: rule`` or ``FILE: rule``."""


@dataclass(frozen=True)
class JudgementColumns:
    participant: str
    answer: str
    item: str | None = None  # agree, rate
    a: str | None = None  # choose, pair_comparable
    b: str | None = None  # choose, pair_comparable, triplet
    anchor: str | None = None  # triplet
    c: str | None = None
    questionnaire: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    model_label: str | None = None
    model_score: str | None = None


def _check_task(task: str) -> None:
    registered = sorted(t for t in TASKS if t in BLOCK_TASKS)
    if task not in BLOCK_TASKS or task not in TASKS:
        raise InvalidJudgements(
            f"--task {task!r} is not a registered task type this import supports; choose one of {', '.join(registered)}"
        )


def _read(path: Path, task: str, columns: JudgementColumns) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as error:
        raise InvalidJudgements(f"{path}: cannot read the CSV ({error})") from error
    item_options = {f"--{end}": getattr(columns, end) for end in ENDS.get(task, ("item",))}
    needed: dict[str, str | None] = {"--participant": columns.participant, "--answer": columns.answer}
    needed |= item_options
    missing_options = [option for option, column in needed.items() if not column]
    if missing_options:
        raise InvalidJudgements(f"{path}: a {task} import needs {' and '.join(missing_options)}")
    named = [*needed.values(), *columns.questionnaire, *columns.groups, *columns.features]
    named += [c for c in (columns.model_label, columns.model_score) if c]
    absent = [c for c in named if c not in frame.columns]  # every needed option is given (checked above)
    if absent:
        raise InvalidJudgements(
            f"{path}: no column {', '.join(map(repr, absent))} (columns: {', '.join(frame.columns)})"
        )
    if frame.empty:
        raise InvalidJudgements(f"{path}: no rows")
    for column in [columns.participant, *item_options.values()]:
        blank = frame[column].str.strip() == ""
        if blank.any():
            raise InvalidJudgements(f"{path}:row {int(blank.idxmax()) + 2}: {column!r} is empty")
    return frame


def _numbers(path: Path, frame: pd.DataFrame, column: str, allowed: set[float] | None = None) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() | (~values.isin(allowed) if allowed else False)
    if bad.any():
        rule = f"one of {', '.join(str(int(v)) for v in sorted(allowed))}" if allowed else "a number"
        row = int(bad.idxmax())
        raise InvalidJudgements(f"{path}:row {row + 2}: {column!r} must be {rule}, got {frame.at[row, column]!r}")
    return values


def _subjects(path: Path, frame: pd.DataFrame, ids: pd.Series, columns: JudgementColumns) -> list[dict]:
    """One pool subject per id, in first-seen order, with its first row's groups, features and model output."""
    first = frame.assign(_id=ids).drop_duplicates("_id")
    subjects = []
    for _, row in first.iterrows():
        subject: dict = {"id": row["_id"]}
        if columns.groups:
            subject["groups"] = {g: row[g] for g in columns.groups}
        if columns.features:
            subject["features"] = {f: _number_or_text(row[f]) for f in columns.features}
        output: dict[str, float] = {}
        if columns.model_label:
            output["label"] = int(float(row[columns.model_label]))
        if columns.model_score:
            output["score"] = float(row[columns.model_score])
        if output:
            subject["models"] = {MODEL: output}
        subjects.append(subject)
    return subjects


def _number_or_text(value: str):
    number = pd.to_numeric(value, errors="coerce")
    return value if pd.isna(number) else float(number)


def judgements_dataset(path: Path, task: str, columns: JudgementColumns, *, title: str, options: dict) -> CrowdDataset:
    """The study file and completed participants of a judgements CSV (module doc); ``options`` are the task
    block's extra options (``decision`` for choose; the rating scale's ``min``/``max``)."""
    _check_task(task)
    frame = _read(path, task, columns)
    if columns.model_label:
        _numbers(path, frame, columns.model_label, {0.0, 1.0})
    if columns.model_score:
        _numbers(path, frame, columns.model_score)
    block: dict = {"key": BLOCK, "type": "task", "task": task, "pool": POOL}
    if task in SET_TASKS:
        names = ENDS[task]
        ends = [frame[getattr(columns, end)].str.strip() for end in names]
        for i, j in combinations(range(len(ends)), 2):
            same = ends[i] == ends[j]
            if same.any():
                raise InvalidJudgements(
                    f"{path}:row {int(same.idxmax()) + 2}: {names[i]} and {names[j]} are one subject "
                    f"({ends[i][same].iloc[0]!r}); a {task} item needs {len(ends)} different subjects"
                )
        # One orientation per item (its first row's): a later row with the last two subjects swapped, (b, a) or
        # (anchor, c, b), is the same item (a choice is stored against the pair's a, a triplet's answer against
        # its b; a yes/no answer does not depend on the order).
        first, second = ends[-2], ends[-1]
        key = first.where(first < second, second) + "~" + second.where(first < second, first)
        if len(ends) == 3:
            key = ends[0] + "~" + key
        items = pd.Series(["~".join(row) for row in zip(*ends, strict=True)], index=frame.index)
        items = items.groupby(key).transform("first")
        ids = pd.concat(ends, ignore_index=True)
        block[BLOCK_TASKS[task].item_shape.name] = [
            dict(zip(names, item.split("~"), strict=True)) for item in pd.unique(items)
        ]
        frame_for_pool = pd.concat([frame] * len(ends), ignore_index=True)
    else:
        items = frame[columns.item].str.strip()
        ids, frame_for_pool = items, frame
    measure = SET_TASKS.get(task) or SUBJECT_TASKS[task]
    texts = pd.Series("", index=frame.index)
    if task in ("choose", "triplet"):  # the answer names a subject: the pair's a or b, the triplet's b or c
        chosen = frame[columns.answer].str.strip()
        first_side = pd.Series([item.split("~")[-2] for item in items], index=frame.index)
        second_side = pd.Series([item.split("~")[-1] for item in items], index=frame.index)
        equal = chosen.str.lower().isin(EQUALLY) if task == "choose" else pd.Series(False, index=frame.index)
        bad = ~equal & (chosen != first_side) & (chosen != second_side)
        if bad.any():
            row = int(bad.idxmax())
            sides = f"({first_side[row]!r}, {second_side[row]!r})"
            rule = (
                f"name one of the pair's subjects {sides} or be empty / 'Equally'"
                if task == "choose"
                else f"name the subject more similar to the anchor, one of {sides}"
            )
            raise InvalidJudgements(f"{path}:row {row + 2}: {columns.answer!r} must {rule}, got {chosen[row]!r}")
        values = (chosen == first_side).astype(float).where(~equal, 0.5)
        texts = chosen.where(~equal, "")
        if task == "choose":
            block["decision"] = options.get("decision") or "be chosen"
            block["allow_equal"] = bool(equal.any())
    elif task == "rate":
        values = _numbers(path, frame, columns.answer)
        low, high = options.get("min"), options.get("max")
        low, high = (values.min() if low is None else low), (values.max() if high is None else high)
        outside = (values < low) | (values > high)
        if outside.any():
            row = int(outside.idxmax())
            raise InvalidJudgements(
                f"{path}:row {row + 2}: {columns.answer!r} = {values[row]:g} is outside [{low:g}, {high:g}]"
            )
        block["scale"] = {"type": "number", "min": float(low), "max": float(high)}
        block["question"] = "How would you rate this {subject_noun}?"
    else:
        values = _numbers(path, frame, columns.answer, {0.0, 1.0})
    if task == "agree":
        if not columns.model_label:
            raise InvalidJudgements(
                f"{path}: an agree import needs --model-label (the AI's 0/1 label the participants judged)"
            )
        block["model"] = MODEL
    participants = []
    questions = []
    for column in columns.questionnaire:
        answered = sorted({v.strip() for v in frame[column] if v.strip()})
        if answered:  # a column with one value is asked as a short text (a single choice needs two options)
            kind = {"type": "single_choice", "options": answered} if len(answered) > 1 else {"type": "text"}
            questions.append({"key": _key(column), "text": column, **kind, "required": False})
    for person, rows in frame.groupby(columns.participant, sort=False):
        repeated = items[rows.index].duplicated()
        if repeated.any():
            row = int(repeated.idxmax())
            raise InvalidJudgements(f"{path}:row {row + 2}: participant {person!r} judged {items[row]!r} twice")
        plan = [
            {"key": f"{BLOCK}/{item}", "kind": task, "block": BLOCK, "item": item, "position": i}
            for i, item in enumerate(items[rows.index])
        ]
        answers = [
            ImportedAnswer(
                f"{BLOCK}/{items[i]}",
                task_question(BLOCK, items[i], measure),
                measure,
                BLOCK,
                items[i],
                float(values[i]),
                texts[i],
            )
            for i in rows.index
        ]
        if questions:
            plan.append({"key": QUESTIONNAIRE, "kind": "questionnaire", "block": QUESTIONNAIRE})
            for column in columns.questionnaire:
                value = rows[column].iloc[0].strip()
                if value:
                    answers.append(
                        ImportedAnswer(
                            QUESTIONNAIRE,
                            questionnaire_question(QUESTIONNAIRE, _key(column)),
                            "questionnaire",
                            QUESTIONNAIRE,
                            "",
                            None,
                            value,
                        )
                    )
        participants.append(ImportedParticipant(str(person), CONDITION, plan, answers))
    # the features (what the imported judgements' metric weighs) and groups, as the raters saw them
    display: dict[str, object] = (
        {"table": [*columns.features, *columns.groups]}
        if columns.features
        else {"profile": "A subject of the imported dataset (no features were imported)."}
    )
    pool = {
        "key": POOL,
        "subject_noun": "subject",
        "display": display,
        "subjects": _subjects(path, frame_for_pool, ids, columns),
    }
    blocks = [block] + (
        [{"key": QUESTIONNAIRE, "type": "questionnaire", "title": "About you", "questions": questions}]
        if questions
        else []
    )
    spec = {
        "format": 2,
        "slug": "imported",
        "title": title,
        "description": f"Imported from {path.name} ({len(frame)} judgements by {len(participants)} participants).",
        "consent": {"text": "Participants consented where the judgements were collected."},
        "completion": {"code": "IMPORTED"},
        "conditions": [{"key": CONDITION, "label": "Imported"}],
        "pools": [pool],
        "blocks": blocks,
    }
    return CrowdDataset(spec, participants)


def _key(column: str) -> str:
    """A questionnaire question key from a column name: lower case, runs of other characters as '_'."""
    return re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_") or "question"


@transaction.atomic
def judgements_import(
    *,
    path: Path,
    task: str,
    columns: JudgementColumns,
    slug: str,
    title: str = "",
    owner=None,
    options: dict | None = None,
) -> CrowdImportResult:
    """Store a judgements CSV as a completed study (module doc); a slug with participants is left as it is."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    done = _already_imported(slug, owner)
    if done is not None:
        return done
    dataset = judgements_dataset(
        path, task, columns, title=title or f"Judgements from {path.name}", options=options or {}
    )
    return _store(dataset, slug, owner)
