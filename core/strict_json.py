"""JSON that holds no NaN or Infinity, for everything the project stores or writes.

Python's ``json`` writes ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259, section 6):
PostgreSQL refuses them, SQLite stores the text, other readers fail later. :class:`StrictJSONEncoder` (the
encoder of every JSON column, :class:`StrictJSONField`) and :func:`dumps` (every JSON file, text column and
response the project writes) refuse them at once with :class:`NonFiniteJSON`, which names where they were.
"""

import json
import math
from typing import Any

from django.db import models


class NonFiniteJSON(ValueError):
    """A value to be written as JSON holds NaN or an infinity."""


def non_finite_path(value: Any, path: str = "$") -> str | None:
    """Where ``value`` first holds a float NaN or infinity (``$.key[3]``), None when nowhere."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where} is {float(item)!r}"
        if isinstance(item, dict):
            stack.extend((f"{where}.{key}", child) for key, child in reversed(item.items()))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


class StrictJSONEncoder(json.JSONEncoder):
    """``json.JSONEncoder`` with ``allow_nan`` always off: a NaN or an infinity raises :class:`NonFiniteJSON`
    naming its place (a number a ``default`` returns included)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_nan": False})

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        try:
            return list(super().iterencode(o, _one_shot))
        except ValueError as exc:
            if "JSON compliant" not in str(exc):  # not a NaN or infinity (e.g. a circular reference)
                raise
            where = non_finite_path(o) or "a value given by default()"
            raise NonFiniteJSON(f"NaN and Infinity are not JSON and are never stored: {where}") from exc


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that refuses NaN and Infinity (:class:`StrictJSONEncoder`); ``kwargs`` as ``json.dumps``'s."""
    return json.dumps(value, cls=StrictJSONEncoder, **kwargs)


class StrictJSONField(models.JSONField):
    """``models.JSONField`` whose values are written by :class:`StrictJSONEncoder` on every database, so a NaN
    or an infinity fails the save with :class:`NonFiniteJSON` on SQLite as on PostgreSQL (which refuses the
    text itself). Every JSON column of the project is one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("encoder", StrictJSONEncoder)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("encoder") is StrictJSONEncoder:
            del kwargs["encoder"]
        return name, path, args, kwargs
