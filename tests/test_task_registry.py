"""The task registry is complete: every registered task type owns every link of its chain (options,
items, page, measures, BTS positive answer, integrity bounds, builder template, estimators, analysis or
a stated reason, report tables, simulation), and nothing about a task type is skipped silently."""

import dataclasses
import inspect
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.template.loader import get_template
from django.utils.module_loading import import_string

from core.report_texts import ReportTable
from participation.models import Answer
from runs.reports.design import DESIGN_TABLES, GENERIC_TABLES
from studies.builder import TEMPLATES
from tasks import BLOCK_TASKS, MEASURE_RULES, MEASURES, REGISTRY, TASK_TYPES, block_task
from tasks.base import BlockTask, BtsPositive, TaskType
from tasks.detection import CHECKS as DETECTION_CHECKS
from tasks.item_shapes import ITEM_SHAPES
from tasks.yields import Yield

BLOCKS = list(BLOCK_TASKS.values())


def _overrides(task: TaskType, method: str, base: type = TaskType) -> bool:
    return getattr(type(task), method) is not getattr(base, method)


@pytest.mark.parametrize("task", TASK_TYPES, ids=lambda t: t.name)
def test_every_task_type_has_its_page_measures_and_simulation(task):
    assert task.name and task.kinds
    for kind in task.kinds:
        get_template(task.template({"kind": kind}))  # raises when the template is missing
    assert _overrides(task, "form") and _overrides(task, "simulate"), "a task type needs its form and its simulation"
    if task.name != "instructions":  # the one page kind that stores no answer
        assert task.measures, f"{task.name} writes no measure"
    for measure, column in task.measures.items():
        assert measure in MEASURES and column.type and column.meaning


def test_names_and_kinds_are_unique():
    names = [t.name for t in TASK_TYPES]
    assert len(set(names)) == len(names)
    assert sum(len(t.kinds) for t in TASK_TYPES) == len(REGISTRY)


@pytest.mark.parametrize("task", BLOCKS, ids=lambda t: t.name)
def test_every_block_task_owns_its_whole_chain(task):
    assert isinstance(task, BlockTask)
    assert task.name in task.kinds, "a format 2 block's pages are of the kind its task names"
    assert set(task.needs) <= set(task.options), f"{task.name} needs an option it does not take"
    assert ITEM_SHAPES[task.item_shape.name] is task.item_shape, f"{task.name}: an unregistered item shape"
    assert task.item_shape.option.items() <= task.options.items(), (
        "a block takes its shape's item list as the shape says"
    )
    for name in task.estimators:
        assert callable(import_string(name)), name
    # an analysis or the reason there is none: never both, never neither
    assert (task.analysis is None) != (not task.no_analysis), task.name
    if task.analysis:
        analysis = import_string(task.analysis)
        assert list(inspect.signature(analysis).parameters) == ["spec", "block", "answers", "groups", "opts"]
        assert task.report_tables, f"{task.name}'s analysis names no report table"
    for name, table in task.report_tables.items():
        assert isinstance(table, ReportTable) and table.heading and table.columns and table.explanation.formula, name
        assert name not in GENERIC_TABLES and DESIGN_TABLES[name] is table, f"{name}: another task's table name"
        assert table.estimate is None or table.estimate in table.columns, name
    if "bts" in task.options:
        assert _overrides(task, "bts_positive", BlockTask), (
            f"{task.name} takes a BTS follow-up but has no positive answer"
        )


@pytest.mark.parametrize("task", [t for t in BLOCKS if t.adaptive], ids=lambda t: t.name)
def test_an_adaptive_task_type_names_its_design_fit_and_measure(task):
    """``adaptive`` (``tasks.base.Adaptive``): a design of ``analysis.adaptive_design``, a refit function
    and one of the type's measures (the answers the refit reads)."""
    from analysis.adaptive_design import DESIGNS

    assert task.adaptive.design in DESIGNS and callable(import_string(task.adaptive.fit))
    assert task.adaptive.measure in task.measures


