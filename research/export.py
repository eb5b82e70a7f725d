"""Tidy export tables of a study. For every design: ``answers`` (one row per answer),
``participants``, ``pages`` (one row per page visit) and, when the study asks questions,
``questionnaire`` (one row per participant, one column per question). For the designs that have
them: ``pairs`` (one row per participant x pair of a pair-distance task), ``disagreements``
(one row per yes/no "do you agree with the AI?" answer) and ``model_comparisons`` (one row per
"which model is fairer?" answer, with the differences the trade-off weights are fitted on). Every
column is documented in ``COLUMNS`` (and the answers' measures per task type in ``TASK_MEASURES``);
``research.codebook`` writes them out per study.

Participants are identified by their pseudonym (a random UUID), never by the Prolific id.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from django.conf import settings
from django.db.models import Count, Max, Q, Sum

from core import strict_json
from core.caching import BoundedCache
from participation.models import AdaptiveDecision, Answer, PageVisit, Participant
from participation.quotas import COUNTED
from participation.signals import COLUMNS as SIGNAL_COLUMNS
from research import export_answers
from research.answer_rows import is_excluded, neutralise
from research.participant_samples import DEFAULT_SAMPLE, sample_filter
from research.quality import excluded_by_quality
from research.quality_evidence import database_qualities
from research.tables import COLUMNS, TABLES, tables_of
from studies.models import Study
from studies.quotas import quotas
from tasks import block_task

DISAGREE = "disagreements"  # the table whose rows carry the subjects' groups as demo_* columns
LOAD_COLUMNS = ("words_shown", "inputs_shown")  # the served page's load (participation.page_load)

if TYPE_CHECKING:
    from research.codebook import TableLabels


@dataclass(frozen=True)
class ExportTables:
    """Every export table; ``present`` names those the study's design has (the others are empty)."""

    pairs: pd.DataFrame
    participants: pd.DataFrame
    disagreements: pd.DataFrame
    pages: pd.DataFrame
    answers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["answers"])))
    quality: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["quality"])))
    questionnaire: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["questionnaire"])))
    assignments: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["assignments"])))
    model_comparisons: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["model_comparisons"]))
    )
    present: tuple[str, ...] = TABLES

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        return [(name, getattr(self, name)) for name in TABLES if name in self.present]


def _answers(participant_ids: list[int]) -> pd.DataFrame:
    rows = Answer.objects.filter(participant_id__in=participant_ids).values_list(
        "participant_id", "page", "question", "measure", "set_key", "subject_key", "number", "text"
    )
    columns = ["pid", "page", "question", "measure", "set", "subject", "number", "text"]
    return pd.DataFrame(list(rows), columns=columns)


def _visits(participant_ids: list[int]) -> pd.DataFrame:
    counted = [*SIGNAL_COLUMNS, *LOAD_COLUMNS]
    columns = ["participant_id", "page", "first_shown_at", "submitted_at", "refusals", *counted]
    rows = list(PageVisit.objects.filter(participant_id__in=participant_ids).values_list(*columns))
    frame = pd.DataFrame(rows, columns=["pid", *columns[1:]]).astype({c: "Int64" for c in counted})
    frame["seconds"] = (
        pd.to_datetime(frame["submitted_at"]) - pd.to_datetime(frame["first_shown_at"])
    ).dt.total_seconds()
    for i, column in ((2, "first_shown_at"), (3, "submitted_at")):  # the pages table's text, from the rows
        frame[f"{column}_text"] = [_iso(row[i]) for row in rows]  # "": shown but not (yet) submitted
    return frame


def _quota_groups(participants: list, studies: dict, answers: pd.DataFrame) -> dict[int, str]:
    """Participant -> the quota groups they are counted in (``question = group``, joined by ';';
    ``participation.quotas``: active, timed out or completed non-pilots; a multiple-choice answer
    counts in each option chosen), from their version's quotas."""
    counted = {p.pk: studies[p.study_id].spec for p in participants if p.status in COUNTED and not p.pilot}
    asked = {pk: quotas(spec) for pk, spec in counted.items() if spec.get("quotas")}
    found: dict[int, list[str]] = {}
    wanted = answers[answers["pid"].isin(list(asked))]
    for pid, question, number, text in zip(
        wanted["pid"], wanted["question"], wanted["number"], wanted["text"], strict=True
    ):
        for quota in asked[pid]:
            if quota.question == question:
                groups = quota.groups_of(text, None if pd.isna(number) else float(number))
                found.setdefault(pid, []).extend(f"{quota.label} = {group}" for group in groups)
    return {pid: ";".join(groups) for pid, groups in found.items()}


