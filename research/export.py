"""Tidy export tables of a study. For every design: ``answers`` (one row per answer),
``participants``, ``pages`` (one row per page visit) and, when the study asks questions,
``questionnaire`` (one row per participant, one column per question). For the designs that have
them: ``pairs`` (one row per participant x pair of a pair-distance task) and ``disagreements``
(one row per yes/no "do you agree with the AI?" answer). Every column is documented in ``COLUMNS``
(and the answers' measures per task type in ``TASK_MEASURES``); ``research.codebook`` writes them
out per study.

Participants are identified by their pseudonym (a random UUID), never by the Prolific id.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from django.conf import settings
from django.db.models import Count, Max, Q, Sum

from fairness.effort import average_acceleration
from participation.caching import BoundedCache
from research import export_answers
from research.participant_samples import DEFAULT_SAMPLE, sample_filter
from surveys.models import Answer, PageVisit, Participant, Study


@dataclass(frozen=True)
class Column:
    """One exported column: its type (uuid, string, integer, number, 0/1, datetime), meaning and,
    when they do not depend on the study, its allowed values."""

    type: str
    meaning: str
    values: str = ""


COLUMNS: dict[str, dict[str, Column]] = {
    "pairs": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file the participant saw."),
        "condition": Column("string", "Between-subjects condition key."),
        "desirable": Column("0/1", "1 if the effort feature is desirable (income), 0 if undesirable (arrests)."),
        "set": Column("string", "Stimulus set key."),
        "set_position": Column("integer", "0-based position of the set in this participant's order."),
        "reference": Column("string", "Reference subject K."),
        "comparison": Column("string", "Comparison subject X."),
        "relation": Column(
            "string", "Designed relation of X to K (similar/different trend x similar/different total)."
        ),
        "pair_position": Column("integer", "0-based position of the pair within its set for this participant."),
        "d_traj": Column("integer", "Trajectory distance d_E (Likert, 1 = most similar)."),
        "d_aggr": Column("integer", "Aggregate distance d_S (Likert)."),
        "d_overall": Column("integer", "Overall input-space distance d (Likert)."),
        "overall_similar": Column(
            "0/1", "1 if d_overall is on the 'similar' side of the scale (<= similar_max), else 0."
        ),
        "prediction_similar": Column(
            "number", "BTS prediction: percent of others expected to answer 'similar' (0-100).", "0..100"
        ),
        "factor_trajectory": Column("0/1", "1 if the participant named trajectory as a factor (optional question)."),
        "factor_aggregate": Column("0/1", "1 if the participant named the aggregate as a factor."),
        "factor_other": Column("0/1", "1 if the participant named another factor."),
        "factor_text": Column("string", "The other factor, in the participant's words."),
        "k_ai_score": Column("number", "The AI model's risk score for K, in [0, 1].", "0..1"),
        "k_accepted": Column("0/1", "1 if the participant accepted the AI's score for K, 0 if they corrected it."),
        "k_score": Column("number", "The risk score the participant fixed for K, in [0, 1].", "0..1"),
        "fair_score": Column("number", "The participant's fair risk score for X, in [0, 1].", "0..1"),
        "output_distance": Column("number", "Output-space distance D = |k_score - fair_score|.", "0..1"),
        "rationale": Column("string", "The participant's rationale for X's fair score."),
        "ref_total": Column("number", "K's total of the effort feature over the years."),
        "comp_total": Column("number", "X's total."),
        "ref_trend": Column("number", "K's average cumulative acceleration A_avg (mean yearly change)."),
        "comp_trend": Column("number", "X's A_avg."),
        "seconds_traj": Column("number", "Seconds on the trajectory page."),
        "seconds_aggr": Column("number", "Seconds on the aggregate page."),
        "seconds_overall": Column("number", "Seconds on the overall page."),
        "excluded": Column("0/1", "1 if the participant failed at least the study's number of attention checks."),
    },
    "participants": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Assigned condition (blank before consent or after declining)."),
        "status": Column(
            "string",
            "arrived, declined, active, completed, timed_out, screened_out or withdrawn (answers deleted).",
            "arrived, declined, active, completed, timed_out, screened_out, withdrawn",
        ),
        "simulated": Column("0/1", "1 if created by simulate_participants."),
        "pilot": Column("0/1", "1 if brought by the researcher's pilot link (only with include_pilot)."),
        "arrived_at": Column("datetime", "First arrival (UTC, ISO 8601)."),
        "consented_at": Column("datetime", "Consent time (UTC)."),
        "completed_at": Column("datetime", "Completion time (UTC)."),
        "duration_seconds": Column("number", "completed_at - consented_at, in seconds.", ">= 0"),
        "pages_answered": Column("integer", "Pages saved so far."),
        "pages_total": Column("integer", "Pages in this participant's plan."),
        "attention_passed": Column("integer", "Attention checks passed."),
        "attention_failed": Column("integer", "Attention checks failed."),
        "excluded": Column("0/1", "1 if attention_failed >= the study's exclusion threshold."),
        "seed": Column("integer", "Seed of the participant's randomised order."),
    },
    "disagreements": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Condition key."),
        "prompt": Column("string", "Prompt key."),
        "subject": Column("string", "Decision subject shown."),
        "model_label": Column("0/1", "The AI model's binary label (1 = high risk)."),
        "model_score": Column("number", "The AI model's risk score in [0, 1].", "0..1"),
        "agree": Column("0/1", "1 if the participant agreed with the AI's label."),
        "disagreement": Column("0/1", "s = 1 - agree (1 when the participant's label differs from the model's)."),
        "participant_label": Column(
            "0/1", "The label the participant implies: model_label if agree, else 1 - model_label."
        ),
        "demo_*": Column("string", "The subject's demographics, one column each (e.g. demo_race, demo_sex)."),
        "excluded": Column("0/1", "1 if the participant is excluded by the attention checks."),
    },
    "pages": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "page": Column("string", "Page key."),
        "first_shown_at": Column("datetime", "When the page was first shown (UTC)."),
        "submitted_at": Column("datetime", "When it was saved (UTC)."),
        "seconds": Column("number", "Time spent: submitted_at - first_shown_at.", ">= 0"),
        "refusals": Column("integer", "Submissions refused by validation before it was saved."),
    },
    "answers": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file the participant saw."),
        "condition": Column("string", "Condition key."),
        "block": Column(
            "string",
            "Block of the study the answer belongs to: the block key (format 2); pairs, output, disagreement, "
            "attention or screening (format 1).",
        ),
        "task": Column(
            "string",
            "What the page asked: a task type (agree, rate, pair_comparable, pair_distance, fair_score), "
            "questionnaire, attention or screening.",
        ),
        "subject": Column(
            "string",
            "What the answer is about: a subject id, a pair 'a~b', a stimulus set, or the question key "
            "(questionnaire); for format 1 attention checks the check key.",
        ),
        "measure": Column("string", "What was measured (see the codebook's measures: agree, rating, ...)."),
        "value": Column(
            "number",
            "The numeric answer (blank for text answers); for agree 1 when the participant agrees with the AI, else 0.",
        ),
        "text": Column("string", "The text answer (choices, free text; multiple choice as a JSON list)."),
        "page_position": Column("integer", "0-based position of the answer's page in this participant's plan."),
        "excluded": Column("0/1", "1 if the participant is excluded by the attention checks."),
    },
    "questionnaire": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Condition key."),
        "<question>": Column(
            "string",
            "One column per questionnaire question (its key; 'block/key' when two blocks share a key): the "
            "chosen option, the number, the text, or the chosen options joined by '; '. Blank if unanswered.",
        ),
    },
}
TABLES = tuple(COLUMNS)
# Tables of every study; the others only of studies whose design has them (``study_tables``).
ALWAYS = ("participants", "answers", "pages")

# The measures each task writes to the answers table (``measure`` and what ``value`` / ``text`` hold).
TASK_MEASURES: dict[str, dict[str, Column]] = {
    "pair_distance": {
        "trajectory": Column("integer", "Trajectory distance d_E (Likert, 1 = most similar).", "1..points"),
        "aggregate": Column("integer", "Aggregate distance d_S (Likert).", "1..points"),
        "overall": Column("integer", "Overall input-space distance d (Likert).", "1..points"),
        "prediction": Column("number", "BTS prediction: percent of others expected to answer 'similar'.", "0..100"),
        "factors": Column("string", "Rationale factors named (text, comma-separated).", "trajectory, aggregate, other"),
        "factor_text": Column("string", "The other factor, in the participant's words (text)."),
    },
    "fair_score": {
        "k_accept": Column("0/1", "1 if the participant accepted the AI's score for the reference."),
        "k_score": Column("number", "The risk score the participant fixed for the reference.", "0..1"),
        "fair_score": Column("number", "The participant's fair risk score for a comparison subject.", "0..1"),
        "rationale": Column("string", "The rationale for that fair score (text)."),
    },
    "agree": {
        "agree": Column("0/1", "1 when the participant agrees with the AI's prediction, else 0."),
        "confidence": Column("integer", "How confident the participant is (1 = not at all).", "1..5"),
        "prediction": Column("number", "BTS prediction: percent of others expected to agree.", "0..100"),
    },
    "rate": {
        "rating": Column("number", "The rating: the Likert answer's 1-based index, or the number given.", "scale"),
        "prediction": Column("number", "BTS prediction: percent of others expected to rate positively.", "0..100"),
    },
    "pair_comparable": {
        "comparable": Column("0/1", "1 when the participant says the two should be treated alike."),
        "strength": Column("integer", "How sure the participant is (1 = not at all).", "1..5"),
        "prediction": Column("number", "BTS prediction: percent of others expected to answer 'yes'.", "0..100"),
    },
    "questionnaire": {
        "questionnaire": Column(
            "string",
            "A questionnaire answer: value for number and Likert questions (Likert: 1-based index), text for "
            "choice and text questions (multiple choice: a JSON list).",
        ),
    },
    "attention": {"attention": Column("0/1", "1 if the attention check was answered correctly (text: the choice).")},
    "screening": {"screening": Column("0/1", "1 if the screening answer is eligible (text: the choice).")},
}


@dataclass(frozen=True)
class ExportTables:
    """Every export table; ``present`` names those the study's design has (the others are empty)."""

    pairs: pd.DataFrame
    participants: pd.DataFrame
    disagreements: pd.DataFrame
    pages: pd.DataFrame
    answers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["answers"])))
    questionnaire: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["questionnaire"])))
    present: tuple[str, ...] = TABLES

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        return [(name, getattr(self, name)) for name in TABLES if name in self.present]


