"""Completed participants' answer-quality verdicts written off the researcher's path (``research.quality_writes``):
stored when the participant completes, with no dashboard view; filled (missing or stale) by
``manage.py backfill_quality_verdicts``, idempotently; after it the dashboard assesses no one."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

import research.quality_evidence
from core.caching import clear_process_caches
from participation.models import Participant
from participation.simulate import simulate_participants
from research.models import ParticipantQuality
from research.quality_evidence import database_qualities
from research.quality_verdicts import basis
from studies.models import Study
from tests.surveys.helpers import consented

pytestmark = pytest.mark.django_db


def _stored() -> dict[int, tuple]:
    rows = ParticipantQuality.objects.values_list("participant_id", "basis", "rules", "flags", "attention_failed")
    return {row[0]: row[1:] for row in rows}


def _fresh(study: Study) -> dict[int, tuple]:
    """The completed participants' verdicts as the dashboard's lazy path assesses and stores them, from scratch."""
    ParticipantQuality.objects.all().delete()
    clear_process_caches()
    database_qualities([study], Participant.objects.filter(study=study))
    return _stored()


def _refuse_assessing(monkeypatch) -> None:
    def refuse(evidence, spec):
        raise AssertionError("a participant was assessed")

    monkeypatch.setattr(research.quality_evidence, "assess", refuse)


def _backfill(*args: str) -> str:
    out = StringIO()
    call_command("backfill_quality_verdicts", *args, stdout=out)
    return out.getvalue()


def test_a_participant_who_completes_has_a_stored_verdict(demo_study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        simulate_participants("effort-demo", n=12, seed=5)
        consented("effort-demo", "still-answering")
    completed = set(Participant.objects.filter(status="completed").values_list("pk", flat=True))
    assert len(completed) >= 8 and Participant.objects.filter(status="active").exists()
    assert len(callbacks) >= len(completed)
    on_completion = _stored()
    assert set(on_completion) == completed  # every completed participant, no one else, no view needed
    assert {held for held, *_ in on_completion.values()} == {basis(demo_study)}
    assert on_completion == _fresh(demo_study)  # what the dashboard would have assessed


def test_a_verdict_that_cannot_be_written_does_not_fail_the_completion(
    demo_study, django_capture_on_commit_callbacks, monkeypatch
):
    _refuse_assessing(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        simulate_participants("effort-demo", n=3, seed=6, decline_rate=0.0)
    assert Participant.objects.filter(status="completed").count() == 3 and not ParticipantQuality.objects.exists()


def test_the_backfill_fills_missing_and_stale_verdicts_once(demo_study):
    simulate_participants("effort-demo", n=12, seed=7)  # on_commit not run: no verdict stored
    completed = Participant.objects.filter(status="completed").order_by("pk")
    n = completed.count()
    assert n >= 8 and not ParticipantQuality.objects.exists()
    expected = _fresh(demo_study)
    ParticipantQuality.objects.all().delete()

    out = _backfill("--study", "effort-demo")
    assert f"effort-demo: {n} / {n} assessed" in out and f"{n} verdicts stored in all" in out
    assert _stored() == expected
    assert _backfill() == "effort-demo: 0 verdicts stored\n0 verdicts stored in all\n"  # idempotent

    stale, gone = completed[0].pk, completed[1].pk
    ParticipantQuality.objects.filter(pk=stale).update(basis="an-old-file:0", flags=["fast"])
    ParticipantQuality.objects.filter(pk=gone).delete()
    assert "effort-demo: 2 verdicts stored" in _backfill()
    assert _stored() == expected


def test_the_backfill_follows_a_new_study_file(demo_study):
    simulate_participants("effort-demo", n=6, seed=8, decline_rate=0.0)
    _backfill()
    spec = {**demo_study.spec, "quality": {**demo_study.spec.get("quality", {}), "min_seconds_per_page": 10_000.0}}
    Study.objects.filter(pk=demo_study.pk).update(spec=spec, spec_hash="replaced")
    assert "effort-demo: 6 verdicts stored" in _backfill("--study", "effort-demo")
    verdicts = ParticipantQuality.objects.all()
    assert {v.basis for v in verdicts} == {"replaced:1"} and all("fast" in v.flags for v in verdicts)


def test_an_unknown_study_is_refused():
    with pytest.raises(Exception, match="no study with slug 'nowhere'"):
        _backfill("--study", "nowhere")


def test_the_dashboard_after_the_backfill_assesses_no_one(demo_study, researcher, client, monkeypatch):
    simulate_participants("effort-demo", n=12, seed=9)
    _backfill()
    _refuse_assessing(monkeypatch)
    clear_process_caches()
    client.force_login(researcher)
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/researcher/studies/effort-demo/").status_code == 200
    read = " ".join(query["sql"] for query in captured.captured_queries)
    assert "surveys_answer" not in read and "surveys_pagevisit" not in read
