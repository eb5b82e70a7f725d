"""The task types, one class per type (``tasks.base``), each owning its whole chain from study-file
block to estimator and serving the page kinds it renders (format 1 kinds and their format 2 successors).

``TASK_TYPES`` is the registry: adding a task type is its module here, its template
``templates/surveys/page_<kind>.html``, its tests and one line below. ``REGISTRY`` maps a page kind to
its task type (``task_for(page)``), ``BLOCK_TASKS`` a format 2 block's ``task`` name to its type
(``block_task(block)``). Everything else (validation, the runtime, the export and codebook, BTS, the
integrity check, the builder, the analysis report) asks these, never a task by name; the audit's sources ask
``yielding(what)``: the types whose estimators yield it (``BlockTask.yields``, ``tasks.yields``).
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tasks.agree import Agree
from tasks.attention import Attention
from tasks.base import BlockTask, BtsPositive, TaskType
from tasks.choose import Choose
from tasks.detection import Detection
from tasks.fair_score import FairScore
from tasks.feature_fairness import FeatureFairness
from tasks.instructions import Instructions
from tasks.pair_comparable import PairComparable
from tasks.pair_distance import PairDistance
from tasks.questionnaire import Questionnaire
from tasks.questions import answers_rows
from tasks.rank import Rank
from tasks.rate import Rate
from tasks.screening import Screening
from tasks.tradeoff import Tradeoff
from tasks.triplet import Triplet
from tasks.yields import Yield

TASK_TYPES: tuple[TaskType, ...] = (
    Instructions(),
    Screening(),
    Attention(),
    Detection(),
    Questionnaire(),
    PairDistance(),
    FairScore(),
    Agree(),
    Rate(),
    PairComparable(),
    Choose(),
    Triplet(),
    FeatureFairness(),
    Rank(),
    Tradeoff(),
)
REGISTRY: dict[str, TaskType] = {kind: task for task in TASK_TYPES for kind in task.kinds}
BLOCK_TASKS: dict[str, BlockTask] = {task.name: task for task in TASK_TYPES if isinstance(task, BlockTask)}


def _measure_meanings() -> dict[str, str]:
    """Every measure a registered type writes -> its meaning (a measure several types write, such as
    "prediction", keeps the meaning of the first type that has it)."""
    meanings: dict[str, str] = {}
    for task in TASK_TYPES:
        for measure, column in task.measures.items():
            meanings.setdefault(measure, column.meaning)
    return meanings


def _measure_rules() -> dict[str, tuple[str, tuple[float, ...]] | None]:
    """Every measure a registered type writes -> the numbers it allows (``Column.number_rule``; the
    registry test checks that every type writing a measure gives it the same rule)."""
    rules: dict[str, tuple[str, tuple[float, ...]] | None] = {}
    for task in TASK_TYPES:
        for measure, column in task.measures.items():
            rules.setdefault(measure, column.number_rule())
    return rules


MEASURES = _measure_meanings()  # the codebook's measures
MEASURE_RULES = _measure_rules()  # what the database accepts (participation.answer_rules)


class UnknownPageKind(LookupError):
    pass


def task_for(page: Mapping[str, Any]) -> TaskType:
    """The task type that renders and saves ``page`` (by its ``kind``)."""
    try:
        return REGISTRY[page["kind"]]
    except KeyError:
        raise UnknownPageKind(f"unknown page kind {page['kind']!r}; known: {', '.join(sorted(REGISTRY))}") from None


def block_task(block: Mapping[str, Any]) -> BlockTask:
    """The task type of a format 2 task block (validated files name only registered ones)."""
    return BLOCK_TASKS[block["task"]]


def yielding(what: Yield) -> tuple[str, ...]:
    """The names of the block task types whose estimators yield ``what`` (``BlockTask.yields``), in registry
    order."""
    return tuple(name for name, task in BLOCK_TASKS.items() if what in task.yields)


def answers_where(spec: dict) -> dict[str, dict]:
    """Block key -> where the answers table holds the block's answers (``tasks.questions.answers_rows``:
    its ``block``, and for a converted block its ``conditions`` and ``subjects``), for every task block."""
    pools = {pool["key"]: pool for pool in spec["pools"]}
    return {
        block["key"]: answers_rows(block, block_task(block).item_map(block, pools[block["pool"]]))
        for block in spec["blocks"]
        if block["type"] == "task"
    }


def parity_tables(spec: dict) -> tuple[str, ...]:
    """The differential-parity tables (``BlockTask.parity_table``) the task blocks of a format 2 ``spec`` give,
    in file order; empty when the study's answers give none."""
    found = (block_task(block).parity_table for block in spec["blocks"] if block["type"] == "task")
    return tuple(dict.fromkeys(table for table in found if table))


def bts_positives(spec: dict) -> dict[str, BtsPositive]:
    """Block key -> the positive answer of its BTS follow-up, with where its answers are
    (:func:`answers_where`), for every task block that has one."""
    where = answers_where(spec)
    return {
        block["key"]: replace(positive, **where[block["key"]])
        for block in spec["blocks"]
        if block["type"] == "task" and (positive := block_task(block).bts_positive(block)) is not None
    }