def tables_of(specs: list[dict]) -> tuple[str, ...]:
    """The tables a study with these versions' files exports, in ``TABLES`` order: ``ALWAYS``, plus
    pairs / disagreements / questionnaire when some version has pair-distance, agree or questionnaire
    blocks (format 1: pairs always, disagreements when a condition has prompts)."""
    has = set(ALWAYS)
    for spec in specs:
        if spec.get("format", 1) == 1:
            has.add("pairs")
            if any(c.get("disagreement_prompts") for c in spec["conditions"]):
                has.add("disagreements")
            continue
        for block in spec["blocks"]:
            if block["type"] == "questionnaire":
                has.add("questionnaire")
            elif block["type"] == "task" and block["task"] in ("pair_distance", "agree"):
                has.add("pairs" if block["task"] == "pair_distance" else "disagreements")
    return tuple(name for name in TABLES if name in has)


def study_tables(slug: str) -> tuple[str, ...]:
    """The tables the study ``slug`` exports (without building them)."""
    return tables_of(list(Study.objects.filter(slug=slug).values_list("spec", flat=True)))


def _subject_facts(study: Study) -> dict[tuple[str, str], dict]:
    """Format 1: each condition's subjects with their total and trend (A_avg)."""
    facts = {}
    for cond in study.spec["conditions"] if study.spec.get("format", 1) == 1 else []:
        series = np.array([s["series"] for s in cond["subjects"]], dtype=float)
        trends = average_acceleration(series)
        for subject, trend, row in zip(cond["subjects"], trends, series, strict=True):
            facts[(cond["key"], subject["id"])] = {**subject, "total": float(row.sum()), "trend": float(trend)}
    return facts


