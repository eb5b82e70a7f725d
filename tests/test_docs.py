"""The documentation: the README is a short front door, no page cites a session or an issue number, and
the generated reference has an entry (a meaning, a help text, a docstring) for every management command
and option, environment variable, block field, task option and task type (docs/_gen/reference.py)."""

import importlib.util
import re

from tests.conftest import ROOT

NUMBERED = re.compile(r"\b(sessions?|issues?)\s*#?\d+", re.I)


def reference_module():
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "_gen" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_a_short_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "make demo" in readme and "make test" in readme and "make docs" in readme


def doc_files():
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_no_page_cites_a_session_or_an_issue():
    cited = [
        f"{path.relative_to(ROOT)}: {m.group(0)}" for path in doc_files() for m in NUMBERED.finditer(path.read_text())
    ]
    assert cited == []


def test_the_check_finds_a_citation():
    assert NUMBERED.search("measured in session 11") and NUMBERED.search("(issue 23, item 8)")
    assert not NUMBERED.search("version 0.11 of the session page")


def test_every_command_variable_option_and_task_type_has_a_reference_entry():
    assert reference_module().missing_entries() == []


def test_generated_pages_name_what_the_code_declares():
    from tasks import TASK_TYPES

    module = reference_module()
    expected = {
        "reference/commands.md": [f"## `{name}`" for name in module.project_commands()],
        "reference/environment.md": [f"`{name}`" for name in module.environment_variables()],
        "reference/study-file.md": [f"### `{task.name}`" for task in TASK_TYPES],
    }
    for page, names in expected.items():
        text = module.PAGES[page]()
        assert names and [name for name in names if name not in text] == [], page


def test_python_api_pages_show_sphinx_roles_as_code():
    """The griffe extension of the API pages (mkdocs.yml) and the public-API table's summaries."""
    import griffe

    extensions = griffe.load_extensions(str(ROOT / "docs" / "_gen" / "rst_roles.py"))
    module = griffe.load("fairness.individual", extensions=extensions, search_paths=[str(ROOT)])
    doc = module["eaif_details"].docstring.value
    assert ":func:" not in doc and "Exact EaIF (`eaif`, Eq. 13)" in doc
    from fairness import eaif_details

    assert reference_module().summary_line(eaif_details).startswith("Exact EaIF (`eaif`, Eq. 13)")


def test_licence_is_bsd_3_clause():
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("BSD 3-Clause License") and "Copyright (c) 2026, the platform's authors" in licence
    assert "BSD 3-Clause" in (ROOT / "README.md").read_text()
