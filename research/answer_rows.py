"""The answers table's rows, without pandas: shared by the in-memory export
(``research.export_answers.answer_rows``) and the streamed CSV (``research.export_stream``), so that
both give the same rows.

An answer's block and task come from the participant's stored plan (the answer's page key -> the
page): format 2 pages name their block and task; format 1 pages map to the blocks pairs, output,
disagreement, attention and screening (tasks pair_distance, fair_score, agree, attention, screening).
"""

import math
from collections.abc import Iterable, Iterator
from typing import Any

from participation.models import Participant
from tasks.base import answer_number
from tasks.questions import answers_block, answers_subject

FORMAT1_PAGES = {  # page kind -> (block, task)
    "likert": ("pairs", "pair_distance"),
    "output": ("output", "fair_score"),
    "disagreement": ("disagreement", "agree"),
    "attention": ("attention", "attention"),
    "screening": ("screening", "screening"),
}
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: object) -> object:
    """A text cell a spreadsheet would run as a formula, prefixed with an apostrophe (CSV only)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) else value


def is_format2(spec: dict) -> bool:
    return spec.get("format", 1) == 2


def exclusion_threshold(spec: dict) -> float:
    """Failed attention checks from which a participant is excluded (format 2 without a threshold:
    never)."""
    if is_format2(spec):
        return spec.get("attention", {}).get("exclude_if_failed", math.inf)
    return spec["attention_checks"]["exclude_if_failed"]


def is_excluded(spec: dict, failed: int) -> int:
    """1 if ``failed`` attention checks reach the study's threshold (and at least one failed), else 0."""
    return int(failed >= exclusion_threshold(spec) and failed > 0)


def references_of(spec: dict) -> dict[tuple[str, str], Any]:
    """What locating an answer needs: format 1, (condition, stimulus set) -> the set's reference
    subject; format 2, ("block", key) -> the block."""
    if is_format2(spec):
        return {("block", b["key"]): b for b in spec["blocks"]}
    return {(c["key"], s["key"]): s["reference"] for c in spec["conditions"] for s in c["stimulus_sets"]}


def row_base(slug: str, version: int, p: Participant) -> dict[str, Any]:
    """The columns every per-participant row starts with."""
    return {
        "participant_id": str(p.pseudonym),
        "study": slug,
        "study_version": version,
        "condition": p.condition.key if p.condition else "",
    }


def _locate(spec: dict, references: dict, p: Participant, page: dict, answer) -> tuple[str, str, str]:
    """(block, task, subject) of one answer on ``page`` (``references``: ``references_of(spec)``)."""
    kind = page["kind"]
    if not is_format2(spec):
        block, task = FORMAT1_PAGES[kind]
        if kind == "likert":
            reference = references[(p.condition.key if p.condition else "", page["set"])]
            return block, task, f"{reference}~{page['subject']}"
        if kind == "attention":
            return block, task, page["check"]
        return block, task, answer.subject
    if "block" not in page:  # the screening page
        return kind, kind, answer.subject
    block = references[("block", page["block"])]
    if kind == "questionnaire":
        return block["key"], kind, answer.question.split("/", 1)[1]
    return answers_block(block), kind, answers_subject(block, page.get("item", ""), answer.subject)


def participant_answer_rows(
    base: dict[str, Any], spec: dict, references: dict, p: Participant, answers: Iterable, excluded: int
) -> Iterator[dict[str, Any]]:
    """One participant's rows of the answers table, in the order the answers were stored
    (``answers``: objects with page, question, measure, subject, number and text)."""
    places = {page["key"]: (i, page) for i, page in enumerate(p.plan)}
    for answer in answers:
        position, page = places[answer.page]
        block, task, subject = _locate(spec, references, p, page, answer)
        yield {
            **base,
            "block": block,
            "task": task,
            "subject": subject,
            "measure": answer.measure,
            "value": answer_number(answer.number),
            "text": answer.text,
            "page_position": position,
            "excluded": excluded,
        }