def _answers(participant_ids: list[int]) -> pd.DataFrame:
    rows = Answer.objects.filter(participant_id__in=participant_ids).values_list(
        "participant_id", "page", "question", "measure", "set_key", "subject_key", "number", "text"
    )
    columns = ["pid", "page", "question", "measure", "set", "subject", "number", "text"]
    return pd.DataFrame(list(rows), columns=columns)


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
    """Every table for every version of the study ``slug`` (``present``: those its design has);
    pilot participants only with ``include_pilot``. ``participants`` (a condition on ``Participant``, e.g.
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
        excluded[p.pk] = int(failed >= export_answers.exclusion_threshold(study.spec) and failed > 0)
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
        study = studies[p.study_id]
        if p.condition is None or p.status == Participant.Status.WITHDRAWN or study.spec.get("format", 1) != 1:
            continue
        cond_key = p.condition.key
        f = facts[p.study_id]
        sets = {s["key"]: s for s in next(c for c in study.spec["conditions"] if c["key"] == cond_key)["stimulus_sets"]}
        similar_max = study.spec["likert"]["similar_max"]
        for page in p.plan:
            if page["kind"] == "likert" and page["measure"] == "overall":
                sset, x = sets[page["set"]], page["subject"]
                k = sset["reference"]
                base = f"pair/{sset['key']}/{x}"
                factors = str(value(p.pk, f"{base}/factors", "text")).split(",")
                answered_factors = value(p.pk, f"{base}/factors", "text") != ""
                k_score = value(p.pk, f"output/{sset['key']}/k_score")
                fair = value(p.pk, f"output/{sset['key']}/{x}/score")
                overall = value(p.pk, f"{base}/overall")
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
                        "d_traj": value(p.pk, f"{base}/trajectory"),
                        "d_aggr": value(p.pk, f"{base}/aggregate"),
                        "d_overall": overall,
                        "overall_similar": float(overall <= similar_max) if not np.isnan(overall) else np.nan,
                        "prediction_similar": value(p.pk, f"{base}/overall/prediction"),
                        "factor_trajectory": int("trajectory" in factors) if answered_factors else 0,
                        "factor_aggregate": int("aggregate" in factors) if answered_factors else 0,
                        "factor_other": int("other" in factors) if answered_factors else 0,
                        "factor_text": value(p.pk, f"{base}/factor_text", "text"),
                        "k_ai_score": f[(cond_key, k)]["risk_score"],
                        "k_accepted": value(p.pk, f"output/{sset['key']}/k_accept"),
                        "k_score": k_score,
                        "fair_score": fair,
                        "output_distance": abs(k_score - fair),
                        "rationale": value(p.pk, f"output/{sset['key']}/{x}/rationale", "text"),
                        "ref_total": f[(cond_key, k)]["total"],
                        "comp_total": f[(cond_key, x)]["total"],
                        "ref_trend": f[(cond_key, k)]["trend"],
                        "comp_trend": f[(cond_key, x)]["trend"],
                        "seconds_traj": seconds.get((p.pk, f"{base}/trajectory"), np.nan),
                        "seconds_aggr": seconds.get((p.pk, f"{base}/aggregate"), np.nan),
                        "seconds_overall": seconds.get((p.pk, f"{base}/overall"), np.nan),
                        "excluded": excluded[p.pk],
                    }
                )
            elif page["kind"] == "disagreement":
                cond = next(c for c in study.spec["conditions"] if c["key"] == cond_key)
                prompt_subjects = {pr["key"]: pr["subject"] for pr in cond["disagreement_prompts"]}
                for key in page["prompts"]:
                    subject = f[(cond_key, prompt_subjects[key])]
                    agree = value(p.pk, f"disagreement/{key}")
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
    source = export_answers.Source(slug, studies, participants, answers, visits, excluded)
    pair_rows += export_answers.format2_pair_rows(source)
    disagreement_rows += export_answers.format2_disagreement_rows(source)
    return ExportTables(
        pairs=pd.DataFrame(pair_rows, columns=list(COLUMNS["pairs"])),
        participants=pd.DataFrame(participant_rows, columns=list(COLUMNS["participants"])),
        disagreements=_disagreements_frame(disagreement_rows, [s.spec for s in studies.values()]),
        pages=pages[list(COLUMNS["pages"])],
        answers=pd.DataFrame(export_answers.answer_rows(source), columns=list(COLUMNS["answers"])),
        questionnaire=export_answers.questionnaire_table(source, fixed=list(COLUMNS["questionnaire"])[:-1]),
        present=tables_of([s.spec for s in studies.values()]),
    )


def demo_columns(specs: list[dict]) -> dict[str, list]:
    """The disagreements table's ``demo_<key>`` columns with their values, in file order: format 1
    subjects' demographics, format 2 the groups of the subjects in pools that agree tasks draw from."""
    values: dict[str, list] = {}
    for spec in specs:
        if spec.get("format", 1) == 1:
            subjects = [s for c in spec["conditions"] for s in c["subjects"] if c.get("disagreement_prompts")]
            groups = [s.get("demographics", {}) for s in subjects]
        else:
            pools = {b["pool"] for b in spec["blocks"] if b["type"] == "task" and b["task"] == "agree"}
            groups = [s["groups"] for pool in spec["pools"] if pool["key"] in pools for s in pool["subjects"]]
        for group in groups:
            for key, value in group.items():
                values.setdefault(f"demo_{key}", [])
                if value not in values[f"demo_{key}"]:
                    values[f"demo_{key}"].append(value)
    return values


