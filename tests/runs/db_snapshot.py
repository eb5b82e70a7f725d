"""The rows a costly set-up adds (studies answered by simulated participants), built once per process in a
transaction that is rolled back, and inserted again, as they were, into each test that needs them: a test
then costs an insert of the rows, not the simulation, and may change them freely (its own transaction or
flush removes them), transactional tests and live servers included.

Rows are inserted raw (as ``loaddata`` does: no ``auto_now``, no signals), inside one transaction, so the
database's deferred foreign-key checks see every row. The set-up's user is replaced by the test's own
(same username, another primary key on PostgreSQL, whose sequences never roll back)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, models, transaction


@dataclass(frozen=True)
class Snapshot:
    """Rows (attribute name -> value) per model, and the primary key of the user they were made for."""

    rows: dict[type[models.Model], list[dict[str, Any]]]
    user_pk: Any


class _RolledBack(Exception):
    pass


def _tables() -> list[type[models.Model]]:
    return [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]


def _pks() -> dict[type[models.Model], set]:
    return {model: set(model._base_manager.values_list("pk", flat=True)) for model in _tables()}


def take(setup: Callable[[], Any], build: Callable[[Any], Any]) -> tuple[Snapshot, Any]:
    """The rows ``build(user)`` adds and its value; ``setup()`` makes the user and what each test makes by
    itself (a row the build references must be the user's, or older than the set-up). Every row is undone."""
    result: list[tuple[Snapshot, Any]] = []
    try:
        with transaction.atomic():
            base = _pks()
            user = setup()
            before = _pks()
            value = build(user)
            rows = {}
            for model in _tables():
                fields = [f.attname for f in model._meta.concrete_fields]
                pk = model._meta.pk.attname
                new = [row for row in model._base_manager.values(*fields) if row[pk] not in before[model]]
                for field in model._meta.concrete_fields:
                    target = field.related_model
                    if field.is_relation and target is not type(user) and isinstance(target, type):
                        made = before.get(target, set()) - base.get(target, set())
                        if any(row[field.attname] in made for row in new):
                            raise ValueError(f"{model.__name__}.{field.name} refers to a row the set-up made")
                if new:
                    rows[model] = new
            result.append((Snapshot(rows, user.pk), value))
            raise _RolledBack
    except _RolledBack:
        pass
    return result[0]


def restore(snapshot: Snapshot, user: Any) -> None:
    """Insert the snapshot's rows, their references to the set-up's user made to ``user``."""
    user_model = get_user_model()
    with transaction.atomic():
        for model, rows in snapshot.rows.items():
            if model._meta.parents:
                raise ValueError(f"{model.__name__}: multi-table inheritance is not supported")
            fields = model._meta.concrete_fields
            to_user = [
                f.attname for f in fields if f.is_relation and f.related_model in (user_model, settings.AUTH_USER_MODEL)
            ]
            objects = []
            for row in rows:
                values = {**row, **{name: user.pk for name in to_user if row[name] == snapshot.user_pk}}
                objects.append(model(**values))
            batch = max(connection.ops.bulk_batch_size(fields, objects), 1)
            for start in range(0, len(objects), batch):
                model._base_manager._insert(objects[start : start + batch], fields=fields, raw=True)
