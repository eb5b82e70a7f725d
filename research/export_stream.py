"""The answers table as a streamed CSV: rows written as they are read, a batch of participants at a
time (their plans and, through a server-side cursor on PostgreSQL, their answers), so a web worker
holds one batch, never the table (``bench/export_stream.py`` measures its memory on 10,000
participants x 100 answers). The same rows and cells as ``research.export`` builds in memory
(``research.answer_rows``), without pandas."""

import csv
from collections import defaultdict
from collections.abc import Iterator
from typing import NamedTuple

from django.db.models import Q
from django.http import StreamingHttpResponse

from participation.models import Answer, Participant
from research.answer_rows import is_excluded, neutralise, participant_answer_rows, references_of, row_base
from research.quality import excluded_by_quality
from research.quality_evidence import database_qualities, study_comparisons
from research.tables import COLUMNS
from studies.models import Study

STREAMED = ("answers",)  # the tables whose CSV is streamed (one row per answer: the large one)
BATCH = 250  # participants per batch
CURSOR_ROWS = 2000  # rows fetched from the server-side cursor at a time


class StoredAnswer(NamedTuple):
    page: str
    question: str
    measure: str
    subject: str
    number: float | None
    text: str


class _Echo:
    """A file whose ``write`` returns the line (so ``csv.writer`` formats without buffering)."""

    def write(self, line: str) -> str:
        return line


def answers_csv_lines(slug: str, participants: Q, *, batch: int = BATCH) -> Iterator[str]:
    """The answers table of the chosen participants (a condition on ``Participant``, e.g.
    ``research.participant_samples.sample_filter``) as CSV text, header first, one chunk per batch of
    participants, cells neutralised for spreadsheets as in every CSV export."""
    studies = {s.pk: s for s in Study.objects.filter(slug=slug)}
    references = {pk: references_of(s.spec) for pk, s in studies.items()}
    writer = csv.writer(_Echo(), lineterminator="\n")
    columns = list(COLUMNS["answers"])
    yield writer.writerow([neutralise(c) for c in columns])
    answering = (
        Participant.objects.filter(study_id__in=studies)
        .filter(participants)
        .exclude(condition=None)
        .exclude(status=Participant.Status.WITHDRAWN)
    )
    pks = list(answering.order_by("arrived_at", "pk").values_list("pk", flat=True))
    comparisons = study_comparisons(list(studies.values()), answering)
    for start in range(0, len(pks), batch):
        ids = pks[start : start + batch]
        people = (
            Participant.objects.select_related("condition")
            .only("pk", "pseudonym", "study_id", "plan", "condition__key")
            .in_bulk(ids)
        )
        grouped: dict[int, list[StoredAnswer]] = defaultdict(list)
        stored = Answer.objects.filter(participant_id__in=ids).values_list(
            "participant_id", "page", "question", "measure", "subject_key", "number", "text"
        )
        for pid, page, question, measure, subject, number, text in stored.iterator(chunk_size=CURSOR_ROWS):
            grouped[pid].append(StoredAnswer(page, question, measure, subject, number, text))
        qualities = database_qualities(studies.values(), Participant.objects.filter(pk__in=ids), comparisons)
        lines = []
        for pk in ids:
            p, answers = people[pk], grouped.pop(pk, [])
            study = studies[p.study_id]
            failed = sum(1 - a.number for a in answers if a.measure == "attention" and a.number is not None)
            base = row_base(slug, study.version, p)
            excluded = int(is_excluded(study.spec, int(failed)) or excluded_by_quality(*qualities[pk]))
            rows = participant_answer_rows(base, study.spec, references[p.study_id], p, answers, excluded)
            lines += [writer.writerow([neutralise(row[c]) for c in columns]) for row in rows]
        yield "".join(lines)


def streamed_csv_response(slug: str, table: str, participants: Q, filename: str) -> StreamingHttpResponse:
    """A download of a ``STREAMED`` table's CSV, written while it is sent."""
    if table not in STREAMED:
        raise ValueError(f"only {', '.join(STREAMED)} can be streamed, not {table!r}")
    response = StreamingHttpResponse(answers_csv_lines(slug, participants), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