@pytest.mark.parametrize("task", BLOCKS, ids=lambda t: t.name)
def test_every_block_type_declares_what_it_yields(task):
    """``yields`` is set on the type itself, empty when its estimators give nothing an audit or a calibration uses;
    each is a ``tasks.yields.Yield`` fitted to one of the type's measures."""
    assert "yields" in vars(type(task)), f"{task.name} does not declare what its estimators yield"
    for what, measure in task.yields.items():
        assert isinstance(what, Yield) and what.meaning and measure in task.measures, (task.name, what, measure)


def test_every_audit_source_option_reads_a_yield_some_type_declares():
    """Each source option (``runs.human_source_options.OPTIONS``) needs a yield that a registered type declares, is a
    field of the audit's parameters and of its API, and its command option is the field's name; the task types each
    takes are those whose estimators give it."""
    from runs.audit_parameters import AuditParameters
    from runs.human_source_options import OPTIONS
    from runs.serializers import AuditRequestSerializer

    parameters = {field.name for field in dataclasses.fields(AuditParameters)}
    api = AuditRequestSerializer().fields
    for name, option in OPTIONS.items():
        assert option.tasks == tuple(t.name for t in BLOCKS if option.needs in t.yields) != (), name
        assert name in parameters and name in api and option.flag == f"--{name.replace('_', '-')}", name
    assert {name: option.tasks for name, option in OPTIONS.items()} == {
        "metric_from": ("pair_comparable", "triplet"),  # fairness.human_metric.fit_metric
        "utility_from": ("choose",),  # analysis.paired_comparison.utility_model
        "features_from": ("feature_fairness",),  # fairness.feature_fairness.feature_fairness_shares
        "tradeoff_from": ("tradeoff",),  # analysis.tradeoff.tradeoff_weights
    }


def test_shared_options_have_one_schema():
    seen: dict[str, dict] = {}
    for task in BLOCKS:
        for name, schema in task.options.items():
            assert seen.setdefault(name, schema) == schema, f"option {name!r} has two schemas"


def test_builder_templates_come_from_the_registry():
    from research.study_builder_views import TEMPLATE_CHOICES

    named = [t.builder_template for t in BLOCKS if t.builder_template]
    assert sorted(TEMPLATES) == sorted(named) and len(set(named)) == len(named)
    for task in BLOCKS:  # a template, or the stated reason why there is none (never both, never neither)
        assert bool(task.builder_template) != bool(task.no_builder_template), task.name
    assert list(TEMPLATE_CHOICES) == named and all(TEMPLATE_CHOICES.values()), "the web builder lists them all"


def test_bts_positive_answers():
    assert BLOCK_TASKS["agree"].bts_positive({"bts": {}}) == BtsPositive("agree", 1, 1)
    assert BLOCK_TASKS["agree"].bts_positive({}) is None
    likert = {"bts": {}, "scale": {"type": "likert", "labels": ["a", "b", "c", "d"], "positive_from": 3}}
    assert BLOCK_TASKS["rate"].bts_positive(likert) == BtsPositive("rating", 3)
    assert BLOCK_TASKS["rate"].bts_positive({"bts": {}, "scale": {"type": "number", "min": 0, "max": 9}}) is None
    distance = {"bts": {"measures": ["overall"]}, "likert": {"points": 7, "labels": list("1234567")}}
    assert BLOCK_TASKS["pair_distance"].bts_positive(distance) == BtsPositive("overall", high=3)


def test_every_type_writing_a_measure_gives_it_the_rule_its_codebook_entry_states():
    """One rule per measure (``tasks.MEASURE_RULES``), the one every type writing it declares, and the
    codebook's stated values agree with it (a "0/1" measure: 0 and 1; "a..b": between a and b)."""
    for task in TASK_TYPES:
        for measure, column in task.measures.items():
            assert column.number_rule() == MEASURE_RULES[measure], f"{task.name} gives {measure} another rule"
            if column.type == "0/1":
                assert column.number_rule() == ("in", (0, 1))
            low, dots, high = column.values.partition("..")
            if dots and low.isdigit() and high.isdigit():
                assert column.number_rule() == ("between", (int(low), int(high))), (task.name, measure)


