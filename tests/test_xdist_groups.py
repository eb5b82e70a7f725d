"""``make test`` runs the suite in pytest-xdist workers with ``--dist loadgroup``: the tests sharing a
module-scoped set-up must run on one worker, which builds it once (``tests/conftest.py``). pytest-xdist 3.8
groups them by rewriting test ids, which pytest 9.2 no longer allows (pytest-xdist issue 1386: nothing fails,
each worker builds every shared set-up itself). This runs the suite's own grouping hook in two workers."""

import inspect
import os
import subprocess
import sys
import textwrap

from tests import conftest

MODULE = """
import os
import pytest

@pytest.fixture(scope="module")
def shared():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("i", range(8))
def test_shared(shared, i):
    assert shared == os.environ["PYTEST_XDIST_WORKER"]
    print("WORKER", shared)

@pytest.mark.parametrize("i", range(8))
def test_free(i):
    pass
"""


def test_tests_sharing_a_module_set_up_run_on_one_worker(tmp_path):
    hook = inspect.getsource(conftest.pytest_collection_modifyitems)
    (tmp_path / "conftest.py").write_text("import pytest\n\n\n" + hook)
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent(MODULE))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            "-p",
            "xdist",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # xdist alone: the others cost each process
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    shared = [line.split()[0] for line in run.stdout.splitlines() if "::test_shared[" in line and "PASSED" in line]
    assert len(shared) == 8 and len(set(shared)) == 1, run.stdout
