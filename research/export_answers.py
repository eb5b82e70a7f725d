"""The export's rows that every design has (``answers``: one row per answer, built by
``research.answer_rows``; ``questionnaire``: one row per participant) and the format 2 rows of the
``pairs``, ``disagreements`` and ``model_comparisons`` tables, which the task type whose ``export_table`` each is makes
(``BlockTask.export_rows``)."""

import json
from collections import defaultdict, namedtuple
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from participation.models import Participant
from research.answer_rows import locate, references_of, row_base
from studies.content import study_content
from studies.format2 import questionnaire_columns
from studies.models import Study
from tasks import BLOCK_TASKS
from tasks.base import FoundAnswers, answer_number


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
        row = namedtuple("AnswerRow", self.answers.columns)  # type: ignore[misc]
        grouped: dict[int, list] = defaultdict(list)
        # columns as Python lists first: iterating a row at a time over pandas' (Arrow) text columns is slow
        columns = [self.answers[c].tolist() for c in self.answers.columns]
        for pid, answer in zip(self.answers["pid"].tolist(), map(row._make, zip(*columns, strict=True)), strict=True):
            grouped[pid].append(answer)
        return grouped

    @cached_property
    def seconds(self) -> dict[tuple[int, str], float]:
        """(participant, page) -> the seconds from the page's first display to its submission."""
        visits = self.visits
        keys = zip(visits["pid"].tolist(), visits["page"].tolist(), strict=True)
        return dict(zip(keys, visits["seconds"].tolist(), strict=True))

    def base(self, p: Participant) -> dict:
        """The columns every per-participant row starts with."""
        return row_base(self.slug, self.studies[p.study_id].version, p)

    def answering(self) -> list[Participant]:
        """Participants who consented and did not withdraw (a withdrawal deletes the answers)."""
        return [p for p in self.participants if p.condition is not None and p.status != Participant.Status.WITHDRAWN]


def answers_table(source: Source, columns: list[str]) -> pd.DataFrame:
    """One row per stored answer (``research.answer_rows.participant_answer_rows``' rows, participant by
    participant in the order they were stored), built by columns: the answers joined to their participant and
    to their page of the participant's plan (its position; the last page of a key) on integer codes, the block,
    task and subject located once per distinct (version, page, question, subject)
    (``research.answer_rows.locate``), and the participant's columns repeated over their answers."""
    answering = source.answering()
    rank = source.answers["pid"].map({p.pk: k for k, p in enumerate(answering)})
    kept = rank.notna().to_numpy()
    order = np.argsort(rank[kept].to_numpy(), kind="stable")
    answers, who = source.answers[kept].iloc[order], rank[kept].to_numpy()[order].astype(np.int64)
    if answers.empty:
        return pd.DataFrame([], columns=columns)
    page_codes, page_keys = pd.factorize(answers["page"])
    known = {key: code for code, key in enumerate(page_keys)}
    shapes: dict[tuple[int, str, str | None, str], int] = {}  # (version, kind, block, item) -> its code
    plan_rows = [
        (k, known[page["key"]], position, shapes.setdefault(_shape(p, page), len(shapes)))
        for k, p in enumerate(answering)
        for position, page in enumerate(p.plan)
        if page["key"] in known
    ]
    plans = pd.DataFrame(plan_rows, columns=["who", "page", "page_position", "shape"])
    plans = plans.drop_duplicates(["who", "page"], keep="last")
    codes = pd.DataFrame({"who": who, "page": page_codes})
    joined = codes.merge(plans, on=["who", "page"], how="left", sort=False)
    if joined["shape"].isna().any():
        missing = page_keys[joined.loc[joined["shape"].isna(), "page"].iloc[0]]
        raise ValueError(f"an answer's page {missing!r} is not in its participant's plan")
    question_codes, questions = pd.factorize(answers["question"])
    subject_codes, subjects = pd.factorize(answers["subject"])
    combos = pd.DataFrame({"shape": joined["shape"].to_numpy(np.int64), "q": question_codes, "s": subject_codes})
    combo_codes = combos.groupby(["shape", "q", "s"], sort=False).ngroup().to_numpy()
    _, first = np.unique(combo_codes, return_index=True)
    shape_of = list(shapes)
    references = {pk: references_of(s.spec) for pk, s in source.studies.items()}
    found = []
    for sh, q, s in combos.to_numpy()[first].tolist():
        version, kind, block_key, item = shape_of[sh]
        found.append(locate(references[version], kind, block_key, item, questions[q], subjects[s]))
    located = pd.DataFrame(found, columns=["block", "task", "subject"]).iloc[combo_codes]
    people = [source.base(p) | {"excluded": source.excluded[p.pk]} for p in answering]
    numbers = answers["number"].to_numpy(dtype=float)
    built = {
        "block": located["block"].tolist(),
        "task": located["task"].tolist(),
        "subject": located["subject"].tolist(),
        "measure": answers["measure"].tolist(),
        "value": [None] * numbers.size if np.isnan(numbers).all() else numbers,
        "text": answers["text"].tolist(),
        "page_position": joined["page_position"].to_numpy(np.int64),
    }
    for name in columns:
        if name not in built:
            built[name] = np.array([person[name] for person in people], dtype=object)[who].tolist()
    return pd.DataFrame(built, columns=columns)


def _shape(p: Participant, page: dict) -> tuple[int, str, str | None, str]:
    """What locating an answer on ``page`` needs of it: (version, kind, block, item)."""
    return p.study_id, page["kind"], page.get("block"), page.get("item", "")


def questionnaire_table(source: Source, *, fixed: list[str]) -> pd.DataFrame:
    """One row per answering participant, one column per question (``questionnaire_columns``):
    the number (number and Likert questions), the text, or the chosen options joined by "; "."""
    specs = [s.spec for s in source.studies.values()]
    columns = questionnaire_columns(specs)
    multiple = {
        (block["key"], q["key"])
        for spec in specs
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


def _condition_columns(p: Participant, table: str) -> dict:
    """The participant's condition's columns of a derived table: the pairs table's ``desirable``
    (1 / 0, blank when the condition does not say)."""
    if table != "pairs":
        return {}
    desirable = p.condition.desirable if p.condition else None
    return {"desirable": np.nan if desirable is None else int(desirable)}


def task_table_rows(source: Source, table: str) -> list[dict]:
    """Format 2 rows of a derived table (``pairs``, ``disagreements``, ``model_comparisons``): each task type whose
    ``export_table`` it is makes them from a participant's pages of its kind (``BlockTask.export_rows``),
    after the participant's columns (``row_base`` and :func:`_condition_columns`)."""
    tasks = {task.name: task for task in BLOCK_TASKS.values() if task.export_table == table}
    seconds, grouped = source.seconds, source.answers_of
    rows = []
    for p in source.answering():
        pages_of: dict[str, list[dict]] = {}
        for page in p.plan:
            if page["kind"] in tasks:
                pages_of.setdefault(page["kind"], []).append(page)
        if not pages_of:  # no page of the table's task types: no row (the answers are not read)
            continue
        study = source.studies[p.study_id]
        content = study_content(study.spec, study.spec_hash)
        found, excluded = FoundAnswers(grouped.get(p.pk, [])), source.excluded[p.pk]
        base = source.base(p) | _condition_columns(p, table)

        def spent(page_key: str, pk: int = p.pk) -> float:
            return seconds.get((pk, page_key), np.nan)

        for name, task in tasks.items():
            if name in pages_of:
                found_rows = task.export_rows(pages_of[name], found, content, spent)
                rows += [{**base, **row, "excluded": excluded} for row in found_rows]
    return rows
