"""The data migration ``studies.0004_format1_versions_converted`` converts every stored format 1 version
(``studies.services.convert_version``): on a database holding what the format 1 runtime stored (the
golden demo's 8 completed participants, their page visits and answers, and a participant stopped after
10 pages), migrated from before it, the exports equal the golden files byte for byte and the mid-study
participant finishes through the participant pages."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from participation.models import Answer, Participant
from tests.research.test_format1_golden_export import (
    N_PARTICIPANTS,
    NOW,
    _require_postgres,
    assert_converted,
    assert_exports_golden,
    finish_mid_study,
    load_stored,
)

BEFORE = [("studies", "0003_study_format1_spec")]
pytestmark = pytest.mark.slow  # each migrates the database back and forth (5 to 6 CPU s)


def _migrate_stored(researcher, *names: str) -> None:
    """The stored rows loaded into a database before the migration (the study rows through the model as it
    was then), then migrated to the leaves."""
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    try:
        load_stored(researcher, *names, study_model=old.get_model("studies", "Study"))
        assert old.get_model("studies", "Study").objects.get(slug="effort-demo").spec["format"] == 1
    finally:  # the database is left at the leaves whatever happens: the worker's next tests need them
        MigrationExecutor(connection).migrate(leaves)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_migrated_stored_demo_exports_the_golden_files(client, researcher, monkeypatch, tmp_path):
    _require_postgres()
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    _migrate_stored(researcher, "stored.json")
    assert Participant.objects.filter(status="completed").count() == N_PARTICIPANTS
    assert_converted()
    assert_exports_golden(client, researcher, tmp_path)


@pytest.mark.django_db(transaction=True)
def test_a_migrated_mid_study_participant_finishes(client, researcher, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    _migrate_stored(researcher, "stored.json", "mid_study.json")
    answers = Answer.objects.filter(participant__external_id="mid-study")
    finish_mid_study(client, list(answers.values_list("page", "question", "number")))
