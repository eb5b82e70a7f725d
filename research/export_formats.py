"""The export tables as typed Parquet files and as SPSS ``.sav`` / Stata ``.dta`` files with the
codebook's variable and value labels (``research.codebook.export_labels``).

Columns are typed by the codebook: integer and 0/1 -> nullable 64-bit integers, number -> float64,
datetime -> UTC timestamps, uuid and string -> text. In SPSS / Stata files single-choice questions
are stored as numbers 1..k with the options as value labels, variable names are made valid (other
characters -> ``_``, at most 32 characters, unique) and each variable's label is its codebook
meaning (prefixed with the table's column name when that had to change; Stata keeps 80 characters).
pyarrow and pyreadstat are imported here only, when such a file is written (web workers stay light).
"""

import re
from pathlib import Path

import pandas as pd

from research.codebook import TableLabels

FORMATS = ("csv", "json", "parquet", "sav", "dta")
LABELLED = ("sav", "dta")
NAME_LENGTH = 32  # Stata's limit on variable names (SPSS allows 64; one rule for both)
LABEL_LENGTH = {"sav": 256, "dta": 80}  # variable-label limits of SPSS and Stata
INTEGER_TYPES = ("integer", "0/1")


def typed_frame(frame: pd.DataFrame, labels: TableLabels) -> pd.DataFrame:
    """The table with each column cast to its codebook type (columns the codebook lacks stay as they are)."""
    out = frame.copy()
    for column in out.columns:
        kind = labels.types.get(column)
        values = out[column]
        if kind in INTEGER_TYPES:
            out[column] = pd.to_numeric(values).astype("Int64")
        elif kind == "number":
            out[column] = pd.to_numeric(values).astype("float64")
        elif kind == "datetime":
            out[column] = pd.to_datetime(values.replace("", None), utc=True, format="ISO8601")
        elif kind in ("string", "uuid") and column not in labels.codes:
            out[column] = values.astype("str").where(values.notna())
    return out


def _variable_names(columns: list[str]) -> dict[str, str]:
    """Column -> a valid SPSS / Stata variable name, unique, at most ``NAME_LENGTH`` characters."""
    names: dict[str, str] = {}
    for column in columns:
        base = re.sub(r"[^A-Za-z0-9_]", "_", column)
        base = base if base[:1].isalpha() else f"v_{base}"
        name, n = base[:NAME_LENGTH], 1
        while name in names.values():
            suffix = f"_{n}"
            name, n = base[: NAME_LENGTH - len(suffix)] + suffix, n + 1
        names[column] = name
    return names


def labelled_frame(
    frame: pd.DataFrame, labels: TableLabels, fmt: str
) -> tuple[pd.DataFrame, dict[str, str | None], dict[str, dict[int | float, str]]]:
    """(the typed table with valid variable names and single-choice answers as codes, variable
    labels, value labels) for ``fmt`` (sav or dta)."""
    out = typed_frame(frame, labels)
    for column, codes in labels.codes.items():
        if column in out.columns:
            out[column] = out[column].map(codes).astype("Int64")
    names = _variable_names(list(out.columns))
    variable_labels: dict[str, str | None] = {}
    for column, name in names.items():
        meaning = labels.meanings.get(column, "")
        label = meaning if name == column else f"{column}: {meaning}"
        variable_labels[name] = label[: LABEL_LENGTH[fmt]]
    value_labels: dict[str, dict[int | float, str]] = {
        names[c]: {code: label for code, label in v.items()} for c, v in labels.value_labels.items() if c in names
    }
    return out.rename(columns=names), variable_labels, value_labels


def write_table(frame: pd.DataFrame, path: Path, fmt: str, labels: TableLabels) -> None:
    """Write one table as Parquet (pyarrow), SPSS or Stata (pyreadstat), typed and labelled."""
    if fmt == "parquet":
        typed_frame(frame, labels).to_parquet(path, engine="pyarrow", index=False)
        return
    if fmt not in LABELLED:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    import pyreadstat

    out, variable_labels, value_labels = labelled_frame(frame, labels, fmt)
    write = pyreadstat.write_sav if fmt == "sav" else pyreadstat.write_dta
    write(out, str(path), column_labels=variable_labels, variable_value_labels=value_labels)
