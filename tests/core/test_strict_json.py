"""No JSON the project stores or writes holds NaN or Infinity (``core.strict_json``): every JSON column refuses
them on SQLite as on PostgreSQL (before: SQLite stored the text ``Infinity`` that PostgreSQL refuses), through
the ORM and through the plain statements of the page-submission path, and so do the JSON files it writes;
nothing is stored or written when they are refused."""

import json
import math
from decimal import Decimal

import numpy as np
import pytest
from django.apps import apps
from django.db import models, transaction

from core.strict_json import NonFiniteJSON, StrictJSONEncoder, StrictJSONField, dumps

BAD = [math.nan, math.inf, -math.inf]


def test_dumps_refuses_nan_and_infinity_and_says_where():
    value = {"fit": {"estimate": [0.5, math.inf]}, "rows": [[1, 2], [3, 4]]}
    with pytest.raises(NonFiniteJSON, match=r"\$\.fit\.estimate\[1\] is inf"):
        dumps(value)
    for bad in BAD:
        with pytest.raises(NonFiniteJSON, match=repr(bad)):
            dumps([["a~b", bad]])
        with pytest.raises(NonFiniteJSON):  # indented (the pure-Python encoder) too
            dumps({"x": bad}, indent=1)
        with pytest.raises(NonFiniteJSON, match=r"\$\.x is " + repr(bad)):  # a NumPy number
            dumps({"x": np.float64(bad)})
        with pytest.raises(NonFiniteJSON, match="default"):  # a number a default() gives
            dumps({"x": Decimal(bad)}, default=float)
    with pytest.raises(NonFiniteJSON):  # json.dump with the encoder, as a file is written
        json.dump({"x": math.nan}, open("/dev/null", "w"), cls=StrictJSONEncoder)
    finite = {"a": [0.1, -2.5e300, 1e-300, 0, None, "NaN", True], "b": {"c": [[1.0]]}}
    assert json.loads(dumps(finite)) == finite
    with pytest.raises(ValueError, match="Circular"):  # other errors pass as they are
        loop: list = []
        loop.append(loop)
        dumps(loop)


def test_every_json_column_of_the_project_is_strict():
    """Every ``JSONField`` of the project's apps (a third-party app's columns are its own)."""
    project = ("accounts", "participation", "research", "runs", "studies", "surveys")
    columns = [
        field
        for model in apps.get_models()
        if model._meta.app_label in project
        for field in model._meta.get_fields()
        if isinstance(field, models.JSONField)
    ]
    assert len(columns) == 19  # with the preregistration's plan and the stored quality verdicts (rules, flags)
    for field in columns:
        assert isinstance(field, StrictJSONField) and field.encoder is StrictJSONEncoder, field


@pytest.mark.django_db
@pytest.mark.parametrize("bad", BAD, ids=["nan", "inf", "-inf"])
def test_storing_nan_or_infinity_fails_loudly_and_stores_nothing(researcher, bad):
    """Through the ORM (create, save, update) and the page-submission path's plain statements
    (``participation.sql``), on the database the tests run on (CI: PostgreSQL)."""
    from participation.models import AdaptiveDecision, AdaptiveStripe
    from participation.sql import insert_statement, update_statement
    from runs.models import Job
    from studies.services import study_load
    from tests.participation.test_adaptive import adaptive_spec

    study = study_load(spec=adaptive_spec(), owner=researcher).study
    stripe = AdaptiveStripe.objects.create(study=study, block="loan", stripe=0, pending={"a~b": 0.5})
    job = Job.objects.create(kind="analysis", study=study, params={"alpha": 0.5})
    attempts = [
        lambda: Job.objects.create(kind="analysis", study=study, params={"alpha": bad}),
        lambda: Job.objects.filter(pk=job.pk).update(result={"estimate": [1.0, bad]}),
        lambda: AdaptiveStripe.objects.filter(pk=stripe.pk).update(pending={"a~b": bad}),
        lambda: _run(update_statement(AdaptiveStripe, {"pending": {"a~b": bad}}, {"id": stripe.pk})),
        lambda: _run(
            insert_statement(
                AdaptiveDecision,
                ("study", "block", "slot", "stripe", "sequence", "item", "candidates", "seconds", "created_at"),
                [(study.pk, "loan", 0, 0, 0, "a~b", [["a~b", bad]], 0.0, study.created_at)],
            )
        ),
    ]
    for attempt in attempts:
        with pytest.raises(NonFiniteJSON), transaction.atomic():
            attempt()
    job.params = {"alpha": bad}
    with pytest.raises(NonFiniteJSON), transaction.atomic():
        job.save()
    assert Job.objects.get(pk=job.pk).params == {"alpha": 0.5} and Job.objects.get(pk=job.pk).result is None
    assert Job.objects.count() == 1 and not AdaptiveDecision.objects.exists()
    assert AdaptiveStripe.objects.get(pk=stripe.pk).pending == {"a~b": 0.5}


def _run(statement) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(*statement)


def test_a_report_file_with_nan_is_refused_and_not_written(tmp_path):
    from runs.reports.base import write_json

    path = tmp_path / "results.json"
    with pytest.raises(NonFiniteJSON, match=r"\$\.effect\.ci\[0\] is nan"):
        write_json({"effect": {"ci": [np.float64("nan"), 1.0]}}, path)
    assert not path.exists()
    write_json({"effect": {"ci": [np.float64(0.5), 1.0]}}, path)
    assert json.loads(path.read_text()) == {"effect": {"ci": [0.5, 1.0]}}


def test_the_api_refuses_a_number_too_large_for_a_float_with_a_400():
    """``1e999`` parses as infinity (``NaN`` and ``Infinity`` are refused by REST framework's strict parser):
    refused with the place, before anything could try to store it."""
    import io

    from rest_framework.exceptions import ParseError

    from research.api.parsers import BoundedJSONParser

    with pytest.raises(ParseError, match=r"numbers must be finite: \$\.params\.alpha\[1\] is inf"):
        BoundedJSONParser().parse(io.BytesIO(b'{"params": {"alpha": [0.5, 1e999]}}'))
    for constant in (b"NaN", b"-Infinity"):
        with pytest.raises(ParseError):
            BoundedJSONParser().parse(io.BytesIO(b'{"x": ' + constant + b"}"))
    assert BoundedJSONParser().parse(io.BytesIO(b'{"x": 1e308}')) == {"x": 1e308}
