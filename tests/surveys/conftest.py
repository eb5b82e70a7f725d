"""The effort demo answered by 12 simulated participants (seed 9), simulated once per process
(``tests/runs/conftest.py``'s snapshot, re-inserted into each test): ``demo_answered_by_12``."""

import pytest

from tests.runs.conftest import (  # noqa: F401 - the snapshot and its restore; analyses without mixed models
    _answered_demo_snapshot,
    answered_demo,
    no_mixed_models,
)

ANSWERED_BY_12 = "tests/surveys/conftest.py::demo_answered_by_12"


@pytest.fixture
def demo_answered_by_12(answered_demo):  # noqa: F811
    """The effort demo (``demo_study``, alice's) taken by 12 simulated participants (seed 9)."""
    return answered_demo


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``make test`` (``--dist loadgroup``) the tests of ``demo_answered_by_12`` run on one worker, which
    simulates the participants once."""
    for item in items:
        if item.nodeid.startswith("tests/surveys/") and "demo_answered_by_12" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(ANSWERED_BY_12))
