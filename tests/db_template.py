"""Each test process's database copied from a migrated template instead of migrated afresh.

Migrating a new test database renders every migration's model state: about 10 CPU seconds per process (each
``make test`` worker and the serial part). The first process to need a database builds the template (the
ordinary ``create_test_db``: migrations, post-migrate rows, cache table) under a name keyed by the migration
files' contents, under a file lock; every process then copies it (PostgreSQL ``CREATE DATABASE ... TEMPLATE``,
a file copy on SQLite). A changed, added or removed migration changes the key, so a stale template is never
used; templates of other keys are dropped when a new one is built. The migration tests still migrate backwards
and forwards on the copy.

After a transactional test, ``flush_after_test`` empties only the tables the test wrote (``tests/conftest.py``
puts it in place of Django's flush).
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps
from django.db.backends.base.base import BaseDatabaseWrapper


def migrations_key() -> str:
    """A digest of every installed app's migration files (names and contents): a template is reused only
    while it is what migrating would build."""
    digest = hashlib.sha256()
    for config in sorted(apps.get_app_configs(), key=lambda c: c.label):
        for path in sorted(Path(config.path, "migrations").glob("*.py")):
            digest.update(f"{config.label}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _Templates:
    """Where a connection's templates live and how one is copied, for SQLite files and PostgreSQL."""

    def __init__(self, connection: BaseDatabaseWrapper, base: str) -> None:
        self.connection, self.base = connection, base
        self.sqlite = connection.vendor == "sqlite"

    def name(self, key: str) -> str:
        return f"{self.base}-template-{key}" if self.sqlite else f"{self.base}_template_{key}"

    def lock_path(self) -> Path:
        folder = Path(self.base).parent if self.sqlite else Path("/tmp")
        return folder / f"{Path(self.base).name}.template-lock"

    def _execute(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.connection.creation._nodb_cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def names(self) -> list[str]:
        """Every template of this database (any key)."""
        if self.sqlite:
            return [str(p) for p in Path(self.base).parent.glob(f"{Path(self.base).name}-template-*")]
        like = self.name("").replace("_", r"\_") + "%"
        return [row[0] for row in self._execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (like,))]

    def drop(self, name: str) -> None:
        if self.sqlite:
            for suffix in ("", "-wal", "-shm"):
                Path(name + suffix).unlink(missing_ok=True)
        else:
            self._execute(f"DROP DATABASE IF EXISTS {self.connection.ops.quote_name(name)}")

    def rename(self, old: str, new: str) -> None:
        if self.sqlite:
            Path(old).replace(new)
        else:
            quote = self.connection.ops.quote_name
            self._execute(f"ALTER DATABASE {quote(old)} RENAME TO {quote(new)}")

    def copy(self, template: str, target: str) -> None:
        self.drop(target)
        if self.sqlite:
            shutil.copyfile(template, target)
        else:
            quote = self.connection.ops.quote_name
            self._execute(f"CREATE DATABASE {quote(target)} TEMPLATE {quote(template)}")


def shared_name(target: str, run_suffix: str = "") -> str:
    """The test database's name without this run's ``run_suffix`` and pytest-xdist's ``_gwN``: one template
    serves every worker and every run."""
    return re.sub(r"_gw\d+$", "", target.removesuffix(run_suffix) if run_suffix else target)


def create_test_db_from_template(
    connection: BaseDatabaseWrapper, *, verbosity: int, serialize: bool, run_suffix: str = ""
) -> str:
    """``connection.creation.create_test_db`` by a copy of the migrated template (built first if missing);
    returns the test database's name, to which the connection (and settings) now point. ``run_suffix`` ends
    the test database's name of this run only (an SQLite file's run id): the template's name leaves it out."""
    from django.conf import settings

    creation = connection.creation
    target = creation._get_test_db_name()
    templates = _Templates(connection, shared_name(target, run_suffix))
    template = templates.name(migrations_key())
    with _lock(templates.lock_path()):
        if template not in templates.names():
            for stale in templates.names():
                templates.drop(stale)
            building = f"{template}-building" if templates.sqlite else f"{template}_building"
            test_settings = connection.settings_dict["TEST"]
            saved = test_settings.get("NAME")
            test_settings["NAME"] = building
            try:  # the class's method: the connection's own may be this function
                type(creation).create_test_db(creation, verbosity=verbosity, autoclobber=True, serialize=False)
            finally:
                test_settings["NAME"] = saved
                connection.close()
            templates.rename(building, template)
        templates.copy(template, target)
    _FLUSHED.pop(connection.alias, None)
    settings.DATABASES[connection.alias]["NAME"] = target
    connection.settings_dict["NAME"] = target
    connection.close()
    if serialize:
        connection._test_serialized_contents = creation.serialize_db_to_string()  # type: ignore[attr-defined]
    connection.ensure_connection()
    return target


