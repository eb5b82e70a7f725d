"""Parsing of values typed by researchers on the command line or in API forms."""

import json


def typed_value(text: str):
    """JSON when the text is JSON (1, -1.0, true, "x"), else the text itself (Female, NonWhite)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
