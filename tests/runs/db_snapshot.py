"""The rows a costly set-up adds (studies answered by simulated participants), built once per process in a
transaction that is rolled back, and inserted again, as they were, into each test that needs them: a test
then costs an insert of the rows, not the simulation, and may change them freely (its own transaction or
flush removes them), transactional tests and live servers included.

``take(setup, build)``: ``setup()`` makes what each test makes by itself (the researcher, her demo study);
the snapshot is the rows ``build`` adds after it. A test restores it after making the same set-up: the
rows' references to set-up rows are mapped to the test's own, in creation order (on PostgreSQL, whose
sequences never roll back, they have other keys). Rows are inserted raw (as ``loaddata`` does: no
``auto_now``, no signals) in one transaction, so the deferred foreign-key checks see every row."""

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connection, models, transaction

Model = type[models.Model]


@dataclass(frozen=True)
class Snapshot:
    """The build's rows (attribute name -> value) per model, and the keys of the rows the set-up made, in order."""

    rows: dict[Model, list[dict[str, Any]]]
    setup_keys: dict[Model, list[Any]]


class _RolledBack(Exception):
    pass


def _tables() -> list[Model]:
    return [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]


def _keys() -> dict[Model, list[Any]]:
    return {model: sorted(model._base_manager.values_list("pk", flat=True)) for model in _tables()}


def take(setup: Callable[[], Any], build: Callable[[Any], Any], *, blocker: Any = None) -> tuple[Snapshot, Any]:
    """The rows ``build(setup())`` adds and its value; every row (the set-up's too) is undone. ``blocker`` (a
    fixture's ``django_db_blocker``) is unblocked around the work; without it the caller unblocks."""
    with blocker.unblock() if blocker is not None else nullcontext():
        return _take(setup, build)


def _take(setup: Callable[[], Any], build: Callable[[Any], Any]) -> tuple[Snapshot, Any]:
    result: list[tuple[Snapshot, Any]] = []
    try:
        with transaction.atomic():
            base = _keys()
            made = setup()
            before = _keys()
            value = build(made)
            rows = {}
            for model in _tables():
                known = set(before[model])
                fields = [f.attname for f in model._meta.concrete_fields]
                new = [row for row in model._base_manager.values(*fields) if row[model._meta.pk.attname] not in known]
                if new:
                    rows[model] = new
            _shift(rows)
            setup_keys = {m: sorted(set(keys) - set(base[m])) for m, keys in before.items() if len(keys) > len(base[m])}
            result.append((Snapshot(rows, setup_keys), value))
            raise _RolledBack
    except _RolledBack:
        pass
    return result[0]


SHIFT = 10**9  # the build's own rows get keys this much higher: never those of a test's rows (SQLite reuses keys)


def _shift(rows: dict[Model, list[dict[str, Any]]]) -> None:
    """Move the keys of the build's rows (automatic integer keys) and the references to them by SHIFT."""
    shifted = {
        m: {row[m._meta.pk.attname] for row in found}
        for m, found in rows.items()
        if isinstance(m._meta.pk, models.AutoField) and not isinstance(m._meta.pk, models.SmallAutoField)
    }
    for model, found in rows.items():
        refs = [f for f in model._meta.concrete_fields if f.is_relation and f.related_model in shifted]
        for row in found:
            for f in refs:
                if row[f.attname] in shifted[f.related_model]:
                    row[f.attname] += SHIFT
            if model in shifted:
                row[model._meta.pk.attname] += SHIFT


def _mapping(snapshot: Snapshot, model: Model) -> dict[Any, Any]:
    """The keys of the ``model`` rows the snapshot's set-up made -> the test's newest rows' (its own set-up's);
    references to older rows (made by the migrations) are kept."""
    then = snapshot.setup_keys.get(model, [])
    if not then:
        return {}
    now = sorted(model._base_manager.values_list("pk", flat=True))
    if len(now) < len(then):
        raise ValueError(f"{model.__name__}: the test has {len(now)} rows, the snapshot's set-up made {len(then)}")
    return dict(zip(then, now[-len(then) :], strict=True))


def restore(snapshot: Snapshot) -> None:
    """Insert the snapshot's rows into the test's database, which holds the same set-up as the snapshot's."""
    references = {
        model: {f.attname: f.related_model for f in model._meta.concrete_fields if f.is_relation}
        for model in snapshot.rows
    }
    targets = {target for fields in references.values() for target in fields.values()}
    mappings = {target: _mapping(snapshot, target) for target in targets}  # before any row is inserted
    with transaction.atomic():
        for model, rows in snapshot.rows.items():
            if model._meta.parents:
                raise ValueError(f"{model.__name__}: multi-table inheritance is not supported")
            refs = references[model]
            objects = [
                model(**{**row, **{name: mappings[t].get(row[name], row[name]) for name, t in refs.items()}})
                for row in rows
            ]
            fields = model._meta.concrete_fields
            batch = max(connection.ops.bulk_batch_size(fields, objects), 1)
            for start in range(0, len(objects), batch):
                model._base_manager._insert(objects[start : start + batch], fields=fields, raw=True)