def _answer(participant, question: str, measure: str, number: float | None) -> None:
    with transaction.atomic():
        Answer.objects.create(participant=participant, page="p", question=question, measure=measure, number=number)


def _refused(participant, question: str, measure: str, number: float | None) -> bool:
    try:
        _answer(participant, question, measure, number)
    except IntegrityError:
        return True
    return False


def test_the_database_refuses_a_measure_no_task_type_writes_and_a_number_its_measure_does_not_allow(db, demo_study):
    from participation.models import Participant

    assert Answer._meta.get_field("measure").choices is None  # no measure is part of the migration state
    participant = Participant.objects.create(study=demo_study, external_id="x", seed=1)
    for i, (measure, rule) in enumerate(sorted(MEASURE_RULES.items())):
        assert not _refused(participant, f"blank/{i}", measure, None), measure  # text answers
        if rule is None:
            assert not _refused(participant, f"any/{i}", measure, -12.5), measure
            continue
        kind, values = rule
        allowed = values if kind == "in" else (values[0], (values[0] + values[1]) / 2, values[1])
        for j, number in enumerate(allowed):
            assert not _refused(participant, f"ok/{i}/{j}", measure, number), (measure, number)
        outside = (min(values) - 1, max(values) + 1) + ((sum(values[:2]) / 2,) if kind == "in" else ())
        outside = tuple(n for n in outside if n not in values)
        for j, number in enumerate(outside):
            assert _refused(participant, f"bad/{i}/{j}", measure, number), (measure, number)
    assert _refused(participant, "bogus", "bogus", 1)
    with pytest.raises(IntegrityError), transaction.atomic():  # an update is held to the same rules
        Answer.objects.filter(participant=participant, measure="agree").update(number=7)


def test_a_new_measure_is_accepted_after_migrate_without_a_migration(db, demo_study, monkeypatch):
    """``migrate`` (no migration to apply) reinstalls the rules from the registry as it is now."""
    import tasks
    from participation.models import Participant

    participant = Participant.objects.create(study=demo_study, external_id="x", seed=1)
    assert _refused(participant, "q1", "newmeasure", 1)
    monkeypatch.setattr(tasks, "MEASURE_RULES", {**tasks.MEASURE_RULES, "newmeasure": ("between", (0, 2))})
    call_command("migrate", verbosity=0)
    assert not _refused(participant, "q2", "newmeasure", 2)
    assert _refused(participant, "q3", "newmeasure", 3)
    assert _refused(participant, "q4", "bogus", 1)
    monkeypatch.undo()
    call_command("migrate", verbosity=0)
    assert _refused(participant, "q5", "newmeasure", 1)


def test_every_task_block_is_in_the_analysis_with_results_or_a_reason():
    """A fair_score block has no format 2 estimator yet: the analysis says so instead of skipping it."""
    from runs.design_analysis import block_analyses

    spec = {"blocks": [{"key": "scores", "type": "task", "task": "fair_score", "pool": "people"}]}
    reason = block_analyses(spec)["scores"]
    assert reason == block_task(spec["blocks"][0]).no_analysis and "no estimator" in reason


def test_the_design_report_names_no_task_type_or_table():
    """A task type's report tables are shown as its ``present`` says: the report module special-cases
    none of them by name (no string literal of a task type's or table's name)."""
    source = (Path(__file__).resolve().parents[1] / "runs" / "reports" / "design.py").read_text()
    names = {n for task in BLOCKS for n in (task.name, *task.report_tables)}
    assert not [n for n in sorted(names) if f'"{n}"' in source or f"'{n}'" in source]


