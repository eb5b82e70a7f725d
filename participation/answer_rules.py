"""The database's rules for a stored answer (``Answer``), generated from the task registry: its measure is
one that a registered task type writes (``tasks.MEASURE_RULES``) and its number, when it has one, is one
that measure's codebook entry allows (``core.columns.Column.number_rule``: the levels of a 0/1 or
levelled measure, the bounds of a ranged one).

The rules are a trigger on the answers table (PostgreSQL: ``answer_rules``, a ``WHEN`` condition with a
function that raises ``check_violation``; SQLite: ``answer_rules_insert`` / ``_update`` raising
``ABORT``), so a refused row is an ``IntegrityError`` like a failed CHECK constraint. Unlike a CHECK
constraint in the model's ``Meta`` they are not part of the migration state: every ``migrate``
reinstalls them from the registry (``post_migrate``, ``participation.apps``), so a new task type's
measures are accepted, and any other still refused, without a migration of their own (docs, "Add a
task type"). Migration 0011 replaced the former CHECK constraints with them, after checking the stored
answers against them.
"""

import re

from django.db.backends.base.base import BaseDatabaseWrapper

TABLE = "surveys_answer"  # participation.models.Answer's table (it keeps its name from before the app owned it)
Rule = tuple[str, tuple[float, ...]] | None
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _literal(value: float) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def _names(measures: list[str]) -> str:
    for measure in measures:
        if not _NAME.match(measure):  # registry names only; never quoted input
            raise ValueError(f"measure name {measure!r} is not a lower-case identifier")
    return ", ".join(f"'{m}'" for m in measures)


def condition(rules: dict[str, Rule], row: str = "NEW.") -> str:
    """The SQL condition a row meets (``row``: ``NEW.`` in a trigger, ``""`` over the table): the measure
    is registered, and the number is blank or allowed by its measure's rule."""
    grouped: dict[Rule, list[str]] = {}
    for measure in sorted(rules):
        grouped.setdefault(rules[measure], []).append(measure)
    cases = []
    for rule, measures in grouped.items():
        if rule is None:
            continue
        kind, values = rule
        allowed = (
            f"{row}number IN ({', '.join(map(_literal, values))})"
            if kind == "in"
            else f"{row}number BETWEEN {_literal(values[0])} AND {_literal(values[1])}"
        )
        cases.append(f"WHEN {row}measure IN ({_names(measures)}) THEN {allowed}")
    known = f"{row}measure IN ({_names(sorted(rules))})"
    if not cases:
        return known
    return f"{known} AND ({row}number IS NULL OR CASE {' '.join(cases)} ELSE TRUE END)"


def _or_registry(rules: dict[str, Rule] | None) -> dict[str, Rule]:
    """``rules``, or the registry's as it is now (read at call time)."""
    from tasks import MEASURE_RULES

    return MEASURE_RULES if rules is None else rules


def install(connection: BaseDatabaseWrapper, rules: dict[str, Rule] | None = None) -> None:
    """(Re)create the trigger from ``rules`` (default: the registry's)."""
    check = condition(_or_registry(rules))
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE OR REPLACE FUNCTION answer_refused() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'answer refused: measure % with number % is not allowed by the task registry "
                "(participation.answer_rules)', NEW.measure, NEW.number USING ERRCODE = 'check_violation'; END $$"
            )
            cursor.execute(f"DROP TRIGGER IF EXISTS answer_rules ON {TABLE}")
            cursor.execute(
                f"CREATE TRIGGER answer_rules BEFORE INSERT OR UPDATE ON {TABLE} FOR EACH ROW "
                f"WHEN (NOT ({check})) EXECUTE FUNCTION answer_refused()"
            )
        elif connection.vendor == "sqlite":
            for event, name in (("INSERT", "answer_rules_insert"), ("UPDATE", "answer_rules_update")):
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
                cursor.execute(
                    f"CREATE TRIGGER {name} BEFORE {event} ON {TABLE} FOR EACH ROW WHEN NOT ({check}) BEGIN "
                    "SELECT RAISE(ABORT, 'answer refused: its measure or number is not allowed by the task "
                    "registry (participation.answer_rules)'); END"
                )
        else:
            raise NotImplementedError(f"answer rules for {connection.vendor} (PostgreSQL and SQLite only)")


def uninstall(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS answer_rules ON {TABLE}")
            cursor.execute("DROP FUNCTION IF EXISTS answer_refused()")
        else:
            cursor.execute("DROP TRIGGER IF EXISTS answer_rules_insert")
            cursor.execute("DROP TRIGGER IF EXISTS answer_rules_update")


def stored_violations(connection: BaseDatabaseWrapper, rules: dict[str, Rule] | None = None) -> dict[str, int]:
    """Measure -> how many stored answers the rules would refuse (none, for data the platform wrote)."""
    refused = f"NOT ({condition(_or_registry(rules), row='')})"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT measure, COUNT(*) FROM {TABLE} WHERE {refused} GROUP BY measure")
        return {measure: count for measure, count in cursor.fetchall()}


def table_exists(connection: BaseDatabaseWrapper) -> bool:
    """Whether the answers table exists (``post_migrate`` may run before it does, e.g. migrating back)."""
    return TABLE in connection.introspection.table_names()
