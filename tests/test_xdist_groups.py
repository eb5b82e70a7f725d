"""``make test`` runs the suite in pytest-xdist workers with ``--dist loadgroup``: the tests sharing a
module-scoped set-up must run on one worker, which builds it once (``tests/conftest.py``). pytest-xdist 3.8
groups them by rewriting test ids, which pytest 9.2 no longer allows (pytest-xdist issue 1386: nothing fails,
each worker builds every shared set-up itself). This runs the suite's own grouping hook in two workers."""

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests import conftest
from tests.conftest import ROOT

MODULE = """
import os
import re
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


def test_the_serial_part_imports_only_the_modules_that_mark_a_test_serial(tmp_path):
    """``make test``'s serial part (``-m serial``) skips the modules that cannot hold a serial test without
    importing them (``tests/conftest.py``, ``pytest_ignore_collect``), and still runs those that mark one, in the
    module or in a folder's conftest.py."""
    hook = inspect.getsource(conftest.pytest_ignore_collect)
    (tmp_path / "conftest.py").write_text(
        "import fnmatch\nimport re\nfrom pathlib import Path\n\nimport pytest\n\nROOT = Path(__file__).parent\n"
        f"_MARKED_SERIAL = re.compile({conftest._MARKED_SERIAL.pattern!r})\n\n\n{hook}"
    )
    (tmp_path / "test_marked.py").write_text("import pytest\n\n\n@pytest.mark.serial\ndef test_alone():\n    pass\n")
    (tmp_path / "test_other.py").write_text("raise RuntimeError('imported')\n")
    folder = tmp_path / "marked_by_its_conftest"
    folder.mkdir()
    (folder / "conftest.py").write_text(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.serial)\n"
    )
    (folder / "test_here.py").write_text("def test_alone_too():\n    pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "serial", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr


def test_the_suite_marks_serial_tests_only_where_the_serial_part_looks():
    """By ``pytest.mark.serial`` in the module or a conftest.py: a marker named by a string (``add_marker("serial")``,
    ``getattr(pytest.mark, "serial")``) elsewhere would keep its tests out of the serial part."""
    named = re.compile(r"""(add_marker|getattr|Mark)\(\s*(pytest\.mark\s*,\s*)?["']serial["']""")
    assert named.search('item.add_marker("serial")') and named.search("getattr(pytest.mark, 'serial')")
    for path in (ROOT / "tests").rglob("*.py"):
        if path != Path(__file__):  # this test's own examples
            assert not named.search(path.read_text()), f"{path}: mark serial tests with pytest.mark.serial"
