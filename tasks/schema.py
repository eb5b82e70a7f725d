"""The JSON-schema pieces study files and the task types' block options are written in, and the
options several task types share (each type lists the ones it takes in ``BlockTask.options``)."""

from collections import Counter
from collections.abc import Callable
from typing import Any

KEY_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"
LIKERT_QUESTIONS = ("trajectory", "aggregate", "overall")

TEXT = {"type": "string", "minLength": 1}
# A text participants see: with the file's ``languages``, one text per language (studies.translation
# finds these fields by this mark and asks for a {"en": ..., "de": ...} object in their place).
SHOWN_MARK = "shown to participants"
SHOWN = {**TEXT, "$comment": SHOWN_MARK}
KEY = {"type": "string", "pattern": KEY_PATTERN}
LABELS = {"type": "array", "minItems": 2, "maxItems": 11, "items": SHOWN}
# What the values 0 and 1 of a binary label or outcome mean to a participant: {"0": ..., "1": ...}.
BINARY_NAMES = {
    "type": "object",
    "additionalProperties": False,
    "required": ["0", "1"],
    "properties": {"0": SHOWN, "1": SHOWN},
}

# Options shared by several task types: one schema each, whichever type takes it.
MODEL = {"model": KEY}
QUESTION = {"question": SHOWN}
BTS = {
    "bts": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "prompt": SHOWN,
            "measures": {"type": "array", "minItems": 1, "items": {"enum": list(LIKERT_QUESTIONS)}},
        },
    }
}
# A block converted from a format 1 file keeps format 1's page and question keys (``tasks.questions.page_key``):
# ``block`` is the part of format 1 it was (the answers table's ``block``), ``key`` the set or check key.
FORMAT1_PARTS = ("pairs", "output", "disagreement", "attention")
PAGE_KEY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["block"],
    "properties": {"block": {"enum": list(FORMAT1_PARTS)}, "key": KEY},
}


def duplicates(items: list[str]) -> set[str]:
    """The items that occur more than once."""
    return {item for item, count in Counter(items).items() if count > 1}


def once(memo: dict, key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` the first time ``key`` is asked for in this validation, then the stored value (what
    depends only on a pool is computed once however many blocks use it)."""
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def check_pairs(block: dict, pool: dict, base: str, add, memo: dict) -> None:
    """Each pair's subjects are in the pool and differ; no pair is listed twice (either order)."""
    ids = once(memo, (pool["key"], "ids"), lambda: {s["id"] for s in pool["subjects"]})
    for xi, pair in enumerate(block["pairs"]):
        for end in ("a", "b"):
            if pair[end] not in ids:
                add(f"{base}.pairs[{xi}].{end}", f"subject {pair[end]!r} is not in pool {pool['key']!r}")
        if pair["a"] == pair["b"]:
            add(f"{base}.pairs[{xi}]", "a pair needs two different subjects")
    unordered = [tuple(sorted((p["a"], p["b"]))) for p in block["pairs"]]
    for dup in duplicates([f"{a}~{b}" for a, b in unordered]):
        add(f"{base}.pairs", f"the pair {dup.replace('~', ' / ')} is listed twice")


def _first_without(pool: dict, model: str, need: str | None) -> str | None:
    """The first subject with no output (or no ``need``) from ``model``; None when every one has it."""
    for subject in pool["subjects"]:
        output = subject.get("models", {}).get(model)
        if output is None or (need and need not in output):
            return subject["id"]
    return None


def check_model(block: dict, pool: dict, base: str, add, need: str | None, memo: dict) -> None:
    """Every subject has an output of the block's model (with ``need``, "label" or "score", when given)."""
    model = block["model"]
    missing = once(memo, (pool["key"], "model", model, need), lambda: _first_without(pool, model, need))
    if missing is not None:
        add(f"{base}.model", f"subject {missing!r} has no {need or 'output'} from model {model!r}")