def _iso(value) -> str:
    return value.isoformat() if value is not None else ""


def export_tables(
    slug: str, *, include_pilot: bool = False, participants: Q | None = None, quality_exclusion: str = "study"
) -> ExportTables:
    """Every table for every version of the study ``slug`` (``present``: those its design has);
    pilot participants only with ``include_pilot``. ``participants`` (a condition on ``Participant``, e.g.
    ``research.participant_samples.sample_filter``) chooses the participants instead. ``quality_exclusion``
    (``research.quality.EXCLUSION_MODES``) chooses which quality flags set ``excluded``: the study's
    ``exclude_if`` (default), none or any (the analyses' sensitivity to flagged participants)."""
    studies = {s.pk: s for s in Study.objects.filter(slug=slug)}
    where = participants
    if where is None:
        where = Q() if include_pilot else Q(pilot=False)
    chosen = Participant.objects.filter(study_id__in=studies).filter(where)
    exported = list(chosen.select_related("condition").order_by("arrived_at", "pk"))
    pids = [p.pk for p in exported]
    answers = _answers(pids)
    visits = _visits(pids)
    attention = answers[answers["measure"] == "attention"].groupby("pid")["number"].agg(["sum", "count"])
    passed_of, checks_of = attention["sum"].to_dict(), attention["count"].to_dict()

    qualities = database_qualities(studies.values(), chosen)
    quota_groups = _quota_groups(exported, studies, answers)
    participant_rows, excluded, quality_rows = [], {}, []
    for p in exported:
        study = studies[p.study_id]
        passed = int(passed_of.get(p.pk, 0))
        failed = int(checks_of.get(p.pk, 0)) - passed
        quality = qualities[p.pk][0]
        excluded[p.pk] = int(
            is_excluded(study.spec, failed) or excluded_by_quality(quality, study.spec, quality_exclusion)
        )
        quality_rows += [
            {
                "participant_id": str(p.pseudonym),
                "study": slug,
                "rule": r.rule,
                "source": r.source,
                "measured": r.value,
                "threshold": r.threshold,
                "flagged": pd.NA if r.flagged is None else int(r.flagged),
            }
            for r in quality.rules
        ]
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
                "language": p.language,
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
                "quality_score": np.nan if quality.score is None else quality.score,
                "quality_flags": ";".join(quality.flags),
                "quota_group": quota_groups.get(p.pk, ""),
                "quota_screened_out": p.quota_screened_out,
            }
        )

    pseudonyms = {p.pk: str(p.pseudonym) for p in exported}
    pages = visits.assign(
        participant_id=visits["pid"].map(pseudonyms),
        study=slug,
        first_shown_at=visits["first_shown_at_text"],
        submitted_at=visits["submitted_at_text"],
    )
    source = export_answers.Source(slug, studies, exported, answers, visits, excluded)
    pair_rows = export_answers.task_table_rows(source, "pairs")
    disagreement_rows = export_answers.task_table_rows(source, DISAGREE)
    return ExportTables(
        pairs=pd.DataFrame(pair_rows, columns=list(COLUMNS["pairs"])),
        participants=pd.DataFrame(participant_rows, columns=list(COLUMNS["participants"])),
        disagreements=_disagreements_frame(disagreement_rows, [s.spec for s in studies.values()]),
        pages=pages[list(COLUMNS["pages"])],
        answers=export_answers.answers_table(source, list(COLUMNS["answers"])),
        questionnaire=export_answers.questionnaire_table(source, fixed=list(COLUMNS["questionnaire"])[:-1]),
        quality=pd.DataFrame(quality_rows, columns=list(COLUMNS["quality"])).astype({"flagged": "Int64"}),
        assignments=_assignments(slug, exported, studies),
        model_comparisons=pd.DataFrame(
            export_answers.task_table_rows(source, "model_comparisons"), columns=list(COLUMNS["model_comparisons"])
        ).astype({"n_subjects": "Int64", "strength": "Int64"}),
        present=tables_of([s.spec for s in studies.values()]),
    )


