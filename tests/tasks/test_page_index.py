"""The typed page index (``tasks.page_index``): every task method that takes the index is annotated with the
``PageIndex`` protocol, mypy refuses a lookup the protocol does not offer or a key a page or item lacks, and
the runtime's index hands out an item only in the shape its block lists."""

import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from participation.pages import condition_index
from tasks import TASK_TYPES, BlockTask, task_for
from tasks.page_index import PageIndex
from tests.participation.format2_helpers import example_spec, simple_plan

ROOT = Path(__file__).resolve().parents[2]


def _takes_index(function) -> bool:
    return inspect.isfunction(function) and "index" in inspect.signature(function).parameters


def _index_annotation(function):
    """The annotation of ``function``'s ``index`` parameter, resolved in its module (a string under
    ``from __future__ import annotations``)."""
    annotation = inspect.signature(function).parameters["index"].annotation
    return eval(annotation, function.__globals__) if isinstance(annotation, str) else annotation  # noqa: S307


def _index_functions():
    """Every method of a registered task type, and every function of its module, that takes ``index``."""
    for task in TASK_TYPES:
        for cls in type(task).__mro__:
            if cls.__module__.startswith("tasks."):
                for name, member in vars(cls).items():
                    if _takes_index(member):
                        yield f"{cls.__module__}.{cls.__name__}.{name}", member
        module = sys.modules[type(task).__module__]
        for name, member in vars(module).items():
            if _takes_index(member) and member.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", member


def test_every_task_method_taking_the_index_is_annotated_with_the_protocol():
    found = dict(_index_functions())
    assert {"tasks.base.TaskType.form", "tasks.base.TaskType.simulate", "tasks.triplet.ai_closer"} <= set(found)
    unannotated = sorted(name for name, function in found.items() if _index_annotation(function) is not PageIndex)
    assert not unannotated, f"annotate index: PageIndex (tasks.page_index) in {unannotated}"


MISUSES = """\
    from tasks.page_index import Page, PageIndex


    def uses(index: PageIndex, page: Page) -> str:
        triplet = index.triplet(page)
        shown = index.card(index.pool_of(page)["key"], triplet["anchor"], "A")["title"]
        index.pairr(page)
        index.pair(page)["anchor"]
        return page["itme"] + shown
"""


# The modules the protocol is spelt in: mypy checks them alone (imports of other modules skipped), which
# holds every type the misuses meet; a new import among them becomes Any and the test fails, not passes.
PROTOCOL_MODULES = ("tasks/page_index.py", "tasks/item_shapes.py", "tasks/schema.py")


def test_mypy_refuses_what_the_page_index_does_not_offer(tmp_path):
    """mypy on a module that makes three mistakes after two correct lookups: exactly the three are reported,
    each with its error code."""
    module = tmp_path / "page_index_misuse.py"
    module.write_text(textwrap.dedent(MISUSES))
    run = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--python-version", "3.11", "--follow-imports", "skip"),
            *("--no-incremental", "--cache-dir", "/dev/null", "--config-file", "/dev/null"),
            *PROTOCOL_MODULES,
            str(module),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = (
        re.search(r"page_index_misuse\.py:(\d+): error: .*\[([a-z-]+)\]$", line) for line in run.stdout.splitlines()
    )
    reported = {(int(match[1]), match[2]) for match in found if match}
    assert reported == {(7, "attr-defined"), (8, "typeddict-item"), (9, "typeddict-item")}, run.stdout + run.stderr
    assert '"PageIndex" has no attribute "pairr"' in run.stdout


@pytest.fixture(scope="module")
def pages():
    """The runtime's index of the example study's "shown" condition, and a page of each item shape it has."""
    spec = example_spec()
    plan = simple_plan(spec, "shown")
    shapes = {task.item_shape.name: page for page in plan if isinstance(task := task_for(page), BlockTask)}
    return condition_index(spec, "page-index-test", "shown"), shapes


def test_the_runtime_index_hands_out_items_in_their_blocks_shape(pages):
    index, by_shape = pages
    assert set(by_shape) >= {"subjects", "pairs", "sets"}
    pair = index.pair(by_shape["pairs"])
    assert f"{pair['a']}~{pair['b']}" == by_shape["pairs"]["item"]
    stimulus_set = index.stimulus_set(by_shape["sets"])
    assert stimulus_set["key"] == by_shape["sets"]["item"] and stimulus_set["comparisons"]


@pytest.mark.parametrize(
    ("shape", "accessor", "message"),
    [
        ("pairs", "triplet", "lists pairs, not triplets"),
        ("pairs", "stimulus_set", "lists pairs, not stimulus sets"),
        ("sets", "pair", "lists stimulus sets, not pairs"),
        ("subjects", "pair", "lists subjects, not pairs"),
    ],
)
def test_the_runtime_index_refuses_an_item_of_another_shape(pages, shape, accessor, message):
    index, by_shape = pages
    with pytest.raises(TypeError, match=message):
        getattr(index, accessor)(by_shape[shape])
