"""One source of truth for a study's content: the stored file; Condition rows for what points at a
condition (participants, calibrations, audit runs); the admin cannot change what participants saw."""

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from participation.models import Answer, Participant
from runs.calibrations import calibration_create
from runs.models import AuditRun, Calibration
from studies.models import Condition, Study
from studies.services import _create_study_rows, study_load
from tasks.questions import attention_question, pair_question
from tests.format1_plan import build_plan
from tests.surveys.helpers import answer_pages, consented

CAL = {"alpha": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n_participants": 10, "seed": 1}


def test_format2_conditions_are_stored_without_feature(db):
    study = Study.objects.create(slug="f2", title="F2", spec={}, spec_hash="x")
    spec = {"format": 2, "conditions": [{"key": "ai", "label": "With AI", "cap": 30}, {"key": "no", "label": "No"}]}
    _create_study_rows(study, spec, None)
    rows = list(study.conditions.values_list("key", "label", "feature", "unit", "desirable", "cap", "position"))
    assert rows == [("ai", "With AI", "", "", None, 30, 0), ("no", "No", "", "", None, None, 1)]
    with pytest.raises(IntegrityError):
        Condition.objects.create(study=study, key="zero", label="Zero", cap=0, position=2)


def test_format1_conditions_keep_their_feature(demo_study, demo_spec):
    rows = list(demo_study.conditions.values_list("key", "feature", "unit", "desirable"))
    assert rows == [(c["key"], c["feature"], c["unit"], c["desirable"]) for c in demo_spec["conditions"]]


def test_calibration_points_at_the_condition_of_its_version_or_the_newest_with_the_key(demo_study, demo_spec):
    v1_arrests = demo_study.conditions.get(key="arrests")
    consented("effort-demo", "p1")  # a participant: the next file is a new version, not a replacement
    demo_spec["conditions"] = [c for c in demo_spec["conditions"] if c["key"] == "income"]
    demo_spec["title"] = "Income only"
    v2 = study_load(spec=demo_spec).study
    assert v2.version == 2
    assert calibration_create(study=v2, kind="likert", condition="income", **CAL).condition.study == v2
    assert calibration_create(study=v2, kind="likert", condition="arrests", **CAL).condition == v1_arrests
    with pytest.raises(LookupError, match="no condition 'nope'"):
        calibration_create(study=v2, kind="likert", condition="nope", **CAL)


def test_a_version_with_results_is_not_replaced(demo_study, demo_spec):
    """Before any participant a changed file replaces the version, unless a result points at it."""
    calibration = calibration_create(study=demo_study, kind="likert", condition="arrests", **CAL)
    demo_spec["title"] = "Changed"
    result = study_load(spec=demo_spec)
    assert result.action == "new_version" and result.study.version == 2
    calibration.refresh_from_db()
    assert calibration.condition.study == demo_study and demo_study.conditions.count() == 2


def test_question_keys_are_the_plan_page_keys(demo_spec):
    """Format 1 pair pages are keyed by their Likert question, attention pages by their check's question."""
    plan = build_plan(demo_spec, demo_spec["conditions"][0]["key"], seed=5)
    likert = [p for p in plan if p["kind"] == "likert"]
    assert likert and all(p["key"] == pair_question(p["set"], p["subject"], p["measure"]) for p in likert)
    checks = [p for p in plan if p["kind"] == "attention"]
    assert checks and all(p["key"] == attention_question(p["check"]) for p in checks)


@pytest.fixture
def admin_client(client, db):
    admin = get_user_model().objects.create_superuser("root", password="root-pass-123")
    client.force_login(admin)
    return client


def _post_change(client, url: str, changes: dict) -> None:
    """POST the admin change form with its current values, changed by ``changes``."""
    response = client.get(url)
    assert response.status_code == 200
    form = response.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    response = client.post(url, {**data, **changes, "_save": "Save"})
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response


def test_admin_cannot_edit_a_stored_version(admin_client, demo_study, other_researcher):
    before = Study.objects.values("slug", "version", "title", "spec", "spec_hash").get(pk=demo_study.pk)
    _post_change(
        admin_client,
        f"/admin/studies/study/{demo_study.pk}/change/",
        {
            "slug": "hijacked",
            "version": "7",
            "title": "Other",
            "spec": '{"slug": "hijacked"}',
            "spec_hash": "0" * 64,
            "owner": str(other_researcher.pk),
        },
    )
    demo_study.refresh_from_db()
    assert Study.objects.values("slug", "version", "title", "spec", "spec_hash").get(pk=demo_study.pk) == before
    assert demo_study.owner == other_researcher  # ownership is what the admin may change
    assert admin_client.get("/admin/studies/study/add/").status_code == 403
    condition = demo_study.conditions.first()
    assert admin_client.post(f"/admin/studies/condition/{condition.pk}/change/", {"key": "x"}).status_code == 403
    assert Condition.objects.get(pk=condition.pk).key == condition.key


def test_admin_cannot_edit_a_participant_or_answers(admin_client, demo_study):
    participant = answer_pages(consented("effort-demo", "p1"), 3)
    fields = ["condition_id", "plan", "status", "position", "seed", "pseudonym", "external_id", "pilot", "simulated"]
    before = Participant.objects.values(*fields).get(pk=participant.pk)
    other = demo_study.conditions.exclude(pk=participant.condition_id).get()
    url = f"/admin/participation/participant/{participant.pk}/change/"
    assert admin_client.get(url).status_code == 200  # shown, read-only
    changes = {
        "condition": str(other.pk),
        "plan": "[]",
        "status": "completed",
        "position": "0",
        "seed": "1",
        "external_id": "someone-else",
        "prolific_session_id": "s",
        "pilot": "on",
    }
    assert admin_client.post(url, changes).status_code == 403
    assert Participant.objects.values(*fields).get(pk=participant.pk) == before
    answer = Answer.objects.filter(participant=participant).first()
    assert admin_client.get("/admin/participation/answer/add/").status_code == 403
    assert admin_client.post(f"/admin/participation/answer/{answer.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.post(f"/admin/participation/answer/{answer.pk}/change/", {"number": "5"}).status_code == 403
    assert Answer.objects.get(pk=answer.pk).number == answer.number
    delete = f"/admin/participation/participant/{participant.pk}/delete/"
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert Participant.objects.filter(pk=participant.pk).exists()


OLD, FK = ("surveys", "0009_content_from_study_file"), ("surveys", "0011_condition_foreign_keys_required")


def _migrate(executor: MigrationExecutor, target: tuple[str, str]):
    executor.loader.build_graph()
    executor.migrate([target])
    executor.loader.build_graph()
    return executor.loader.project_state([target]).apps


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_condition_keys_migrate_to_foreign_keys_and_back():
    executor = MigrationExecutor(connection)
    try:
        apps = _migrate(executor, OLD)
        study_model, condition_model = apps.get_model("surveys", "Study"), apps.get_model("surveys", "Condition")
        calibration_model, audit_model = apps.get_model("surveys", "Calibration"), apps.get_model("surveys", "AuditRun")
        v1 = study_model.objects.create(slug="s", version=1, title="S", spec={}, spec_hash="a")
        v2 = study_model.objects.create(slug="s", version=2, title="S", spec={}, spec_hash="b")
        rows = {
            (v.version, k): condition_model.objects.create(study=v, key=k, label=k, position=0)
            for v, keys in ((v1, "ab"), (v2, "a"))
            for k in keys
        }
        old = {
            "own version": calibration_model.objects.create(study=v1, kind="likert", condition="a", version=1, **CAL),
            "newest with the key": calibration_model.objects.create(
                study=v2, kind="likert", condition="b", version=1, **CAL
            ),
            "same version number": calibration_model.objects.create(
                study=v2, kind="likert", condition="a", version=1, **CAL
            ),
        }
        audit = audit_model.objects.create(study=v2, condition="a", subjects_file="s.csv", files_prefix="audit/x")
        stray = audit_model.objects.create(study=v2, condition="gone", subjects_file="s.csv", files_prefix="audit/y")
        with pytest.raises(RuntimeError, match="AuditRun .*: study 's' has no condition 'gone' in any version"):
            _migrate(executor, FK)
        stray.delete()

        apps = _migrate(executor, FK)
        calibrations = apps.get_model("surveys", "Calibration").objects
        found = {name: calibrations.get(pk=row.pk).condition_id for name, row in old.items()}
        assert found == {
            "own version": rows[(1, "a")].pk,
            "newest with the key": rows[(1, "b")].pk,
            "same version number": rows[(2, "a")].pk,
        }
        assert apps.get_model("surveys", "AuditRun").objects.get(pk=audit.pk).condition_id == rows[(2, "a")].pk

        apps = _migrate(executor, OLD)
        calibrations = apps.get_model("surveys", "Calibration").objects
        assert {name: calibrations.get(pk=row.pk).condition for name, row in old.items()} == {
            "own version": "a",
            "newest with the key": "b",
            "same version number": "a",
        }
        assert apps.get_model("surveys", "AuditRun").objects.get(pk=audit.pk).condition == "a"
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert AuditRun.objects.get(pk=audit.pk).condition.key == "a"
    assert Calibration.objects.count() == 3
