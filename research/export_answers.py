"""The export's rows that every design has (``answers``: one row per answer; ``questionnaire``: one
row per participant) and the format 2 rows of the ``pairs`` and ``disagreements`` tables, which the
task type whose ``export_table`` each is makes (``BlockTask.export_rows``).

An answer's block and task come from the participant's stored plan (the answer's page key -> the
page): format 2 pages name their block and task; format 1 pages map to the blocks pairs, output,
disagreement, attention and screening (tasks pair_distance, fair_score, agree, attention, screening).
"""

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from participation.models import Participant
from studies.content import study_content
from studies.format2 import questionnaire_columns
from studies.models import Study
from tasks import BLOCK_TASKS
from tasks.base import FoundAnswers, answer_number

FORMAT1_PAGES = {  # page kind -> (block, task)
    "likert": ("pairs", "pair_distance"),
    "output": ("output", "fair_score"),
    "disagreement": ("disagreement", "agree"),
    "attention": ("attention", "attention"),
    "screening": ("screening", "screening"),
}


@dataclass(frozen=True)
class Source:
    """What the export read: the study's versions (pk -> Study), the chosen participants, their
    answers (columns pid, page, question, measure, set, subject, number, text) and page visits
    (pid, page, ..., seconds), and who is excluded (pk -> 0/1)."""

    slug: str
    studies: dict[int, Study]
    participants: list[Participant]
    answers: pd.DataFrame
    visits: pd.DataFrame
    excluded: dict[int, int]

    @cached_property
    def answers_of(self) -> dict[int, list]:
        """Each participant's answers as named tuples, in the order they were stored."""
        grouped: dict[int, list] = defaultdict(list)
        for row in self.answers.itertuples(index=False):
            grouped[row.pid].append(row)
        return grouped

    def base(self, p: Participant) -> dict:
        """The columns every per-participant row starts with."""
        return {
            "participant_id": str(p.pseudonym),
            "study": self.slug,
            "study_version": self.studies[p.study_id].version,
            "condition": p.condition.key if p.condition else "",
        }

    def answering(self) -> list[Participant]:
        """Participants who consented and did not withdraw (a withdrawal deletes the answers)."""
        return [p for p in self.participants if p.condition is not None and p.status != Participant.Status.WITHDRAWN]


def is_format2(spec: dict) -> bool:
    return spec.get("format", 1) == 2


def exclusion_threshold(spec: dict) -> float:
    """Failed attention checks from which a participant is excluded (format 2 without a threshold:
    never)."""
    if is_format2(spec):
        return spec.get("attention", {}).get("exclude_if_failed", math.inf)
    return spec["attention_checks"]["exclude_if_failed"]


def _references(spec: dict) -> dict[tuple[str, str], str]:
    """Format 1: (condition, stimulus set) -> the set's reference subject."""
    return {(c["key"], s["key"]): s["reference"] for c in spec["conditions"] for s in c["stimulus_sets"]}


def _locate(spec: dict, references: dict, p: Participant, page: dict, answer) -> tuple[str, str, str]:
    """(block, task, subject) of one answer on ``page`` (``references``: ``_references(spec)``)."""
    kind = page["kind"]
    if not is_format2(spec):
        block, task = FORMAT1_PAGES[kind]
        if kind == "likert":
            reference = references[(p.condition.key, page["set"])]
            return block, task, f"{reference}~{page['subject']}"
        if kind == "attention":
            return block, task, page["check"]
        return block, task, answer.subject
    block = page.get("block", kind)
    if kind == "questionnaire":
        return block, kind, answer.question.split("/", 1)[1]
    return block, kind, answer.subject or page.get("item", "")


def answer_rows(source: Source) -> list[dict]:
    """One row per stored answer, with its block, task and subject from the participant's plan."""
    grouped = source.answers_of
    references = {pk: _references(s.spec) for pk, s in source.studies.items() if not is_format2(s.spec)}
    rows = []
    for p in source.answering():
        spec = source.studies[p.study_id].spec
        places = {page["key"]: (i, page) for i, page in enumerate(p.plan)}
        base = source.base(p)
        for answer in grouped.get(p.pk, []):
            position, page = places[answer.page]
            block, task, subject = _locate(spec, references.get(p.study_id), p, page, answer)
            rows.append(
                {
                    **base,
                    "block": block,
                    "task": task,
                    "subject": subject,
                    "measure": answer.measure,
                    "value": answer_number(answer.number),
                    "text": answer.text,
                    "page_position": position,
                    "excluded": source.excluded[p.pk],
                }
            )
    return rows


def questionnaire_table(source: Source, *, fixed: list[str]) -> pd.DataFrame:
    """One row per answering participant, one column per question (``questionnaire_columns``):
    the number (number and Likert questions), the text, or the chosen options joined by "; "."""
    specs = [s.spec for s in source.studies.values()]
    columns = questionnaire_columns(specs)
    multiple = {
        (block["key"], q["key"])
        for spec in specs
        if is_format2(spec)
        for block in spec["blocks"]
        if block["type"] == "questionnaire"
        for q in block["questions"]
        if q["type"] == "multiple_choice"
    }
    grouped = source.answers_of
    rows = []
    for p in source.answering():
        row = {**source.base(p), **dict.fromkeys(columns.values())}
        for answer in grouped.get(p.pk, []):
            if answer.measure != "questionnaire":
                continue
            block, key = answer.question.split("/", 1)
            if (block, key) in multiple:
                row[columns[(block, key)]] = "; ".join(json.loads(answer.text))
            else:
                number = answer_number(answer.number)
                row[columns[(block, key)]] = answer.text if number is None else number
        rows.append(row)
    clashes = [c for c in columns.values() if c in fixed]
    if clashes:
        raise ValueError(f"questionnaire question keys {clashes} clash with the table's columns {fixed}")
    return pd.DataFrame(rows, columns=[*fixed, *columns.values()])


def task_table_rows(source: Source, table: str) -> list[dict]:
    """Format 2 rows of a derived table (``pairs``, ``disagreements``): each task type whose
    ``export_table`` it is makes them from a participant's pages of its kind (``BlockTask.export_rows``)."""
    tasks = [task for task in BLOCK_TASKS.values() if task.export_table == table]
    visits = source.visits
    seconds = dict(zip(zip(visits["pid"], visits["page"], strict=True), visits["seconds"], strict=True))
    grouped = source.answers_of
    rows = []
    for p in source.answering():
        study = source.studies[p.study_id]
        if not is_format2(study.spec):
            continue
        content = study_content(study.spec, study.spec_hash)
        found, base, excluded = FoundAnswers(grouped.get(p.pk, [])), source.base(p), source.excluded[p.pk]

        def spent(page_key: str, pk: int = p.pk) -> float:
            return seconds.get((pk, page_key), np.nan)

        for task in tasks:
            pages = [page for page in p.plan if page["kind"] == task.name]
            rows += [{**base, **row, "excluded": excluded} for row in task.export_rows(pages, found, content, spent)]
    return rows
