"""The task types, one class per type, each serving the page kinds it renders (format 1 kinds and
their format 2 successors).

``REGISTRY`` maps a page kind to its task type; ``task_for(page)`` looks one up. Adding a task type
is one module here plus its template ``templates/surveys/page_<kind>.html``.
"""

from tasks.agree import Agree
from tasks.attention import Attention
from tasks.base import TaskType
from tasks.fair_score import FairScore
from tasks.instructions import Instructions
from tasks.pair_comparable import PairComparable
from tasks.pair_distance import PairDistance
from tasks.questionnaire import Questionnaire
from tasks.rate import Rate
from tasks.screening import Screening

TASK_TYPES: tuple[TaskType, ...] = (
    Instructions(),
    Screening(),
    Attention(),
    Questionnaire(),
    PairDistance(),
    FairScore(),
    Agree(),
    Rate(),
    PairComparable(),
)
REGISTRY: dict[str, TaskType] = {kind: task for task in TASK_TYPES for kind in task.kinds}


class UnknownPageKind(LookupError):
    pass


def task_for(page: dict) -> TaskType:
    """The task type that renders and saves ``page`` (by its ``kind``)."""
    try:
        return REGISTRY[page["kind"]]
    except KeyError:
        raise UnknownPageKind(f"unknown page kind {page['kind']!r}; known: {', '.join(sorted(REGISTRY))}") from None
