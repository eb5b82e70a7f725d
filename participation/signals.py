"""Interaction signals of a study page, recorded with its answers when the study records them
(``telemetry``, on by default, stated on the consent page): ``static/surveys/signals.js`` counts, while
the page is open, the time on the page, focus losses (switching tab or window), paste events and
pasted characters in text fields, keys pressed in text fields and the typing time (first to last
key) and, when the page is sent, the characters in its text fields; it sends them in the hidden field
``signals`` as ``v1:ms,blurs,pastes,pasted_chars,keys,typing_ms,text_chars``.

Nothing typed is recorded, only counts. A page sent without the field (no JavaScript, a script
blocked, an HTTP client) or with a malformed one has unknown signals (nulls), never suspicious ones.
"""

from dataclasses import astuple, dataclass

FIELD = "signals"
COLUMNS = ("time_on_page_ms", "focus_losses", "pastes", "pasted_chars", "keystrokes", "typing_ms", "text_chars")
LIMIT = 10**9  # a count or duration above this is not a browser's: the whole field is refused


@dataclass(frozen=True)
class PageSignals:
    time_on_page_ms: int
    focus_losses: int
    pastes: int
    pasted_chars: int
    keystrokes: int
    typing_ms: int
    text_chars: int

    def values(self) -> tuple[int, ...]:
        return astuple(self)


UNKNOWN: tuple[None, ...] = (None,) * len(COLUMNS)


def parse_signals(raw: str) -> PageSignals | None:
    """The signals of ``raw`` (the hidden field's value), or None when absent or malformed."""
    version, _, body = raw.partition(":")
    parts = body.split(",")
    if version != "v1" or len(parts) != len(COLUMNS) or not all(p.isdigit() and len(p) <= 10 for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if any(n > LIMIT for n in numbers):
        return None
    return PageSignals(*numbers)


def records_signals(spec: dict) -> bool:
    """Whether the study records interaction signals (the study file's ``telemetry``, default true)."""
    return spec.get("telemetry", True)
