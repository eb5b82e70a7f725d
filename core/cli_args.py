"""argparse ``type=`` functions shared by the management commands. A bad value becomes Django's
CommandError (``argument --alpha: --alpha must be ...``) from ``call_command`` and a usage error on
the command line, before any work starts."""

import argparse
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _number(text: str, option: str, expected: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{option} must be a number in {expected}, got {text!r}") from None
    if value != value:  # NaN
        raise argparse.ArgumentTypeError(f"{option} must be a number in {expected}, got {text!r}")
    return value


def significance_level(text: str) -> float:
    """--alpha: a significance level strictly between 0 and 1."""
    value = _number(text, "--alpha", "(0, 1)")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"--alpha must be a significance level strictly between 0 and 1 (e.g. 0.05), got {text}"
        )
    return value


def top_fraction(text: str) -> float:
    """--top-fraction: a share of participants in (0, 1]."""
    value = _number(text, "--top-fraction", "(0, 1]")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--top-fraction must be in (0, 1] (e.g. 0.1 for the top 10%), got {text}")
    return value


def favourable_direction(text: str) -> str:
    """--favourable: which values of the outcome are good for the subject, "higher" or "lower"."""
    if text not in ("higher", "lower"):
        raise argparse.ArgumentTypeError(
            f'--favourable must be "higher" or "lower" (which risk scores and labels are good for the subject), '
            f"got {text!r}"
        )
    return text


def at_least_one(option: str) -> Callable[[str], int]:
    """An option that is a whole number of at least 1 (e.g. --min-group-size)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1 or str(value) != text.strip():
            raise argparse.ArgumentTypeError(f"{option} must be a whole number of at least 1, got {text!r}")
        return value

    return parse


def cut_points(text: str) -> tuple[str, list[float]]:
    """--bins: COLUMN=CUT,CUT,... as (column, numeric cut points)."""
    column, _, cuts = text.partition("=")
    try:
        numbers = [float(c) for c in cuts.split(",")]
    except ValueError:
        numbers = []
    if not column or not numbers or any(n != n for n in numbers):
        raise argparse.ArgumentTypeError(
            f"--bins expects COLUMN=CUT,CUT,... with numeric cut points, e.g. age=25,45 (got {text!r})"
        )
    return column, numbers


def bins_text(text: str) -> dict[str, list[float]]:
    """Several --bins in one text, as the web form takes them: ``age=25,45; priors=1,3`` (``;`` or new lines
    between columns; blank: none) as {column: cut points}."""
    parts = [part.strip() for part in text.replace("\n", ";").split(";") if part.strip()]
    bins = dict(cut_points(part) for part in parts)
    if len(bins) < len(parts):
        raise argparse.ArgumentTypeError(f"each column's cut points once, please (got {text!r})")
    return bins


def checked(value, kind: Callable[[str], T]) -> T:
    """Apply ``kind`` to a value that may have bypassed argparse (``call_command(..., alpha=2)``
    passes keyword options through unconverted), as a CommandError."""
    from django.core.management.base import CommandError

    try:
        return kind(str(value))
    except argparse.ArgumentTypeError as exc:
        raise CommandError(str(exc)) from None


MULTIPLE_TESTING = ("holm", "bh", "none")  # analysis.families.METHODS (core loads no science)


def add_multiple_testing(parser: argparse.ArgumentParser) -> None:
    """--multiple-testing: the adjustment of the p-values within each family of a report's tests."""
    parser.add_argument(
        "--multiple-testing",
        choices=list(MULTIPLE_TESTING),
        default="holm",
        help="the adjustment of the p-values within each family of tests (the tests that answer one question): "
        "holm (family-wise error rate; default), bh (Benjamini-Hochberg, false discovery rate) or none",
    )