def test_the_builder_names_no_template_or_task_type():
    """Each template's block, instructions, timing and option rules come from its task type
    (``builder_block`` and the ``builder_*`` attributes): ``studies/builder.py`` names none of them."""
    source = (Path(__file__).resolve().parents[1] / "studies" / "builder.py").read_text()
    names = {n for task in BLOCKS for n in (task.name, task.builder_template) if n}
    assert not [n for n in sorted(names) if f'"{n}"' in source or f"'{n}'" in source]
    for task in BLOCKS:
        if task.builder_template:
            assert task.builder_key and task.builder_instructions and task.builder_seconds > 0, task.name
            assert _overrides(task, "builder_block", BlockTask), task.name


def test_a_task_type_with_an_export_table_makes_its_rows():
    for task in BLOCKS:
        assert (task.export_table is not None) == _overrides(task, "export_rows", BlockTask), task.name


EVERY_TASK_TYPE = Path(__file__).resolve().parents[1] / "bench" / "every_task_type.json"


def test_the_study_of_every_task_type_holds_every_registered_page_kind():
    """``bench/every_task_type.json`` (``bench/launch.py --study``, the test below) has a page of every kind the
    registry serves: a new task type adds a block of its own there."""
    spec = json.loads(EVERY_TASK_TYPE.read_text())
    kinds = {block.get("task", block["type"]) for block in spec["blocks"]} | (
        {"screening"} if "screening" in spec else set()
    )
    assert not set(REGISTRY) - kinds, (
        f"add a block of each of {sorted(set(REGISTRY) - kinds)} to {EVERY_TASK_TYPE.name}"
    )
    detections = {block["check"] for block in spec["blocks"] if block["type"] == "detection"}
    assert detections == set(DETECTION_CHECKS)


@pytest.mark.django_db
def test_every_page_of_every_task_type_takes_its_bots_answer_and_stores_it(client, researcher):
    """A participant of the study of every task type answers each page with its type's ``fill`` through the
    participant view: every page is saved with its answers (attention right, screening eligible, detection
    items not flagged) and the study's integrity check holds."""
    from participation.integrity import check_integrity
    from participation.models import Participant
    from participation.page_bot import NoPageToAnswer, page_answers, participant_id_of
    from studies.services import study_load

    spec = json.loads(EVERY_TASK_TYPE.read_text())
    slug = study_load(spec=spec, owner=researcher).study.slug
    client.get(f"/s/{slug}/?participant_label=bot")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id="bot")
    stored: dict[str, int] = {}
    while participant.status == Participant.Status.ACTIVE:
        page = participant.plan[participant.position]
        client.get(f"/s/{slug}/page/")
        response = client.post(f"/s/{slug}/page/", page_answers(participant.pk, seed=participant.position))
        assert response.status_code in (200, 302), (page["key"], response.status_code)
        participant.refresh_from_db()
        rows = Answer.objects.filter(participant=participant, page=page["key"]).count()
        assert rows or page["kind"] == "instructions", f"{page['key']}: nothing stored"
        stored[page["kind"]] = stored.get(page["kind"], 0) + rows
    assert participant.status == Participant.Status.COMPLETED and participant.position == len(participant.plan)
    assert set(stored) == set(REGISTRY) and stored["instructions"] == 0
    assert sum(stored.values()) == Answer.objects.filter(participant=participant).count()
    numbers = dict(
        Answer.objects.filter(participant=participant, measure__in=["attention", "screening"]).values_list(
            "measure", "number"
        )
    )
    assert numbers == {"attention": 1, "screening": 1}
    assert set(
        Answer.objects.filter(participant=participant, measure="detection").values_list("number", flat=True)
    ) == {0}
    assert check_integrity(slug).ok
    with pytest.raises(NoPageToAnswer, match="has no page to answer \\(status completed\\)"):
        page_answers(participant.pk)  # finished: the bot says so rather than answer a page again
    with pytest.raises(NoPageToAnswer, match="no participant 'nobody' in study"):
        participant_id_of(slug, "nobody")
