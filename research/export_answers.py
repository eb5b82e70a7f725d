"""The export's rows that every design has (``answers``: one row per answer, built by
``research.answer_rows``; ``questionnaire``: one row per participant) and the format 2 tasks' rows
of the ``pairs`` and ``disagreements`` tables."""

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from fairness.effort import average_acceleration
from participation.models import Participant
from research.answer_rows import is_format2, number_or_none, participant_answer_rows, references_of, row_base
from studies.content import StudyContent, study_content
from studies.format2 import questionnaire_columns
from studies.models import Study

PAIR_COLUMNS = {"trajectory": "d_traj", "aggregate": "d_aggr", "overall": "d_overall"}
SECONDS_COLUMNS = {"trajectory": "seconds_traj", "aggregate": "seconds_aggr", "overall": "seconds_overall"}


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
        return row_base(self.slug, self.studies[p.study_id].version, p)

    def answering(self) -> list[Participant]:
        """Participants who consented and did not withdraw (a withdrawal deletes the answers)."""
        return [p for p in self.participants if p.condition is not None and p.status != Participant.Status.WITHDRAWN]


def answer_rows(source: Source) -> list[dict]:
    """One row per stored answer, with its block, task and subject from the participant's plan."""
    grouped = source.answers_of
    references = {pk: references_of(s.spec) for pk, s in source.studies.items()}
    rows = []
    for p in source.answering():
        spec = source.studies[p.study_id].spec
        answers = grouped.get(p.pk, [])
        rows += participant_answer_rows(source.base(p), spec, references[p.study_id], p, answers, source.excluded[p.pk])
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
                number = number_or_none(answer.number)
                row[columns[(block, key)]] = answer.text if number is None else number
        rows.append(row)
    clashes = [c for c in columns.values() if c in fixed]
    if clashes:
        raise ValueError(f"questionnaire question keys {clashes} clash with the table's columns {fixed}")
    return pd.DataFrame(rows, columns=[*fixed, *columns.values()])


def format2_disagreement_rows(source: Source) -> list[dict]:
    """Format 2 ``agree`` answers as rows of the disagreements table: ``prompt`` is the page key,
    ``demo_*`` the subject's group columns, ``model_label`` / ``model_score`` the block's model."""
    grouped = source.answers_of
    rows = []
    for p in source.answering():
        study = source.studies[p.study_id]
        if not is_format2(study.spec):
            continue
        content = study_content(study.spec, study.spec_hash)
        pages = {page["key"]: page for page in p.plan if page["kind"] == "agree"}
        for answer in grouped.get(p.pk, []):
            page = pages.get(answer.page)
            if page is None or answer.measure != "agree":
                continue
            block = content.blocks[page["block"]]
            subject = content.subject(block["pool"], page["item"])
            output = content.model_output(block["pool"], page["item"], block["model"])
            label, agree = int(output["label"]), int(answer.number)
            rows.append(
                {
                    **source.base(p),
                    "prompt": page["key"],
                    "subject": page["item"],
                    "model_label": label,
                    "model_score": output.get("score", np.nan),
                    "agree": agree,
                    "disagreement": 1 - agree,
                    "participant_label": label if agree == 1 else 1 - label,
                    **{f"demo_{k}": v for k, v in subject["groups"].items()},
                    "excluded": source.excluded[p.pk],
                }
            )
    return rows


def _series_facts(subject: dict) -> tuple[float, float]:
    """A subject's total and trend (A_avg) of its series; NaN without a series."""
    if not subject.get("series"):
        return np.nan, np.nan
    series = np.asarray(subject["series"], dtype=float)
    return float(series.sum()), float(average_acceleration(series[None, :])[0])


def _fair_score_source(content: StudyContent, pool: str, a: str, b: str) -> tuple[str, dict] | None:
    """The first fair_score block over ``pool`` with a set whose reference is ``a`` and whose
    comparisons include ``b``: (block key, set)."""
    for block in content.blocks.values():
        if block["type"] == "task" and block["task"] == "fair_score" and block["pool"] == pool:
            for sset in block["sets"]:
                if sset["reference"] == a and b in sset["comparisons"]:
                    return block["key"], sset
    return None


