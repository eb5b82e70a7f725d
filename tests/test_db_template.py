"""The test database is a copy of a migrated template (tests/db_template.py): the copy is what migrating
builds, and the template's key follows the migration files; the flush after a transactional test leaves what
Django's flush leaves."""

import json
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests import db_template
from tests.conftest import run_id


@pytest.mark.django_db
def test_the_copied_database_has_every_migration_applied_and_its_tables():
    from django.apps import apps

    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    tables = set(connection.introspection.table_names())
    assert {model._meta.db_table for model in apps.get_models() if model._meta.managed} <= tables


def test_the_key_changes_with_a_migration_file_its_contents_and_a_new_one(tmp_path, monkeypatch):
    (tmp_path / "migrations").mkdir()
    first = tmp_path / "migrations" / "0001_initial.py"
    first.write_text("operations = []\n")
    config = SimpleNamespace(label="app", path=str(tmp_path))
    monkeypatch.setattr(db_template, "apps", SimpleNamespace(get_app_configs=lambda: [config]))
    keys = [db_template.migrations_key()]
    assert db_template.migrations_key() == keys[0]
    first.write_text("operations = [1]\n")
    keys.append(db_template.migrations_key())
    (tmp_path / "migrations" / "0002_more.py").write_text("")
    keys.append(db_template.migrations_key())
    first.rename(tmp_path / "migrations" / "0001_renamed.py")
    keys.append(db_template.migrations_key())
    assert len(set(keys)) == 4


@pytest.mark.django_db
def test_a_copy_of_the_template_is_a_database_with_the_same_tables():
    from django.db import connections

    run_suffix = f"_{run_id()}" if connection.vendor == "sqlite" else ""
    templates = db_template._Templates(
        connection, db_template.shared_name(connection.settings_dict["NAME"], run_suffix)
    )
    [template] = [name for name in templates.names() if name.endswith(db_template.migrations_key())]
    target = f"{template}-copy" if templates.sqlite else f"{template}_copy"
    templates.copy(template, target)
    copy = connections.create_connection("default")
    copy.settings_dict = {**copy.settings_dict, "NAME": target}
    try:
        assert set(copy.introspection.table_names()) == set(connection.introspection.table_names())
    finally:
        copy.close()
        templates.drop(target)
    assert target not in templates.names()


def _post_migrate_rows() -> tuple[set, set, list]:
    """What migrate's post_migrate writes, without ids: content types, permissions, the triggers."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    with connection.cursor() as cursor:
        cursor.execute(db_template._TRIGGERS[connection.vendor])
        triggers = [name for name, _ in cursor.fetchall()]
    return (
        set(ContentType.objects.values_list("app_label", "model")),
        set(Permission.objects.values_list("content_type__app_label", "codename", "name")),
        triggers,
    )


def _tables_with_rows() -> set[str]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    return set(db_template._tables_with_rows(connection, sorted(tables)))


def _write_a_study_and_its_answers() -> None:
    from django.contrib.auth import get_user_model

    from participation.simulate import simulate_participants
    from studies.services import study_load
    from tests.conftest import DEMO_FILE

    owner = get_user_model().objects.create_user("flushed", password="flushed-pass-123")
    study_load(spec=json.loads(DEMO_FILE.read_text()), owner=owner)
    simulate_participants("effort-demo", n=2, seed=1)


@pytest.mark.django_db(transaction=True)
def test_the_flush_after_a_transactional_test_empties_what_it_wrote_and_keeps_what_migrate_wrote():
    """As Django's flush leaves it: every table empty but the content types and permissions, the answer rules'
    trigger in place; the rows post_migrate wrote are kept (same ids) instead of written again."""
    from django.contrib.contenttypes.models import ContentType
    from django.core.management import call_command

    db_template.flush_after_test(connection)  # this process's reference (Django's flush, at the first)
    ids = list(ContentType.objects.order_by("pk").values_list("pk", flat=True))
    _write_a_study_and_its_answers()
    written = _tables_with_rows()
    assert {"surveys_study", "surveys_answer", "auth_user"} <= written
    db_template.flush_after_test(connection)
    assert _tables_with_rows() == set(db_template.POST_MIGRATE_TABLES)
    assert list(ContentType.objects.order_by("pk").values_list("pk", flat=True)) == ids  # kept, not rewritten
    kept = _post_migrate_rows()
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False)
    assert _post_migrate_rows() == kept and kept[2]  # what Django's flush leaves
    # and the tables it leaves rows in are the ones kept here (a post_migrate handler writing another would fail this)
    assert _tables_with_rows() == set(db_template.POST_MIGRATE_TABLES)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("change", ["content type", "trigger"])
def test_a_test_that_changed_what_migrate_wrote_gets_djangos_flush(change):
    from django.contrib.contenttypes.models import ContentType

    from participation import answer_rules

    db_template.flush_after_test(connection)
    expected = _post_migrate_rows()
    if change == "content type":
        ContentType.objects.create(app_label="gone", model="model")
    else:
        answer_rules.uninstall(connection)
    assert _post_migrate_rows() != expected
    db_template.flush_after_test(connection)
    assert _post_migrate_rows() == expected
    assert _tables_with_rows() == set(db_template.POST_MIGRATE_TABLES)
