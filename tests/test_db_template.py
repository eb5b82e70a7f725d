"""The test database is a copy of a migrated template (tests/db_template.py): the copy is what migrating
builds, and the template's key follows the migration files."""

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
