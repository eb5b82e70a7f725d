"""A documented column of an exported table (``research.tables``) or an answer's measure (each task
type's ``measures``): what the codebook says about it and, for a measure, which numbers the database
accepts (``participation.answer_rules``)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One exported column: its type (uuid, string, integer, number, 0/1, datetime), meaning and,
    when they do not depend on the study, its allowed values; ``labels`` names a 0/1 column's codes
    in SPSS / Stata files (default 0 = no, 1 = yes); ``source`` says who measured an answer-quality
    column: ``server`` (the server's clock, the pages it served, the answers) or ``client`` (reported by
    the page's script, which a client can forge or leave out).

    For a measure, ``bounds`` (inclusive) or ``levels`` say which ``Answer.number`` the database
    accepts; a "0/1" measure accepts 0 and 1 only; a measure with neither accepts any number (its
    range depends on the study, e.g. a rating scale's). A blank number is always accepted (text
    answers)."""

    type: str
    meaning: str
    values: str = ""
    labels: tuple[str, str] = ("no", "yes")
    source: str = ""
    bounds: tuple[float, float] | None = None
    levels: tuple[float, ...] = ()

    def number_rule(self) -> tuple[str, tuple[float, ...]] | None:
        """``("in", levels)``, ``("between", (low, high))`` or None (any number)."""
        if self.levels or self.type == "0/1":
            return "in", self.levels or (0, 1)
        if self.bounds is not None:
            return "between", self.bounds
        return None
