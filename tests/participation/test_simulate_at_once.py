"""Simulated participants' pages saved at once (``participation.services.participant_submit_all``) store
exactly what the web path (``page_shown``, then ``page_submit`` page after page) stores, in a few statements
per participant instead of four or five per page."""

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection, transaction
from django.db.models import Model
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from participation import simulate
from participation.enrolment import enrolment_of
from participation.models import Answer, PageVisit, Participant
from participation.services import SentPage, participant_consent, participant_submit_all, submits_at_once
from participation.simulate import simulate_participants
from studies.models import Study
from studies.services import study_load

EVERY_TASK_TYPE = Path(__file__).resolve().parents[2] / "bench" / "every_task_type.json"
NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def _ranked_rows() -> dict[str, list[tuple]]:
    """Every table's rows in the order they were stored, with each id (and each reference to one) replaced by
    the row's place in its table: PostgreSQL's sequences do not roll back, and ``INSERT .. ON CONFLICT``
    takes a number even when it updates."""
    models = [m for m in apps.get_models() if not m._meta.proxy and m._meta.managed]
    places: dict[type[Model], dict] = {
        m: {pk: i for i, pk in enumerate(m._default_manager.order_by("pk").values_list("pk", flat=True))}
        for m in models
    }
    tables = {}
    for model in models:
        fields = model._meta.concrete_fields
        rows = model._default_manager.order_by("pk").values_list(*(f.attname for f in fields))
        tables[model._meta.db_table] = [
            tuple(
                places[model][v]
                if f.primary_key
                else places[f.related_model].get(v, v)
                if f.is_relation and f.related_model in places
                else v
                for f, v in zip(fields, row, strict=True)
            )
            for row in rows
        ]
    return tables


def _simulated(slug: str, capture, *, at_once: bool, monkeypatch) -> tuple[dict, int]:
    """The tables after simulating 4 participants, who complete with their verdicts stored (the completion's
    on-commit work run), and the statements it took; everything is rolled back after."""
    numbers = iter(range(1, 100))
    with monkeypatch.context() as patch:
        # Pseudonyms are random (uuid4): numbered here, the same both ways.
        patch.setattr(Participant._meta.get_field("pseudonym"), "_get_default", lambda: uuid.UUID(int=next(numbers)))
        if not at_once:
            patch.setattr(simulate, "submits_at_once", lambda spec, plan: False)
        with transaction.atomic():
            with CaptureQueriesContext(connection) as statements, capture(execute=True):
                report = simulate_participants(slug, n=4, seed=11, decline_rate=0.0)
            assert report.completed == 4
            tables = _ranked_rows()
            transaction.set_rollback(True)
    return tables, len(statements)


@pytest.mark.django_db
def test_saving_at_once_stores_every_row_the_page_path_stores(monkeypatch, django_capture_on_commit_callbacks):
    """The study of every task type, four participants both ways (time stopped, so every timestamp is
    comparable): every table holds the same rows, in the same order; at once takes at most a quarter of the
    statements (about 5 per page on the page path, a few per participant at once)."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    slug = study_load(spec=json.loads(EVERY_TASK_TYPE.read_text())).study.slug
    Study.objects.filter(slug=slug).update(status=Study.Status.LIVE)
    by_page, page_statements = _simulated(
        slug, django_capture_on_commit_callbacks, at_once=False, monkeypatch=monkeypatch
    )
    at_once, statements = _simulated(slug, django_capture_on_commit_callbacks, at_once=True, monkeypatch=monkeypatch)
    stored = {
        Answer._meta.db_table,
        PageVisit._meta.db_table,
        Participant._meta.db_table,
        "research_participantquality",
    }
    assert all(by_page[table] for table in stored)
    assert by_page.keys() == at_once.keys()
    for table in by_page:
        assert at_once[table] == by_page[table], table
    pages = 4 * len(Study.objects.get(slug=slug).spec["blocks"])
    assert page_statements > 4 * pages and statements < page_statements / 4, (statements, page_statements)


def _consented(slug: str) -> Participant:
    participant = Participant.objects.create(
        study=Study.objects.get(slug=slug), external_id="p1", seed=5, arrived_at=NOW
    )
    return participant_consent(participant_id=participant.pk, accept=True, at=NOW)


@pytest.mark.django_db
def test_pages_that_are_not_the_plan_or_a_participant_not_on_their_first_page_store_nothing():
    slug = study_load(spec=json.loads(EVERY_TASK_TYPE.read_text())).study.slug
    participant = _consented(slug)
    enrolment = enrolment_of(participant)
    assert enrolment is not None
    pages = [SentPage(page["key"], [], NOW) for page in enrolment.plan]
    with pytest.raises(ValueError, match="must be the participant's plan, in order"):
        participant_submit_all(enrolment=enrolment, shown_at=NOW, pages=pages[::-1])
    with pytest.raises(ValueError, match="must be the participant's plan, in order"):
        participant_submit_all(enrolment=enrolment, shown_at=NOW, pages=pages[:-1])
    Participant.objects.filter(pk=participant.pk).update(position=1)
    with pytest.raises(RuntimeError, match="not active on their first page: nothing was saved"):
        participant_submit_all(enrolment=enrolment, shown_at=NOW, pages=pages)
    assert not Answer.objects.exists() and not PageVisit.objects.exists()
    assert Participant.objects.get(pk=participant.pk).status == Participant.Status.ACTIVE


@pytest.mark.django_db
def test_a_plan_with_an_adaptive_page_or_a_study_with_quotas_is_saved_page_by_page():
    slug = study_load(spec=json.loads(EVERY_TASK_TYPE.read_text())).study.slug
    enrolment = enrolment_of(_consented(slug))
    assert enrolment is not None and submits_at_once({}, enrolment.plan)
    assert not submits_at_once({"quotas": [{"question": "role"}]}, enrolment.plan)
    adaptive = replace(enrolment, plan=[{**enrolment.plan[0], "slot": 0}, *enrolment.plan[1:]])
    assert not submits_at_once({}, adaptive.plan)
    pages = [SentPage(page["key"], [], NOW) for page in adaptive.plan]
    with pytest.raises(ValueError, match="adaptive pages and quotas are saved page by page"):
        participant_submit_all(enrolment=adaptive, shown_at=NOW, pages=pages)
    assert not PageVisit.objects.exists() and Participant.objects.get().position == 0
