"""The answers table's rows, without pandas: shared by the in-memory export
(``research.export_answers.answer_rows``) and the streamed CSV (``research.export_stream``), so that
both give the same rows.

An answer's block and task come from the participant's stored plan (the answer's page key -> the
page): a page names its block and task; a converted format 1 file's blocks answer under format 1's block
names (``FORMAT1_PAGES``: pairs, output, disagreement, attention and screening, the tasks pair_distance,
fair_score, agree, attention and screening; ``tasks.questions.answers_block``).
"""

import math
from collections.abc import Iterable, Iterator
from typing import Any

from participation.models import Participant
from tasks.base import answer_number
from tasks.questions import answers_block, answers_subject

FORMAT1_PAGES = {  # format 1 page kind -> (block, task) its answers carry
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


def exclusion_threshold(spec: dict) -> float:
    """Failed attention checks from which a participant is excluded (without a threshold: never)."""
    return spec.get("attention", {}).get("exclude_if_failed", math.inf)


def is_excluded(spec: dict, failed: int) -> int:
    """1 if ``failed`` attention checks reach the study's threshold (and at least one failed), else 0."""
    return int(failed >= exclusion_threshold(spec) and failed > 0)


def references_of(spec: dict) -> dict[tuple[str, str], Any]:
    """What locating an answer needs: ("block", key) -> the block."""
    return {("block", b["key"]): b for b in spec["blocks"]}


def row_base(slug: str, version: int, p: Participant) -> dict[str, Any]:
    """The columns every per-participant row starts with."""
    return {
        "participant_id": str(p.pseudonym),
        "study": slug,
        "study_version": version,
        "condition": p.condition.key if p.condition else "",
    }


def locate(
    references: dict, kind: str, block_key: str | None, item: str, question: str, subject: str
) -> tuple[str, str, str]:
    """(block, task, subject) of an answer (its ``question`` and ``subject``) on a page of ``kind`` of the block
    ``block_key`` (None: the screening page) about ``item`` (``references``: ``references_of(spec)``)."""
    if block_key is None:  # the screening page
        return kind, kind, subject
    block = references[("block", block_key)]
    if kind == "questionnaire":
        return block["key"], kind, question.split("/", 1)[1]
    return answers_block(block), kind, answers_subject(block, item, subject)


def participant_answer_rows(
    base: dict[str, Any], spec: dict, references: dict, p: Participant, answers: Iterable, excluded: int
) -> Iterator[dict[str, Any]]:
    """One participant's rows of the answers table, in the order the answers were stored
    (``answers``: objects with page, question, measure, subject, number and text)."""
    places = {page["key"]: (i, page) for i, page in enumerate(p.plan)}
    for answer in answers:
        position, page = places[answer.page]
        block, task, subject = locate(
            references, page["kind"], page.get("block"), page.get("item", ""), answer.question, answer.subject
        )
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
