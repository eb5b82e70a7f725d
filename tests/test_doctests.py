"""The science as a library: ``analysis`` and ``fairness`` declare their public API (``__all__``, loaded
lazily), and the examples in their docstrings run as doctests (in CI, as part of the suite)."""

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys
import types

import griffe
import pytest

import analysis
import fairness

MODULES = [f"{pkg.__name__}.{info.name}" for pkg in (analysis, fairness) for info in pkgutil.iter_modules(pkg.__path__)]


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


@pytest.mark.parametrize("package", [analysis, fairness])
def test_every_public_function_has_numpydoc_sections_with_examples(package):
    """Parameters (naming every parameter of the signature), Returns and Examples with code, as numpydoc
    parses them (griffe, what the docs' Python API pages are rendered with)."""
    for name in package.__all__:
        function = getattr(package, name)
        sections = {s.kind.value: s for s in griffe.Docstring(inspect.getdoc(function), parser="numpy").parse()}
        assert {"parameters", "returns", "examples"} <= set(sections), (name, sorted(sections))
        documented = {part.strip() for p in sections["parameters"].value for part in p.name.split(",")}
        assert documented == set(inspect.signature(function).parameters), name
        assert any(">>> " in text for _, text in sections["examples"].value), name


def test_importing_the_packages_loads_no_module_of_theirs():
    """Beyond the helper that makes the lazy exports (``analysis.lazy_exports``)."""
    code = (
        "import sys, analysis, fairness; "
        "print(sorted(m for m in sys.modules if m.startswith(('analysis.', 'fairness.'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "['analysis.lazy_exports']"
