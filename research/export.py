"""Tidy export tables (one row per participant x pair, per participant, per disagreement answer,
per page visit). Every column is documented in ``COLUMNS`` and in the README.

Participants are identified by their pseudonym (a random UUID), never by the Prolific id.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from django.db.models import Q

from fairness.effort import average_acceleration
from participation.questions import disagreement_question, output_question, pair_question, prediction_question
from surveys.models import LIKERT_MEASURES, Answer, PageVisit, Participant, Study

COLUMNS: dict[str, dict[str, str]] = {
    "pairs": {
        "participant_id": "Pseudonymous participant id (UUID).",
        "study": "Study slug.",
        "study_version": "Version of the study file the participant saw.",
        "condition": "Between-subjects condition key.",
        "desirable": "1 if the effort feature is desirable (income), 0 if undesirable (arrests).",
        "set": "Stimulus set key.",
        "set_position": "0-based position of the set in this participant's order.",
        "reference": "Reference subject K.",
        "comparison": "Comparison subject X.",
        "relation": "Designed relation of X to K (similar/different trend x similar/different total).",
        "pair_position": "0-based position of the pair within its set for this participant.",
        "d_traj": "Trajectory distance d_E (Likert, 1 = most similar).",
        "d_aggr": "Aggregate distance d_S (Likert).",
        "d_overall": "Overall input-space distance d (Likert).",
        "overall_similar": "1 if d_overall is on the 'similar' side of the scale (<= similar_max), else 0.",
        "prediction_similar": "BTS prediction: percent of others expected to answer 'similar' (0-100).",
        "factor_trajectory": "1 if the participant named trajectory as a factor (optional question).",
        "factor_aggregate": "1 if the participant named the aggregate as a factor.",
        "factor_other": "1 if the participant named another factor.",
        "factor_text": "The other factor, in the participant's words.",
        "k_ai_score": "The AI model's risk score for K, in [0, 1].",
        "k_accepted": "1 if the participant accepted the AI's score for K, 0 if they corrected it.",
        "k_score": "The risk score the participant fixed for K, in [0, 1].",
        "fair_score": "The participant's fair risk score for X, in [0, 1].",
        "output_distance": "Output-space distance D = |k_score - fair_score|.",
        "rationale": "The participant's rationale for X's fair score.",
        "ref_total": "K's total of the effort feature over the years.",
        "comp_total": "X's total.",
        "ref_trend": "K's average cumulative acceleration A_avg (mean yearly change).",
        "comp_trend": "X's A_avg.",
        "seconds_traj": "Seconds on the trajectory page.",
        "seconds_aggr": "Seconds on the aggregate page.",
        "seconds_overall": "Seconds on the overall page.",
        "excluded": "1 if the participant failed at least the study's number of attention checks.",
    },
    "participants": {
        "participant_id": "Pseudonymous participant id (UUID).",
        "study": "Study slug.",
        "study_version": "Version of the study file.",
        "condition": "Assigned condition (blank before consent or after declining).",
        "status": "arrived, declined, active, completed, timed_out, screened_out or withdrawn (answers deleted).",
        "simulated": "1 if created by simulate_participants.",
        "pilot": "1 if brought by the researcher's pilot link (only with include_pilot).",
        "arrived_at": "First arrival (UTC, ISO 8601).",
        "consented_at": "Consent time (UTC).",
        "completed_at": "Completion time (UTC).",
        "duration_seconds": "completed_at - consented_at, in seconds.",
        "pages_answered": "Pages saved so far.",
        "pages_total": "Pages in this participant's plan.",
        "attention_passed": "Attention checks passed.",
        "attention_failed": "Attention checks failed.",
        "excluded": "1 if attention_failed >= the study's exclusion threshold.",
        "seed": "Seed of the participant's randomised order.",
    },
    "disagreements": {
        "participant_id": "Pseudonymous participant id (UUID).",
        "study": "Study slug.",
        "study_version": "Version of the study file.",
        "condition": "Condition key.",
        "prompt": "Prompt key.",
        "subject": "Decision subject shown.",
        "model_label": "The AI model's binary label (1 = high risk).",
        "model_score": "The AI model's risk score in [0, 1].",
        "agree": "1 if the participant agreed with the AI's label.",
        "disagreement": "s = 1 - agree (1 when the participant's label differs from the model's).",
        "participant_label": "The label the participant implies: model_label if agree, else 1 - model_label.",
        "demo_*": "The subject's demographics, one column each (e.g. demo_race, demo_sex).",
        "excluded": "1 if the participant is excluded by the attention checks.",
    },
    "pages": {
        "participant_id": "Pseudonymous participant id (UUID).",
        "study": "Study slug.",
        "page": "Page key.",
        "first_shown_at": "When the page was first shown (UTC).",
        "submitted_at": "When it was saved (UTC).",
        "seconds": "Time spent: submitted_at - first_shown_at.",
        "refusals": "Submissions refused by validation before it was saved.",
    },
}
TABLES = tuple(COLUMNS)


@dataclass(frozen=True)
class ExportTables:
    pairs: pd.DataFrame
    participants: pd.DataFrame
    disagreements: pd.DataFrame
    pages: pd.DataFrame

    def items(self):
        return [(name, getattr(self, name)) for name in TABLES]


def _subject_facts(study: Study) -> dict[tuple[str, str], dict]:
    facts = {}
    for cond in study.spec["conditions"]:
        series = np.array([s["series"] for s in cond["subjects"]], dtype=float)
        trends = average_acceleration(series)
        for subject, trend, row in zip(cond["subjects"], trends, series, strict=True):
            facts[(cond["key"], subject["id"])] = {**subject, "total": float(row.sum()), "trend": float(trend)}
    return facts


def _answers(participant_ids: list[int]) -> pd.DataFrame:
    rows = Answer.objects.filter(participant_id__in=participant_ids).values_list(
        "participant_id", "question", "measure", "set_key", "subject_key", "number", "text"
    )
    return pd.DataFrame(list(rows), columns=["pid", "question", "measure", "set", "subject", "number", "text"])


def _visits(participant_ids: list[int]) -> pd.DataFrame:
    rows = PageVisit.objects.filter(participant_id__in=participant_ids).values_list(
        "participant_id", "page", "first_shown_at", "submitted_at", "refusals"
    )
    frame = pd.DataFrame(list(rows), columns=["pid", "page", "first_shown_at", "submitted_at", "refusals"])
    frame["seconds"] = (
        pd.to_datetime(frame["submitted_at"]) - pd.to_datetime(frame["first_shown_at"])
    ).dt.total_seconds()
    return frame


def _iso(value) -> str:
    return value.isoformat() if value is not None else ""


def export_tables(slug: str, *, include_pilot: bool = False, participants: Q | None = None) -> ExportTables:
    """All four tables for every version of the study ``slug``; pilot participants only with
    ``include_pilot``. ``participants`` (a condition on ``Participant``, e.g.
    ``research.participant_samples.sample_filter``) chooses the participants instead."""
    studies = {s.pk: s for s in Study.objects.filter(slug=slug)}
    if participants is None:
        participants = Q() if include_pilot else Q(pilot=False)
    chosen = Participant.objects.filter(study_id__in=studies).filter(participants)
    participants = list(chosen.select_related("condition").order_by("arrived_at", "pk"))
    pids = [p.pk for p in participants]
    answers = _answers(pids)
    visits = _visits(pids)
    attention = answers[answers["measure"] == "attention"].groupby("pid")["number"].agg(["sum", "count"])
    facts = {pk: _subject_facts(s) for pk, s in studies.items()}

    participant_rows, excluded = [], {}
    for p in participants:
        study = studies[p.study_id]
        passed = int(attention["sum"].get(p.pk, 0))
        failed = int(attention["count"].get(p.pk, 0)) - passed
        excluded[p.pk] = int(failed >= study.spec["attention_checks"]["exclude_if_failed"] and failed > 0)
        duration = (p.completed_at - p.consented_at).total_seconds() if p.completed_at and p.consented_at else np.nan
        participant_rows.append(
            {
                "participant_id": str(p.pseudonym),
                "study": slug,
                "study_version": study.version,
                "condition": p.condition.key if p.condition else "",
                "status": p.status,
                "simulated": int(p.simulated),
                "pilot": int(p.pilot),
                "arrived_at": _iso(p.arrived_at),
                "consented_at": _iso(p.consented_at),
                "completed_at": _iso(p.completed_at),
                "duration_seconds": duration,
                "pages_answered": p.position,
                "pages_total": len(p.plan),
                "attention_passed": passed,
                "attention_failed": failed,
                "excluded": excluded[p.pk],
                "seed": p.seed,
            }
        )

    answer_keys = zip(answers["pid"], answers["question"], strict=True)
    lookup = dict(zip(answer_keys, zip(answers["number"], answers["text"], strict=True), strict=True))
    seconds = dict(zip(zip(visits["pid"], visits["page"], strict=True), visits["seconds"], strict=True))

    def value(pid: int, question: str, column: str = "number"):
        found = lookup.get((pid, question))
        if found is None:
            return np.nan if column == "number" else ""
        return found[0] if column == "number" else found[1]

    pair_rows, disagreement_rows = [], []
    for p in participants:
        if p.condition is None or p.status == Participant.Status.WITHDRAWN:
            continue
        study = studies[p.study_id]
        cond_key = p.condition.key
        f = facts[p.study_id]
        sets = {s["key"]: s for s in next(c for c in study.spec["conditions"] if c["key"] == cond_key)["stimulus_sets"]}
        similar_max = study.spec["likert"]["similar_max"]
        for page in p.plan:
            if page["kind"] == "likert" and page["measure"] == "overall":
                sset, x = sets[page["set"]], page["subject"]
                k = sset["reference"]
                pair = {m: pair_question(sset["key"], x, m) for m in (*LIKERT_MEASURES, "factors", "factor_text")}
                factors = str(value(p.pk, pair["factors"], "text")).split(",")
                answered_factors = value(p.pk, pair["factors"], "text") != ""
                k_score = value(p.pk, output_question(sset["key"], None, "k_score"))
                fair = value(p.pk, output_question(sset["key"], x, "score"))
                overall = value(p.pk, pair["overall"])
                pair_rows.append(
                    {
                        "participant_id": str(p.pseudonym),
                        "study": slug,
                        "study_version": study.version,
                        "condition": cond_key,
                        "desirable": int(p.condition.desirable),
                        "set": sset["key"],
                        "set_position": page["set_position"],
                        "reference": k,
                        "comparison": x,
                        "relation": next(c["relation"] for c in sset["comparisons"] if c["subject"] == x),
                        "pair_position": page["pair_position"],
                        "d_traj": value(p.pk, pair["trajectory"]),
                        "d_aggr": value(p.pk, pair["aggregate"]),
                        "d_overall": overall,
                        "overall_similar": float(overall <= similar_max) if not np.isnan(overall) else np.nan,
                        "prediction_similar": value(p.pk, prediction_question(pair["overall"])),
                        "factor_trajectory": int("trajectory" in factors) if answered_factors else 0,
                        "factor_aggregate": int("aggregate" in factors) if answered_factors else 0,
                        "factor_other": int("other" in factors) if answered_factors else 0,
                        "factor_text": value(p.pk, pair["factor_text"], "text"),
                        "k_ai_score": f[(cond_key, k)]["risk_score"],
                        "k_accepted": value(p.pk, output_question(sset["key"], None, "k_accept")),
                        "k_score": k_score,
                        "fair_score": fair,
                        "output_distance": abs(k_score - fair),
                        "rationale": value(p.pk, output_question(sset["key"], x, "rationale"), "text"),
                        "ref_total": f[(cond_key, k)]["total"],
                        "comp_total": f[(cond_key, x)]["total"],
                        "ref_trend": f[(cond_key, k)]["trend"],
                        "comp_trend": f[(cond_key, x)]["trend"],
                        # a pair page's key is its Likert question's key
                        "seconds_traj": seconds.get((p.pk, pair["trajectory"]), np.nan),
                        "seconds_aggr": seconds.get((p.pk, pair["aggregate"]), np.nan),
                        "seconds_overall": seconds.get((p.pk, pair["overall"]), np.nan),
                        "excluded": excluded[p.pk],
                    }
                )
            elif page["kind"] == "disagreement":
                cond = next(c for c in study.spec["conditions"] if c["key"] == cond_key)
                prompt_subjects = {pr["key"]: pr["subject"] for pr in cond["disagreement_prompts"]}
                for key in page["prompts"]:
                    subject = f[(cond_key, prompt_subjects[key])]
                    agree = value(p.pk, disagreement_question(key))
                    if np.isnan(agree):
                        continue
                    disagreement_rows.append(
                        {
                            "participant_id": str(p.pseudonym),
                            "study": slug,
                            "study_version": study.version,
                            "condition": cond_key,
                            "prompt": key,
                            "subject": subject["id"],
                            "model_label": subject["label"],
                            "model_score": subject["risk_score"],
                            "agree": int(agree),
                            "disagreement": 1 - int(agree),
                            "participant_label": subject["label"] if agree == 1 else 1 - subject["label"],
                            **{f"demo_{k}": v for k, v in subject.get("demographics", {}).items()},
                            "excluded": excluded[p.pk],
                        }
                    )
    pseudonyms = {p.pk: str(p.pseudonym) for p in participants}
    pages = visits.assign(participant_id=visits["pid"].map(pseudonyms), study=slug)
    for column in ("first_shown_at", "submitted_at"):
        pages[column] = pages[column].map(_iso)
    return ExportTables(
        pairs=pd.DataFrame(pair_rows, columns=list(COLUMNS["pairs"])),
        participants=pd.DataFrame(participant_rows, columns=list(COLUMNS["participants"])),
        disagreements=pd.DataFrame(disagreement_rows),
        pages=pages[list(COLUMNS["pages"])],
    )


_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _neutralise(value: object) -> object:
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES) else value


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Prefix text cells and column names that a spreadsheet would run as a formula with an
    apostrophe (CSV only)."""
    out = frame.copy()
    out.columns = [_neutralise(c) for c in out.columns]
    for i in range(out.shape[1]):  # by position: two names may coincide
        column = out.iloc[:, i]
        if column.dtype == object or pd.api.types.is_string_dtype(column):
            out.isetitem(i, column.map(_neutralise))
    return out


def table_to_csv(frame: pd.DataFrame) -> str:
    return neutralise_formulas(frame).to_csv(index=False)


def table_to_json(frame: pd.DataFrame) -> str:
    return frame.to_json(orient="records", force_ascii=False, indent=None)


def table_records(frame: pd.DataFrame) -> list[dict]:
    """The table as JSON-ready records (NaN -> None, timestamps as ISO strings), as in the JSON export."""
    return json.loads(table_to_json(frame))


def write_exports(tables: ExportTables, out_dir: Path, fmt: str) -> list[Path]:
    """Write each table as ``<table>.csv`` or ``<table>.json``; returns the paths written."""
    if fmt not in ("csv", "json"):
        raise ValueError(f"format must be csv or json, not {fmt!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        path = out_dir / f"{name}.{fmt}"
        path.write_text(table_to_csv(frame) if fmt == "csv" else table_to_json(frame), encoding="utf-8")
        written.append(path)
    return written
