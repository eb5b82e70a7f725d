"""The models moved from ``surveys`` to the apps that own their lifecycle (studies, participation, runs)
keep their tables and data: a database holding studies of both formats with participants, answers, an
analysis run and a job, migrated from before the move, reads the same through the new models, and the
content types (so the permissions granted on them) follow."""

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.conftest import DEMO_FILE, ROOT

BEFORE = [  # participation's own migrations since the move (new columns) are taken back too
    ("participation", None),
    ("surveys", "0014_answer_measure_known"),
    ("runs", "0002_job_kind_plan"),
    ("contenttypes", "0002_remove_content_type_name"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps  # (app, None): none of it


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_database_of_both_formats_migrates_to_the_owning_apps():
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    old = _migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="owner")
    content_type = old.get_model("contenttypes", "ContentType")
    content_type.objects.get_or_create(app_label="surveys", model="answer")
    study_model = old.get_model("surveys", "Study")
    made = {}
    now = timezone.now()
    for name, path in (("effort", DEMO_FILE), ("agree", ROOT / "studies/bundled/disagreement_synthetic.json")):
        spec = json.loads(path.read_text())
        study = study_model.objects.create(slug=spec["slug"], title=name, spec=spec, spec_hash=name, owner=user)
        participant = old.get_model("surveys", "Participant").objects.create(
            study=study, external_id=f"p-{name}", seed=1, plan=[{"key": "x", "kind": "instructions"}]
        )
        measure = "overall" if name == "effort" else "agree"
        old.get_model("surveys", "Answer").objects.create(
            participant=participant, page="x", question=f"q/{name}", measure=measure, number=1
        )
        old.get_model("surveys", "PageVisit").objects.create(participant=participant, page="x", first_shown_at=now)
        made[name] = (study.pk, participant.pk)
    effort_study = study_model.objects.get(pk=made["effort"][0])
    old.get_model("surveys", "AnalysisRun").objects.create(
        study=effort_study, seed=1, n_resamples=100, files_prefix="runs/1", results={"ok": 1}
    )
    old.get_model("runs", "Job").objects.create(kind="analysis", study=effort_study, params={})

    _migrate(leaves)

    from django.contrib.contenttypes.models import ContentType

    from participation.models import Answer, PageVisit, Participant
    from runs.models import AnalysisRun, Job
    from studies.models import Study

    for name, (study_id, participant_id) in made.items():
        participant = Participant.objects.select_related("study").get(pk=participant_id)
        assert participant.study.pk == study_id and participant.external_id == f"p-{name}"
        assert [a.question for a in Answer.objects.filter(participant=participant)] == [f"q/{name}"]
        assert PageVisit.objects.filter(participant=participant).count() == 1
    assert Study.objects.get(pk=made["agree"][0]).spec["format"] == 2
    effort = Study.objects.get(pk=made["effort"][0])  # converted by studies 0004 (its plan has no condition)
    assert effort.spec["format"] == 2 and effort.format1_spec["format"] == 1
    assert AnalysisRun.objects.get().results == {"ok": 1}
    assert Job.objects.get().study_id == made["effort"][0]
    assert ContentType.objects.filter(app_label="participation", model="answer").exists()
    assert not ContentType.objects.filter(app_label="surveys", model="answer").exists()
