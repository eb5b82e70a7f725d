"""Completed participants' own answer-quality verdicts stored (``research.quality_verdicts``): equal to a fresh
assessment, assessed again when the study version's thresholds change, and read (never re-assessed) by the
first dashboard view of a restarted process."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import research.quality_evidence
from core.caching import clear_process_caches
from participation.models import Participant
from participation.simulate import simulate_participants
from research.dashboard import summarise
from research.models import ParticipantQuality
from research.quality_evidence import database_qualities
from research.quality_verdicts import QUALITY_REVISION, basis
from studies.models import Study
from studies.services import spec_digest
from tests.surveys.helpers import answer_pages, consented, shared_demo_study

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # every test reads the shared study (about 5 CPU s)


@pytest.fixture(scope="module")
def shared_answered(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo study with 30 simulated participants (one declines, one fails the attention checks) and a real
    one who answered every page at once (flagged ``fast``), made once: each test's changes are rolled back."""
    with shared_demo_study(django_db_blocker, tmp_path_factory.mktemp("verdicts"), n=30, seed=2) as shared:
        answer_pages(consented("effort-demo", "real-done"))
        yield shared


@pytest.fixture
def answered(shared_answered) -> Study:
    """The shared study, read afresh."""
    return Study.objects.get(pk=shared_answered.study.pk)


def _fresh(study: Study) -> dict:
    """Every participant's quality assessed anew: no stored verdict, nothing kept in the process."""
    ParticipantQuality.objects.all().delete()
    clear_process_caches()
    return database_qualities([study], Participant.objects.filter(study=study))


def _stored(study: Study, monkeypatch) -> dict:
    """Every participant's quality in a new process, where the completed ones' verdicts must be read."""
    clear_process_caches()
    real = research.quality_evidence.assess

    def refuse(evidence, spec):
        raise AssertionError("a completed participant was assessed again")

    monkeypatch.setattr(research.quality_evidence, "assess", refuse)
    try:
        return database_qualities([study], Participant.objects.filter(study=study, status="completed"))
    finally:
        monkeypatch.setattr(research.quality_evidence, "assess", real)


def _change_thresholds(study: Study, **quality) -> Study:
    """The version's file replaced in place with other quality options (as loading a file over a version
    no one took does), so its digest changes."""
    spec = {**study.spec, "quality": {**study.spec.get("quality", {}), **quality}}
    Study.objects.filter(pk=study.pk).update(spec=spec, spec_hash=spec_digest(spec))
    return Study.objects.get(pk=study.pk)


def test_stored_verdicts_equal_a_fresh_assessment(answered, monkeypatch):
    fresh = _fresh(answered)
    completed = Participant.objects.filter(study=answered, status="completed")
    assert ParticipantQuality.objects.count() == completed.count() >= 15  # only the completed are stored
    assert set(ParticipantQuality.objects.values_list("basis", flat=True)) == {basis(answered)}
    assert basis(answered).endswith(f":{QUALITY_REVISION}")
    stored = _stored(answered, monkeypatch)
    assert stored == {pk: fresh[pk] for pk in stored} and set(stored) == set(completed.values_list("pk", flat=True))
    assert "fast" in ParticipantQuality.objects.get(participant__external_id="real-done").flags
    assert ParticipantQuality.objects.filter(attention_failed__gte=1).exists()


def test_a_threshold_change_assesses_the_verdicts_again(answered, monkeypatch):
    _fresh(answered)
    n_completed = Participant.objects.filter(study=answered, status="completed").count()
    before = summarise("effort-demo")
    assert 1 <= before.quality_flags["fast"] < n_completed and before.exclusion_rate < 1
    changed = _change_thresholds(answered, min_seconds_per_page=10_000.0, exclude_if=["fast"])
    clear_process_caches()
    after = summarise("effort-demo")  # every completed participant is now fast, and excluded for it
    assert after.quality_flags["fast"] == n_completed and after.exclusion_rate == 1.0
    assert set(ParticipantQuality.objects.values_list("basis", flat=True)) == {basis(changed)} != {basis(answered)}
    stored = _stored(changed, monkeypatch)
    assert stored == {pk: quality for pk, quality in _fresh(changed).items() if pk in stored}
    assert all("fast" in quality.flags for quality, _ in stored.values())


def test_the_first_view_of_a_restarted_process_assesses_no_one(answered, shared_answered, client, monkeypatch):
    """After a restart (process caches emptied) the dashboard reads the stored verdicts: no participant is
    assessed and no answer or page visit is read; a participant who completes since is assessed alone."""
    client.force_login(shared_answered.owner)
    assert client.get("/researcher/studies/effort-demo/").status_code == 200
    calls = []
    real = research.quality_evidence.assess
    monkeypatch.setattr(
        research.quality_evidence, "assess", lambda evidence, spec: calls.append(1) or real(evidence, spec)
    )
    clear_process_caches()
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/researcher/studies/effort-demo/").status_code == 200
    assert calls == []
    read = " ".join(query["sql"] for query in captured.captured_queries)
    assert "surveys_answer" not in read and "surveys_pagevisit" not in read
    simulate_participants("effort-demo", n=1, seed=77, decline_rate=0.0)
    clear_process_caches()
    assert client.get("/researcher/studies/effort-demo/").status_code == 200
    assert calls == [1]


def test_a_withdrawal_deletes_the_stored_verdict(answered):
    from participation.services import participant_withdraw

    _fresh(answered)
    done = Participant.objects.get(external_id="real-done")
    assert ParticipantQuality.objects.filter(participant=done).exists()
    participant_withdraw(participant_id=done.pk)
    assert not ParticipantQuality.objects.filter(participant=done).exists()
    assert ParticipantQuality.objects.exists()  # the others' stay
