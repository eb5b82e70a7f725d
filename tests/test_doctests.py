"""The science as a library: ``analysis`` and ``fairness`` declare their public API (``__all__``, loaded
lazily), and the examples in their docstrings run as doctests (in CI, as part of the suite)."""

import doctest
import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

import analysis
import fairness

MODULES = [f"{pkg.__name__}.{info.name}" for pkg in (analysis, fairness) for info in pkgutil.iter_modules(pkg.__path__)]
WITH_EXAMPLES = (
    "fairness.effort.cumulative",
    "fairness.effort.velocities",
    "fairness.effort.accelerations",
    "fairness.effort.average_acceleration",
    "fairness.effort.effort",
    "fairness.effort.aggregate",
    "fairness.individual.eaif",
    "analysis.correlations.correlation",
    "analysis.correlations.bonferroni",
    "analysis.correlations.holm",
)


@pytest.mark.parametrize("name", ["analysis", "fairness", *MODULES])
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("package", [analysis, fairness])
def test_public_api_names_functions_with_docstrings(package):
    assert package.__all__ == sorted(set(package.__all__))
    for name in package.__all__:
        value = getattr(package, name)
        assert callable(value) and not isinstance(value, types.ModuleType), name
        assert value.__doc__, name
        assert value.__module__.startswith(package.__name__ + "."), name
    with pytest.raises(AttributeError):
        package.no_such_function  # noqa: B018


def test_main_functions_have_numpydoc_sections_with_examples():
    for dotted in WITH_EXAMPLES:
        module, name = dotted.rsplit(".", 1)
        doc = getattr(importlib.import_module(module), name).__doc__
        assert all(section in doc for section in ("Parameters\n", "Returns\n", "Examples\n", ">>> ")), dotted


def test_importing_the_packages_loads_no_module_of_theirs():
    """Beyond the helper that makes the lazy exports (``analysis.lazy_exports``)."""
    code = (
        "import sys, analysis, fairness; "
        "print(sorted(m for m in sys.modules if m.startswith(('analysis.', 'fairness.'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "['analysis.lazy_exports']"