def _assignments(slug: str, participants: list[Participant], studies: dict[int, Study]) -> pd.DataFrame:
    """The adaptive decisions of the exported participants (``participation.adaptive``), in decision order."""
    pseudonyms = {p.pk: str(p.pseudonym) for p in participants}
    decisions = (
        AdaptiveDecision.objects.filter(participant_id__in=list(pseudonyms))
        .select_related("fit")
        .order_by("study_id", "block", "stripe", "sequence")
    )
    rows = [
        {
            "participant_id": pseudonyms[d.participant_id],
            "study": slug,
            "study_version": studies[d.study_id].version,
            "block": d.block,
            "slot": d.slot,
            "stripe": d.stripe,
            "sequence": d.sequence,
            "fit_version": d.fit.version if d.fit else None,
            "item": d.item,
            "score": next(score for item, score in d.candidates if item == d.item),
            "n_candidates": len(d.candidates),
            "candidates": strict_json.dumps(d.candidates),
            "decided_at": _iso(d.created_at),
            "seconds": d.seconds,
        }
        for d in decisions
        if d.participant_id is not None  # always: the filter above
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS["assignments"])).astype({"fit_version": "Int64"})


def demo_columns(specs: list[dict]) -> dict[str, list]:
    """The disagreements table's ``demo_<key>`` columns with their values, in file order, from the
    subjects of the conditions with agree blocks: the groups of the subjects in the pools that those
    conditions' task blocks draw from (so a converted format 1 file lists its subjects' demographics in
    format 1's order)."""
    values: dict[str, list] = {}
    for spec in specs:
        tasks = [b for b in spec["blocks"] if b["type"] == "task"]
        asked = {c for b in tasks if block_task(b).export_table == DISAGREE for c in b["conditions"]}
        pools = {b["pool"] for b in tasks if asked.intersection(b["conditions"])}
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


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Prefix text cells and column names that a spreadsheet would run as a formula with an
    apostrophe (CSV only)."""
    out = frame.copy()
    out.columns = [neutralise(c) for c in out.columns]
    for i in range(out.shape[1]):  # by position: two names may coincide
        column = out.iloc[:, i]
        if column.dtype == object or pd.api.types.is_string_dtype(column):
            out.isetitem(i, column.map(neutralise))
    return out


def table_to_csv(frame: pd.DataFrame) -> str:
    return neutralise_formulas(frame).to_csv(index=False)


def table_to_json(frame: pd.DataFrame) -> str:
    return frame.to_json(orient="records", force_ascii=False, indent=None)


def table_records(frame: pd.DataFrame) -> list[dict]:
    """The table as JSON-ready records (NaN -> None, timestamps as ISO strings), as in the JSON export."""
    return json.loads(table_to_json(frame))


def write_exports(
    tables: ExportTables, out_dir: Path, fmt: str, labels: "dict[str, TableLabels] | None" = None
) -> list[Path]:
    """Write each table as ``<table>.<fmt>``: csv, json, or (typed and labelled by ``labels``,
    ``research.codebook.export_labels``) parquet, sav or dta; returns the paths written."""
    from research.export_formats import FORMATS, write_table

    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt not in ("csv", "json") and labels is None:
        raise ValueError(f"a {fmt} export needs the codebook's labels (research.codebook.export_labels)")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        path = out_dir / f"{name}.{fmt}"
        if fmt in ("csv", "json"):
            path.write_text(table_to_csv(frame) if fmt == "csv" else table_to_json(frame), encoding="utf-8")
        else:
            if labels is None:  # unreachable: checked before anything is written
                raise AssertionError(f"a {fmt} export without labels")
            write_table(frame, path, fmt, labels[name])
        written.append(path)
    return written