def _disagreements_frame(rows: list[dict], specs: list[dict]) -> pd.DataFrame:
    """The disagreement rows with their documented columns in order, the subjects' ``demo_*``
    columns before ``excluded``."""
    fixed = [c for c in COLUMNS["disagreements"] if c not in ("demo_*", "excluded")]
    return pd.DataFrame(rows, columns=[*fixed, *demo_columns(specs), "excluded"])


def export_bytes(tables: ExportTables) -> int:
    """The memory the export's tables hold (pandas' deep ``memory_usage``: text cells counted)."""
    return int(sum(frame.memory_usage(deep=True).sum() for _, frame in tables.items()))


# Built exports kept per worker, keyed by what they were built from (``_fingerprint``): at most
# EXPORT_CACHE_SIZE studies x samples and EXPORT_CACHE_MAX_BYTES in all (about 90 KB per participant
# of the effort demo, bench/dashboard.py, so ~1,400 participants' export fits the default 128 MB; a
# larger export is built for each request instead of being kept).
EXPORT_CACHE_SIZE = 2
_EXPORTS: BoundedCache[ExportTables] = BoundedCache(
    size=EXPORT_CACHE_SIZE, max_bytes=settings.EXPORT_CACHE_MAX_BYTES, weigh=export_bytes
)


