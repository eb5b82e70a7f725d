"""The job page's options in words (``{% load job_values %}``, ``{{ value|readable }}``): a job's
``params`` are JSON, and Python's spelling of them (``None``, ``[]``, ``{}``, ``True``) means
nothing to a researcher."""

from django import template

register = template.Library()

NOT_SET = "not set"


@register.filter
def readable(value) -> str:
    """``None`` and empty lists or mappings: "not set"; booleans: yes/no; a list: its items joined
    by commas; a mapping: ``key: value`` pairs joined by commas (nested values the same way)."""
    if value is None or value == [] or value == {} or value == "":
        return NOT_SET
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(readable(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {readable(item)}" for key, item in value.items())
    return str(value)
