"""Item pools read from a CSV of decision subjects (format 2 ``pools[i].csv``, and the builder).

A row is one subject: ``id_column`` its id (read as written: "007" stays "007"), ``group_columns``
its groups (e.g. race, sex: what fairness is judged across), ``models`` per model a score column
(in [0, 1]) and/or a binary label column, and ``feature_columns`` (default every other column) its
features; the pool's ``outcome_column`` (the true outcome, 0/1, e.g. two-year recidivism: what error
rates are computed against) is the subject's ``outcome``, never a feature (participants never see it).
The CSV is read with the platform's bounded upload reader; every problem is an
:class:`~studies.study_file.InvalidStudyFile` problem naming the pool's path, the column and the
first offending rows.
"""

import math
from pathlib import Path

import pandas as pd

from core.uploads import UploadError, read_csv_upload
from studies.study_file import InvalidStudyFile, StudyFileProblem
from tasks.schema import KEY_PATTERN

_FIRST_ROWS = 5


def _rows(mask: pd.Series) -> str:
    """The first offending data rows, as numbered in a spreadsheet (header = row 1)."""
    rows = [str(i + 2) for i in mask[mask].index[:_FIRST_ROWS]]
    return ", ".join(rows) + (" ..." if int(mask.sum()) > _FIRST_ROWS else "")


def _value(value):
    """A cell as JSON: integers stay integers, other numbers floats, the rest text."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if hasattr(value, "item"):
        return value.item()
    return value


def subjects_from_frame(
    frame: pd.DataFrame,
    *,
    where: str,
    id_column: str,
    feature_columns: list[str] | None = None,
    group_columns: list[str] | None = None,
    models: dict[str, dict[str, str]] | None = None,
    outcome_column: str | None = None,
) -> list[dict]:
    """Pool subjects (format 2's ``{id, features, groups, models}``) from a table; raises
    InvalidStudyFile naming ``where`` and the rule (missing column, duplicate or blank ids, an id
    that is not a key, blank cells, a label that is not 0/1, a score outside [0, 1])."""
    group_columns = list(group_columns or [])
    models = models or {}
    problems: list[StudyFileProblem] = []

    def add(rule: str) -> None:
        problems.append(StudyFileProblem(where, rule))

    model_columns = {column for spec in models.values() for column in spec.values()}
    outcome = [outcome_column] if outcome_column is not None else []
    named = [id_column, *group_columns, *(feature_columns or []), *outcome, *sorted(model_columns)]
    for column in dict.fromkeys(named):
        if column not in frame.columns:
            add(f"column {column!r} is not in the CSV (it has: {', '.join(map(str, frame.columns))})")
    if problems:
        raise InvalidStudyFile(problems)
    if feature_columns is None:
        feature_columns = [c for c in frame.columns if c not in {id_column, *group_columns, *model_columns, *outcome}]
    for column in feature_columns:
        if column in {id_column, *group_columns, *model_columns, *outcome}:
            add(f"column {column!r} cannot be a feature: it is the id, a group, a model's output or the outcome")
    ids = frame[id_column].astype(str).str.strip()
    blank = frame[id_column].isna() | (ids == "")
    if blank.any():
        add(f"column {id_column!r} (the id) is blank in rows {_rows(blank)}")
    bad = ~blank & ~ids.str.fullmatch(KEY_PATTERN[1:-1])
    if bad.any():
        add(f"ids must be 1-40 letters, digits, '-' or '_'; rows {_rows(bad)} are not (e.g. {ids[bad].iloc[0]!r})")
    duplicated = ~blank & ids.duplicated(keep=False)
    if duplicated.any():
        add(f"id {ids[duplicated].iloc[0]!r} appears more than once (rows {_rows(duplicated)})")
    for column in [*group_columns, *feature_columns]:
        missing = frame[column].isna()
        if missing.any():
            add(f"column {column!r} is blank in rows {_rows(missing)}")
    if outcome_column is not None:
        wrong = ~pd.to_numeric(frame[outcome_column], errors="coerce").isin([0, 1])
        if wrong.any():
            add(
                f"outcome column {outcome_column!r} must be 0 or 1; rows {_rows(wrong)} are not "
                f"(e.g. {_value(frame[outcome_column][wrong].iloc[0])!r})"
            )
    for model, spec in models.items():
        if "label_column" in spec:
            labels = pd.to_numeric(frame[spec["label_column"]], errors="coerce")
            wrong = ~labels.isin([0, 1])
            if wrong.any():
                add(
                    f"label column {spec['label_column']!r} (model {model!r}) must be 0 or 1; "
                    f"rows {_rows(wrong)} are not (e.g. {_value(frame[spec['label_column']][wrong].iloc[0])!r})"
                )
        if "score_column" in spec:
            scores = pd.to_numeric(frame[spec["score_column"]], errors="coerce")
            wrong = ~((scores >= 0) & (scores <= 1))
            if wrong.any():
                add(
                    f"score column {spec['score_column']!r} (model {model!r}) must be a number in [0, 1]; "
                    f"rows {_rows(wrong)} are not (e.g. {_value(frame[spec['score_column']][wrong].iloc[0])!r})"
                )
    if problems:
        raise InvalidStudyFile(problems)
    subjects = []
    for i, row in frame.iterrows():
        outputs: dict[str, dict] = {}
        for model, spec in models.items():
            outputs[model] = {}
            if "score_column" in spec:
                outputs[model]["score"] = float(row[spec["score_column"]])
            if "label_column" in spec:
                outputs[model]["label"] = int(float(row[spec["label_column"]]))
        subject = {
            "id": ids[i],
            "features": {c: _cell(row[c]) for c in feature_columns},
            "groups": {c: _cell(row[c]) for c in group_columns},
            "models": outputs,
        }
        if outcome_column is not None:
            subject["outcome"] = int(float(row[outcome_column]))
        subjects.append(subject)
    return subjects


def _cell(value):
    value = _value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def inline_csv_pools(spec: dict, folder: Path) -> dict:
    """The study with every CSV pool replaced by its subjects, read from ``folder`` / path."""
    pools = []
    for pi, pool in enumerate(spec.get("pools", []) if isinstance(spec.get("pools"), list) else []):
        source = pool.get("csv") if isinstance(pool, dict) else None
        if not isinstance(source, dict) or "subjects" in pool or not isinstance(source.get("path"), str):
            pools.append(pool)
            continue
        where = f"pools[{pi}].csv"
        try:
            frame = read_csv_upload(
                folder / source["path"],
                name=f"{where}.path {source['path']!r}",
                text_columns=(str(source.get("id_column", "")),),
            )
        except UploadError as exc:
            raise InvalidStudyFile([StudyFileProblem(where, str(exc))]) from exc
        subjects = subjects_from_frame(
            frame,
            where=where,
            id_column=source.get("id_column", ""),
            feature_columns=source.get("feature_columns"),
            group_columns=source.get("group_columns"),
            models=source.get("models"),
            outcome_column=pool.get("outcome_column") if isinstance(pool.get("outcome_column"), str) else None,
        )
        pools.append({**{k: v for k, v in pool.items() if k != "csv"}, "subjects": subjects})
    return {**spec, "pools": pools} if pools else spec
