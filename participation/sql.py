"""Plain parametrised INSERT and UPDATE statements for the page-submission path.

Saving a page is three statements (advance the participant, insert the answers, record the
visit). Through the ORM each costs about 1 ms of Python on the 2-core benchmark machine, several
times the statement itself (``bench/launch.py``), so this path builds the SQL directly: table and
column names come from the models' metadata, values pass through each field's
``get_db_prep_save`` exactly as the ORM would convert them, and every constraint is still the
database's. The statements are standard SQL that PostgreSQL and SQLite (>= 3.24) both accept.
"""

from collections.abc import Mapping, Sequence
from functools import cache

from django.db import connection
from django.db.models import Field, Model


def _field(model: type[Model], name: str) -> Field:
    """The model's field ``name``, which holds a column (a reverse relation or a generic foreign key has none)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


def _quoted(model: type[Model], names: Sequence[str]) -> tuple[str, list[str]]:
    qn = connection.ops.quote_name
    return qn(model._meta.db_table), [qn(_field(model, name).column) for name in names]


@cache
def _fields(model: type[Model], names: tuple[str, ...]) -> tuple[Field, ...]:
    return tuple(_field(model, name) for name in names)


def _prepared(model: type[Model], names: Sequence[str], values: Sequence) -> list:
    return [
        field.get_db_prep_save(value, connection)
        for field, value in zip(_fields(model, tuple(names)), values, strict=True)
    ]


@cache
def _insert_sql(model: type[Model], names: tuple[str, ...], n_rows: int, conflict: tuple, update: tuple) -> str:
    table, columns = _quoted(model, names)
    row = "(" + ", ".join(["%s"] * len(names)) + ")"
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([row] * n_rows)}"
    if conflict:
        _, conflict_columns = _quoted(model, conflict)
        _, update_columns = _quoted(model, update)
        assignments = ", ".join(f"{c} = excluded.{c}" for c in update_columns)
        sql += f" ON CONFLICT ({', '.join(conflict_columns)}) DO UPDATE SET {assignments}"
    return sql


Statement = tuple[str, list]  # SQL and its parameters


def insert_statement(
    model: type[Model],
    names: Sequence[str],
    rows: Sequence[Sequence],
    *,
    on_conflict: Sequence[str] = (),
    update: Sequence[str] = (),
) -> Statement:
    """``INSERT INTO model (names) VALUES rows`` (at least one row); with ``on_conflict`` (the columns of a
    unique constraint) an existing row gets the new values of the ``update`` columns instead."""
    sql = _insert_sql(model, tuple(names), len(rows), tuple(on_conflict), tuple(update))
    return sql, [value for row in rows for value in _prepared(model, names, row)]


def insert_rows(
    model: type[Model],
    names: Sequence[str],
    rows: Sequence[Sequence],
    *,
    on_conflict: Sequence[str] = (),
    update: Sequence[str] = (),
) -> None:
    """Run :func:`insert_statement` (nothing without rows)."""
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.execute(*insert_statement(model, names, rows, on_conflict=on_conflict, update=update))


def _where(model: type[Model], where: Mapping[str, object]) -> tuple[tuple, list]:
    """The shape of a WHERE (column names, and how many values each tuple has) and its parameters;
    a tuple value means ``IN (..)``, any other value equality."""
    shape, params = [], []
    for name, value in where.items():
        values = value if isinstance(value, tuple) else (value,)
        shape.append((name, len(values) if isinstance(value, tuple) else None))
        params += _prepared(model, [name] * len(values), values)
    return tuple(shape), params


def _conditions(model: type[Model], shape: tuple) -> str:
    _, columns = _quoted(model, [name for name, _ in shape])
    return " AND ".join(
        f"{c} = %s" if n is None else f"{c} IN ({', '.join(['%s'] * n)})"
        for c, (_, n) in zip(columns, shape, strict=True)
    )


@cache
def _insert_guarded_sql(
    model: type[Model],
    names: tuple[str, ...],
    guard: type[Model],
    matched: tuple,
    conflict: tuple,
    lock: bool,
) -> str:
    table, columns = _quoted(model, names)
    guard_table, _ = _quoted(guard, [])
    _, conflict_columns = _quoted(model, conflict)
    values = ", ".join(["%s"] * len(names))
    conditions = _conditions(guard, matched)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} FROM {guard_table} WHERE {conditions}"
        + (" FOR SHARE" if lock else "")
        + f" ON CONFLICT ({', '.join(conflict_columns)}) DO NOTHING"
    )


def insert_row_if(
    model: type[Model],
    names: Sequence[str],
    row: Sequence,
    *,
    guard: type[Model],
    where: Mapping[str, object],
    conflict: Sequence[str],
) -> int:
    """``INSERT INTO model (names) SELECT row FROM guard WHERE ..`` in one statement: the row is
    inserted only while a ``guard`` row matches ``where``, and not at all when it would break the
    unique constraint on ``conflict`` (a tuple in ``where`` means ``IN (..)``). On PostgreSQL the
    guard row is read ``FOR SHARE``, so a transaction that holds it locked (``select_for_update``)
    and changes it makes this statement wait and then re-check ``where`` on the committed row;
    SQLite runs writers one at a time. Returns the number of rows inserted (0 or 1)."""
    shape, where_params = _where(guard, where)
    sql = _insert_guarded_sql(model, tuple(names), guard, shape, tuple(conflict), connection.vendor == "postgresql")
    params = _prepared(model, names, row) + where_params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


@cache
def _update_sql(model: type[Model], changed: tuple[str, ...], matched: tuple) -> str:
    table, set_columns = _quoted(model, changed)
    assignments = ", ".join(f"{c} = %s" for c in set_columns)
    return f"UPDATE {table} SET {assignments} WHERE {_conditions(model, matched)}"


def update_statement(model: type[Model], changes: Mapping[str, object], where: Mapping[str, object]) -> Statement:
    """``UPDATE model SET changes WHERE`` every ``where`` column equals its value (a tuple means ``IN (..)``)."""
    shape, where_params = _where(model, where)
    return _update_sql(model, tuple(changes), shape), _prepared(
        model, list(changes), list(changes.values())
    ) + where_params


def update_rows(model: type[Model], changes: Mapping[str, object], where: Mapping[str, object]) -> int:
    """Run :func:`update_statement`; returns the number of rows changed."""
    with connection.cursor() as cursor:
        cursor.execute(*update_statement(model, changes, where))
        return cursor.rowcount


def execute_together(statements: Sequence[Statement]) -> None:
    """Run ``statements`` in order, in one round trip to the database where it takes several in one query:
    PostgreSQL through Django's default client-side binding cursors (psycopg sends ``a; b`` as one query
    string; not with the ``server_side_binding`` option, whose prepared statements take one each). Else
    (SQLite) one after the other. Each statement's rows changed are not returned."""
    together = connection.vendor == "postgresql" and not connection.settings_dict["OPTIONS"].get("server_side_binding")
    with connection.cursor() as cursor:
        if together:
            cursor.execute("; ".join(sql for sql, _ in statements), [p for _, params in statements for p in params])
            return
        for sql, params in statements:
            cursor.execute(sql, params)
