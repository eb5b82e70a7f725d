"""Each test process's database copied from a migrated template instead of migrated afresh.

Migrating a new test database renders every migration's model state: about 10 CPU seconds per process (each
``make test`` worker and the serial part). The first process to need a database builds the template (the
ordinary ``create_test_db``: migrations, post-migrate rows, cache table) under a name keyed by the migration
files' contents, under a file lock; every process then copies it (PostgreSQL ``CREATE DATABASE ... TEMPLATE``,
a file copy on SQLite). A changed, added or removed migration changes the key, so a stale template is never
used; templates of other keys are dropped when a new one is built. The migration tests still migrate backwards
and forwards on the copy.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
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
