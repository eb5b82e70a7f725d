"""Typed readers for environment variables (every setting comes from the environment)."""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    """The variable's value, or ``default``; raise if neither exists."""
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"Set the environment variable {name}.")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    """Read 1/0, true/false, yes/no, on/off (case-insensitive)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1 or 0).")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from exc


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list with blanks removed."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]
