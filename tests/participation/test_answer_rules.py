"""Migration 0011 turns the answers' CHECK constraints into the task registry's rules
(``participation.answer_rules``) only when every stored answer meets them; the rules' SQL."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from participation.answer_rules import condition

BEFORE = [("participation", "0010_adaptive_designs")]


def test_the_condition_names_every_measure_and_groups_the_rules():
    sql = condition({"agree": ("in", (0, 1)), "choice": ("in", (0, 0.5, 1)), "prediction": ("between", (0, 100))})
    assert sql == (
        "NEW.measure IN ('agree', 'choice', 'prediction') AND (NEW.number IS NULL OR CASE "
        "WHEN NEW.measure IN ('agree') THEN NEW.number IN (0, 1) "
        "WHEN NEW.measure IN ('choice') THEN NEW.number IN (0, 0.5, 1) "
        "WHEN NEW.measure IN ('prediction') THEN NEW.number BETWEEN 0 AND 100 ELSE TRUE END)"
    )
    assert condition({"rationale": None}, row="") == "measure IN ('rationale')"
    with pytest.raises(ValueError, match="not a lower-case identifier"):
        condition({"x') OR 1=1 --": None})


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_stored_answer_the_rules_refuse_stops_the_migration_and_changes_nothing():
    leaves = _executor().loader.graph.leaf_nodes()
    try:
        executor = _executor()
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        owner = old.get_model("auth", "User").objects.create(username="owner")
        study = old.get_model("studies", "Study").objects.create(
            slug="s", title="s", spec={"format": 2}, spec_hash="h", owner=owner
        )
        participant = old.get_model("participation", "Participant").objects.create(
            study=study, external_id="p", seed=1, plan=[]
        )
        answers = old.get_model("participation", "Answer")
        # Allowed by 0010's constraints (fair_use had no range there), refused by the registry's 1..7.
        answers.objects.create(participant=participant, page="x", question="q1", measure="fair_use", number=9)
        answers.objects.create(participant=participant, page="x", question="q2", measure="agree", number=1)

        with pytest.raises(RuntimeError, match=r"refuse \(measure: rows\): fair_use: 1$"):
            _executor().migrate(leaves)
        assert answers.objects.count() == 2  # nothing changed; still at 0010, whose constraints hold
        with pytest.raises(IntegrityError), transaction.atomic():
            answers.objects.create(participant=participant, page="x", question="q3", measure="bogus", number=1)

        answers.objects.filter(question="q1").update(number=7)
        _executor().migrate(leaves)
        from participation.models import Answer

        assert sorted(Answer.objects.values_list("question", "number")) == [("q1", 7.0), ("q2", 1.0)]
        with pytest.raises(IntegrityError), transaction.atomic():
            Answer.objects.create(participant_id=participant.pk, page="x", question="q4", measure="fair_use", number=9)
    finally:
        _executor().migrate(leaves)