class _Found:
    """One participant's answers by (page, measure) and by (page, measure, subject)."""

    def __init__(self, answers: list) -> None:
        self.answers: dict[tuple[str, str, str], object] = {}
        for answer in answers:
            self.answers.setdefault((answer.page, answer.measure, ""), answer)
            self.answers[(answer.page, answer.measure, answer.subject)] = answer

    def number(self, page_key: str, measure: str, subject: str = "") -> float:
        answer = self.answers.get((page_key, measure, subject))
        value = None if answer is None else number_or_none(answer.number)
        return np.nan if value is None else value

    def text(self, page_key: str, measure: str, subject: str = "") -> str:
        answer = self.answers.get((page_key, measure, subject))
        return "" if answer is None else answer.text


def format2_pair_rows(source: Source) -> list[dict]:
    """Format 2 ``pair_distance`` answers as rows of the pairs table, one per participant x block x
    pair: ``set`` is the block, ``set_position`` its place among the participant's pair-distance
    blocks, ``pair_position`` the pair's place in the block, measures not asked are blank. The
    output-space columns come from a fair_score block over the same pool whose set has reference a
    and comparison b (blank without one); ``desirable`` is blank (format 2 conditions do not say)."""
    grouped = source.answers_of
    visits = source.visits
    seconds = dict(zip(zip(visits["pid"], visits["page"], strict=True), visits["seconds"], strict=True))
    rows = []
    for p in source.answering():
        study = source.studies[p.study_id]
        if not is_format2(study.spec):
            continue
        content = study_content(study.spec, study.spec_hash)
        found = _Found(grouped.get(p.pk, []))
        number, text = found.number, found.text
        items: dict[tuple[str, str], dict] = {}
        for page in p.plan:
            if page["kind"] == "pair_distance":
                items.setdefault((page["block"], page["item"]), page)
        block_order = list(dict.fromkeys(block for block, _ in items))
        for (block_key, item), page in items.items():
            block, pair = content.blocks[block_key], content.pair(block_key, item)
            a, b, similar_max = pair["a"], pair["b"], block["likert"]["similar_max"]
            pages = {m: f"{block_key}/{item}/{m}" for m in PAIR_COLUMNS}
            overall = number(pages["overall"], "overall")
            factors = text(pages["overall"], "factors").split(",")
            fair = _fair_score_source(content, block["pool"], a, b)
            fair_page = f"{fair[0]}/{fair[1]['key']}" if fair else ""
            k_ai = content.model_output(block["pool"], a, content.blocks[fair[0]]["model"]) if fair else {}
            k_score, fair_score = number(fair_page, "k_score"), number(fair_page, "fair_score", b)
            reference, comparison = content.subject(block["pool"], a), content.subject(block["pool"], b)
            (ref_total, ref_trend), (comp_total, comp_trend) = _series_facts(reference), _series_facts(comparison)
            rows.append(
                {
                    **source.base(p),
                    "desirable": np.nan,
                    "set": block_key,
                    "set_position": block_order.index(block_key),
                    "reference": a,
                    "comparison": b,
                    "relation": pair.get("relation", ""),
                    "pair_position": page.get("position", np.nan),
                    **{column: number(pages[m], m) for m, column in PAIR_COLUMNS.items()},
                    "overall_similar": np.nan if np.isnan(overall) else float(overall <= similar_max),
                    "prediction_similar": number(pages["overall"], "prediction"),
                    "factor_trajectory": int("trajectory" in factors),
                    "factor_aggregate": int("aggregate" in factors),
                    "factor_other": int("other" in factors),
                    "factor_text": text(pages["overall"], "factor_text"),
                    "k_ai_score": k_ai.get("score", np.nan),
                    "k_accepted": number(fair_page, "k_accept"),
                    "k_score": k_score,
                    "fair_score": fair_score,
                    "output_distance": abs(k_score - fair_score),
                    "rationale": text(fair_page, "rationale", b),
                    "ref_total": ref_total,
                    "comp_total": comp_total,
                    "ref_trend": ref_trend,
                    "comp_trend": comp_trend,
                    **{column: seconds.get((p.pk, pages[m]), np.nan) for m, column in SECONDS_COLUMNS.items()},
                    "excluded": source.excluded[p.pk],
                }
            )
    return rows
