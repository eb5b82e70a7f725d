"""A documented column of an exported table (``research.tables``) or an answer's measure (each task
type's ``measures``): what the codebook says about it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One exported column: its type (uuid, string, integer, number, 0/1, datetime), meaning and,
    when they do not depend on the study, its allowed values; ``labels`` names a 0/1 column's codes
    in SPSS / Stata files (default 0 = no, 1 = yes)."""

    type: str
    meaning: str
    values: str = ""
    labels: tuple[str, str] = ("no", "yes")