def _fingerprint(slug: str, chosen) -> tuple:
    """What an export of these participants depends on, in four aggregate queries: the versions'
    files, the participants (how many, how far, in which status), their answers and page visits
    (answers are never changed, only added or deleted with their participant)."""
    versions = tuple(Study.objects.filter(slug=slug).order_by("pk").values_list("pk", "spec_hash"))
    people = chosen.aggregate(n=Count("pk"), last=Max("pk"), position=Sum("position"))
    statuses = tuple(chosen.order_by("status").values_list("status").annotate(n=Count("pk")))
    answers = Answer.objects.filter(participant__in=chosen).aggregate(n=Count("pk"), last=Max("pk"))
    visits = PageVisit.objects.filter(participant__in=chosen).aggregate(
        n=Count("pk"), done=Count("submitted_at"), refusals=Sum("refusals")
    )
    return versions, tuple(people.values()), statuses, tuple(answers.values()), tuple(visits.values())


def cached_export(slug: str, sample: str = DEFAULT_SAMPLE) -> ExportTables:
    """``export_tables`` of a participant sample (``research.participant_samples``), built once per
    state of the study's data and worker: paging through a table does not rebuild the export."""
    chosen = Participant.objects.filter(study__slug=slug).filter(sample_filter(sample))
    key = (slug, sample, _fingerprint(slug, chosen))
    found = _EXPORTS.get(key)
    return found if found is not None else _EXPORTS.put(key, export_tables(slug, participants=sample_filter(sample)))


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
