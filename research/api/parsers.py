"""Request parsers of the API."""

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from core.strict_json import non_finite_path

MAX_JSON_DEPTH = 100


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser (strict: ``NaN`` and ``Infinity`` are refused), refusing bodies nested deeper than
    MAX_JSON_DEPTH, and numbers too large for a float (``1e999``, parsed as infinity), with a 400 (not a
    RecursionError, or a 500 when the infinity is stored: ``core.strict_json``)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise exceptions.ParseError(
                f"JSON parse error - nested deeper than the limit of {MAX_JSON_DEPTH} levels"
            ) from exc
        if json_depth(data) > MAX_JSON_DEPTH:
            raise exceptions.ParseError(f"JSON parse error - nested deeper than the limit of {MAX_JSON_DEPTH} levels")
        where = non_finite_path(data)
        if where is not None:
            raise exceptions.ParseError(f"JSON parse error - numbers must be finite: {where}")
        return data


def json_depth(value) -> int:
    """Nesting depth of parsed JSON (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((inner, depth) for inner in item if isinstance(inner, dict | list))
    return deepest