def copy_from_template(connection: BaseDatabaseWrapper, *, run_suffix: str = "") -> None:
    """Make ``connection.creation.create_test_db`` (which Django's ``setup_databases`` calls) copy the template."""

    def create_test_db(verbosity: int = 1, autoclobber: bool = False, serialize: bool = True, keepdb: bool = False):
        return create_test_db_from_template(connection, verbosity=verbosity, serialize=serialize, run_suffix=run_suffix)

    connection.creation.create_test_db = create_test_db  # type: ignore[method-assign]


# What ``post_migrate`` writes (content types, permissions; ``participation.apps`` installs the answer rules' trigger):
# Django's flush after a transactional test empties these tables and writes them again, with the trigger.
POST_MIGRATE_TABLES = ("django_content_type", "auth_permission")
_TRIGGERS = {
    "postgresql": "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname",
    "sqlite": "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
}


@dataclass
class _Flushed:
    """A connection's state right after Django's flush: its tables and what post_migrate wrote."""

    tables: list[str]
    fingerprint: str


_FLUSHED: dict[str, _Flushed] = {}  # by database alias (the process's test databases)


def _post_migrate_fingerprint(connection: BaseDatabaseWrapper) -> str:
    """A digest of what ``post_migrate`` writes: every content type, every permission, every trigger."""
    digest = hashlib.sha256()
    with connection.cursor() as cursor:
        for sql in (
            "SELECT id, app_label, model FROM django_content_type ORDER BY id",
            "SELECT id, content_type_id, codename, name FROM auth_permission ORDER BY id",
            _TRIGGERS[connection.vendor],
        ):
            cursor.execute(sql)
            digest.update(repr(cursor.fetchall()).encode())
    return digest.hexdigest()


def _tables_with_rows(connection: BaseDatabaseWrapper, tables: list[str]) -> list[str]:
    """The ``tables`` holding at least one row, in one query."""
    quote = connection.ops.quote_name
    sql = " UNION ALL ".join(f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(table)})" for table in tables)
    with connection.cursor() as cursor:
        cursor.execute(sql, tables)
        return [row[0] for row in cursor.fetchall()]


def flush_after_test(connection: BaseDatabaseWrapper) -> None:
    """Empty the test database after a transactional test, as Django's ``flush`` does, at a fraction of its cost.

    Django's flush (``TransactionTestCase``) truncates every table, then ``post_migrate`` writes the content
    types, the permissions and the answer rules' trigger again: 0.1 CPU-s in the test process and 0.2 in
    PostgreSQL's per test (0.005 and 0.02 here; docs: Benchmarks). Here only the tables a test wrote are
    emptied (``DELETE``: the foreign keys are deferred, so any order holds), and what ``post_migrate`` wrote is
    kept while it is as the last flush left it (its digest unchanged); otherwise (a test migrated, or added a
    content type, or changed the trigger) Django's own flush runs, and its result becomes the new reference."""
    from django.core.management import call_command
    from django.db import DatabaseError

    flushed = _FLUSHED.get(connection.alias)
    try:
        if flushed is not None and _post_migrate_fingerprint(connection) == flushed.fingerprint:
            written = [t for t in _tables_with_rows(connection, flushed.tables) if t not in POST_MIGRATE_TABLES]
            quote = connection.ops.quote_name
            connection.ops.execute_sql_flush([f"DELETE FROM {quote(table)}" for table in written])
            return
    except DatabaseError:  # a table gone (a test migrated back and failed): Django's flush says what is wrong
        pass
    call_command(
        "flush",
        verbosity=0,
        interactive=False,
        database=connection.alias,
        reset_sequences=False,
        allow_cascade=False,
        inhibit_post_migrate=False,
    )
    tables = sorted(connection.introspection.django_table_names(only_existing=True, include_views=False))
    _FLUSHED[connection.alias] = _Flushed(tables, _post_migrate_fingerprint(connection))
