"""The generated reference pages, written at build time by mkdocs-gen-files (mkdocs.yml) from the code:
the management commands from their argparse parsers, the environment variables from the code that reads
them, study file format 2 from its JSON schema and the task registry, the export tables and codebook
columns from ``research.tables``, the REST API from drf-spectacular's OpenAPI schema and the Python API
pages of ``analysis`` and ``fairness`` (one mkdocstrings page per module). What the code cannot say (a
variable's or an option's meaning) comes from ``meanings.yml`` beside this file; ``missing_entries()``
lists what has none (tests/test_docs.py).

Run by hand (``python docs/_gen/reference.py OUT_DIR``) it writes the pages into OUT_DIR.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import pkgutil
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django  # noqa: E402

django.setup()

from django.core.management import get_commands, load_command_class  # noqa: E402

from docs._gen.rst_roles import ROLE  # noqa: E402

MEANINGS: dict[str, dict[str, str]] = yaml.safe_load((Path(__file__).parent / "meanings.yml").read_text())
PROJECT_APPS = ("accounts", "core", "participation", "research", "runs", "studies", "surveys")
# Where variables are read: the settings and every module of the project (tests' conftest: CI's switches).
ENV_SOURCES = (*PROJECT_APPS, "config", "tasks", "manage.py", "tests/conftest.py")
ENV_READERS = {"env_str", "env_int", "env_bool", "env_list", "get", "getenv"}
DJANGO_OPTIONS = {
    "help",
    "version",
    "verbosity",
    "settings",
    "pythonpath",
    "traceback",
    "no_color",
    "force_color",
    "skip_checks",
}
GENERATED = "<!-- Generated from the code by docs/_gen/reference.py: edit the code, not this page. -->\n\n"


def cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


# ---------------------------------------------------------------------------------------- commands
def project_commands() -> dict[str, str]:
    """Command name -> its app, for the project's own management commands."""
    return {name: app for name, app in sorted(get_commands().items()) if app in PROJECT_APPS}


def command_parser(name: str, app: str) -> argparse.ArgumentParser:
    return load_command_class(app, name).create_parser("manage.py", name)


def command_options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """The command's own arguments (Django's common options left out)."""
    for action in parser._actions:
        if action.dest not in DJANGO_OPTIONS:
            yield action


def _option_item(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """One argument as a list item: its name, what it takes, then its help."""
    name = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
    facts = []
    if action.required or not action.option_strings:
        facts.append("required")
    if action.nargs in ("*", "+") or (isinstance(action.nargs, int) and action.nargs > 1):
        facts.append("one or more values" if action.nargs == "+" else "several values")
    if action.choices:
        facts.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.default not in (None, argparse.SUPPRESS, False, []) and not action.required:
        facts.append(f"default `{action.default}`")
    helptext = parser._get_formatter()._expand_help(action) if action.help else ""
    return f"- {name}" + (f" ({'; '.join(facts)})" if facts else "") + f": {cell(helptext)}"


def commands_page() -> str:
    lines = [
        "# Management commands\n",
        GENERATED,
        "Run each as `.venv/bin/python manage.py COMMAND ...` (`--help` prints the same). Every value is "
        "checked before any work: a significance level strictly between 0 and 1, `--favourable` `higher` or "
        "`lower`, `--top-fraction` in (0, 1], whole numbers of at least 1 where a count is asked; anything "
        "else stops the command with a specific error (argparse types in `core/cli_args.py`, also applied to "
        "values passed as keywords to `call_command`).\n",
    ]
    for name, app in project_commands().items():
        parser = command_parser(name, app)
        lines += [f"## `{name}`\n", f"{cell(parser.description or '')}\n", f"Defined in `{app}`.\n"]
        items = [_option_item(parser, action) for action in command_options(parser)]
        lines += [*items, ""] if items else ["No arguments.\n"]
    return "\n".join(lines)


# --------------------------------------------------------------------------------- environment
def _python_files() -> Iterator[Path]:
    for source in ENV_SOURCES:
        path = ROOT / source
        yield from (
            [path] if path.suffix == ".py" else sorted(p for p in path.rglob("*.py") if "migrations" not in p.parts)
        )


def environment_variables() -> dict[str, tuple[str, str]]:
    """Every variable the code reads -> (its default as written in the code, the file that reads it)."""
    found: dict[str, tuple[str, str]] = {}
    for path in _python_files():
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func
            reader = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            name = node.args[0].value
            if reader not in ENV_READERS or not isinstance(name, str) or not name.isupper():
                continue
            if reader in {"get", "getenv"} and "environ" not in (ast.get_source_segment(source, func) or "") + reader:
                continue
            default = ast.get_source_segment(source, node.args[1]) if len(node.args) > 1 else "unset"
            found.setdefault(name, (default or "", str(path.relative_to(ROOT))))
    found.pop("DJANGO_SETTINGS_MODULE", None)
    return dict(sorted(found.items()))


def environment_page() -> str:
    lines = [
        "# Environment variables\n",
        GENERATED,
        "Every setting comes from the environment (`config/settings.py`, typed readers in `config/env.py`): "
        "booleans are `1`/`0` (or true/false, yes/no, on/off), lists are comma-separated. The default is the "
        "expression the code uses when the variable is unset.\n",
        "| variable | default (code) | read in | meaning |",
        "|---|---|---|---|",
    ]
    meanings = MEANINGS["environment"]
    for name, (default, path) in environment_variables().items():
        lines.append(f"| `{name}` | `{cell(default)}` | `{path}` | {cell(meanings.get(name, ''))} |")
    lines += [
        "",
        "Set by make rather than read by Python:\n",
        "| variable | meaning |",
        "|---|---|",
        *(f"| `{n}` | {cell(meanings[n])} |" for n in MAKE_VARIABLES),
        "",
    ]
    return "\n".join(lines)


MAKE_VARIABLES = ("JOB_WORKERS", "DOCS_ADDR")


# ---------------------------------------------------------------------------------- study file
def _allowed(schema: dict[str, Any]) -> str:
    """A JSON schema's allowed values in words."""
    if "const" in schema:
        return f"`{schema['const']}`"
    if "enum" in schema:
        return ", ".join(f"`{v}`" for v in schema["enum"])
    kind = schema.get("type", "")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    bounds = [
        f"{word} {schema[key]}"
        for key, word in (
            ("minimum", ">="),
            ("maximum", "<="),
            ("minItems", "items >="),
            ("maxItems", "items <="),
            ("maxLength", "length <="),
        )
        if key in schema
    ]
    if kind == "array" and "items" in schema:
        kind = f"array of {_allowed(schema['items']) or 'values'}"
    if kind == "object" and "properties" in schema:
        kind = "object {" + ", ".join(schema["properties"]) + "}"
    return ", ".join(filter(None, [kind, *bounds]))


def _flatten(prefix: str, schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path, sub
        if sub.get("type") == "object" and "properties" in sub and path.startswith("assignment"):
            yield from _flatten(path, sub)


def block_fields() -> dict[str, dict[str, Any]]:
    """The common fields of a task block (not the task types' own options) -> their schema."""
    from studies.format2 import _task_block
    from tasks import BLOCK_TASKS

    own = {name for task in BLOCK_TASKS.values() for name in task.options}
    return {path: sub for path, sub in _flatten("", _task_block) if path.split(".")[0] not in own}


def task_options() -> dict[str, dict[str, dict[str, Any]]]:
    """Option name -> {task type name: its schema there}."""
    from tasks import BLOCK_TASKS

    options: dict[str, dict[str, dict[str, Any]]] = {}
    for task in BLOCK_TASKS.values():
        for name, schema in task.options.items():
            options.setdefault(name, {})[task.name] = schema
    return options


def task_summary(task: object) -> str:
    """A task type's first docstring paragraph (its module's)."""
    doc = sys.modules[type(task).__module__].__doc__ or ""
    return " ".join(doc.split("\n\n")[0].split())


def study_file_page() -> str:
    from studies.format2 import SCHEMA
    from tasks import BLOCK_TASKS, TASK_TYPES

    lines = [
        "# Study file format 2\n",
        GENERATED,
        "A study file is JSON validated against this schema (`studies/format2.py`) and the task registry "
        "(`tasks/__init__.py`) before anything is stored; every problem is reported as `path: rule`. "
        "How to write one, with examples: [Write a study file](../how-to/write-a-study-file.md). "
        "The legacy format 1 and its conversion: [Study file format 1](format1.md).\n",
        "## Top-level fields\n",
        "| field | required | allowed |",
        "|---|---|---|",
    ]
    required = set(SCHEMA["required"])
    for name, sub in SCHEMA["properties"].items():
        lines.append(f"| `{name}` | {'yes' if name in required else ''} | {cell(_allowed(sub))} |")
    lines += ["", "## Fields of every task block\n", "| field | allowed | meaning |", "|---|---|---|"]
    for path, sub in block_fields().items():
        lines.append(f"| `{path}` | {cell(_allowed(sub))} | {cell(MEANINGS['block_fields'].get(path, ''))} |")
    lines += ["", "## Task options\n", "Options a task block takes beside the common fields, by task type.\n"]
    lines += ["| option | task types | allowed | meaning |", "|---|---|---|---|"]
    for name, by_task in sorted(task_options().items()):
        allowed = "; ".join(sorted({_allowed(s) for s in by_task.values()}))
        tasks = ", ".join(f"`{t}`" for t in by_task)
        lines.append(f"| `{name}` | {tasks} | {cell(allowed)} | {cell(MEANINGS['task_options'].get(name, ''))} |")
    lines += ["", "## Task types\n"]
    for task in TASK_TYPES:
        block = BLOCK_TASKS.get(task.name)
        lines += [f"### `{task.name}`\n", f"{task_summary(task)}\n"]
        if block is not None:
            facts = [
                f'block option `"task": "{task.name}"`; items: {block.item_shape.name}',
                "needs: " + (", ".join(f"`{n}`" for n in block.needs) or "nothing beyond the common fields"),
                "options: " + (", ".join(f"`{n}`" for n in block.options) or "none"),
                "estimators: " + (", ".join(f"`{e}`" for e in block.estimators) or "none"),
                f"report section: `{block.analysis}`" if block.analysis else f"no analysis: {block.no_analysis}",
                f"builder template: `{block.builder_template}`"
                if block.builder_template
                else f"no builder template: {block.no_builder_template}",
            ]
            if block.export_table:
                facts.append(f"export table: `{block.export_table}`")
            lines += [f"- {cell(fact)}" for fact in facts] + [""]
        if task.measures:
            lines += ["| measure | type | values | meaning |", "|---|---|---|---|"]
            lines += [f"| `{m}` | {c.type} | {cell(c.values)} | {cell(c.meaning)} |" for m, c in task.measures.items()]
            lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------- exports
def codebook_page() -> str:
    from research.tables import ALWAYS, COLUMNS

    lines = [
        "# Codebook columns\n",
        GENERATED,
        "Every column of every export table (`research/tables.py`). A study's own codebook "
        "(`export_codebook SLUG`) adds its allowed values (conditions, Likert points, questions). Tables "
        f"every study has: {', '.join(f'`{t}`' for t in ALWAYS)}; the others only when the design has them. "
        "The tables themselves: [Export tables](exports.md).\n",
    ]
    for table, columns in COLUMNS.items():
        lines += [f"## `{table}`\n", "| column | type | values | meaning |", "|---|---|---|---|"]
        lines += [
            f"| `{cell(name)}` | {c.type} | {cell(c.values)} | {cell(c.meaning)} |" for name, c in columns.items()
        ]
        lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- API
def api_page() -> str:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    lines = [
        "# REST API\n",
        GENERATED,
        f"{cell(schema['info'].get('description', ''))}\n",
        "Rendered from the OpenAPI schema drf-spectacular makes (`/api/schema/`; browsable at `/api/docs/` "
        "for a logged-in researcher). Authentication: a session or `Authorization: Token ...` "
        "([Use the researcher pages and the API](../how-to/researcher-pages-and-api.md)).\n",
    ]
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            lines += [f"## `{method.upper()} {path}`\n"]
            if op.get("summary") or op.get("description"):
                lines.append(f"{cell(op.get('summary') or op.get('description'))}\n")
            params = op.get("parameters", [])
            if params:
                lines += ["| parameter | in | required | type | meaning |", "|---|---|---|---|---|"]
                for p in params:
                    kind = _allowed(p.get("schema", {}))
                    required = "yes" if p.get("required") else ""
                    lines.append(
                        f"| `{p['name']}` | {p['in']} | {required} | {cell(kind)} | {cell(p.get('description', ''))} |"
                    )
                lines.append("")
            responses = ", ".join(
                f"`{code}` {cell(r.get('description', ''))}".strip() for code, r in op.get("responses", {}).items()
            )
            lines.append(f"Responses: {responses}\n")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ Python API
def summary_line(function: Any) -> str:
    """The first sentence of the docstring (roles as code), cut before its first ``:``, ``;`` or ``(`` when long."""
    paragraph = ROLE.sub(r"`\1`", " ".join(inspect.getdoc(function).split("\n\n")[0].split()))
    sentence = re.split(r"\.\s+(?=[A-Z])", paragraph)[0]
    if len(sentence) > 110:
        sentence = re.split(r": |; | \(", sentence)[0]
    return sentence.removesuffix(".") + "."


def python_api_page(package: str) -> str:
    """The package's docstring, a table of its public API (``__all__``: each name linked to its section,
    with its docstring's first sentence), then one section per module."""
    mod = importlib.import_module(package)
    lines = [
        f"# Python API: `{package}`\n",
        GENERATED,
        f"Pure functions (no Django, no database): import them in a notebook "
        f"([how](../how-to/use-from-a-notebook.md)). One section per module of `{package}`.\n",
        f"::: {package}\n    options:\n      members: false\n      show_root_heading: false\n",
        f"## Public API\n\n`from {package} import NAME` for each of these (every one has parameters, returns "
        "and an example that runs as a test):\n",
        "| name | what it does |",
        "|---|---|",
    ]
    for name in mod.__all__:
        function = getattr(mod, name)
        lines.append(f"| [`{name}`](#{function.__module__}.{name}) | {cell(summary_line(function))} |")
    lines.append("")
    for info in pkgutil.iter_modules(mod.__path__):
        if not info.name.startswith("_"):
            lines.append(f"::: {package}.{info.name}\n    options:\n      heading_level: 2\n")
    return "\n".join(lines)


def changelog_page() -> str:
    """CHANGELOG.md as a page of the site (one text, two places)."""
    return (
        (ROOT / "CHANGELOG.md").read_text().replace("the docs' Benchmarks page", "the [Benchmarks](benchmarks.md) page")
    )


PAGES = {
    "changelog.md": changelog_page,
    "reference/commands.md": commands_page,
    "reference/environment.md": environment_page,
    "reference/study-file.md": study_file_page,
    "reference/codebook.md": codebook_page,
    "reference/api.md": api_page,
    "reference/python-analysis.md": lambda: python_api_page("analysis"),
    "reference/python-fairness.md": lambda: python_api_page("fairness"),
}


def missing_entries() -> list[str]:
    """What has no reference entry: a command or option without help, a variable, block field or task
    option without a meaning in meanings.yml, a task type without a docstring."""
    from tasks import TASK_TYPES

    missing = []
    for name, app in project_commands().items():
        parser = command_parser(name, app)
        if not parser.description:
            missing.append(f"command {name}: no help")
        missing += [f"command {name}: {a.dest} has no help" for a in command_options(parser) if not a.help]
    missing += [f"environment variable {n}" for n in environment_variables() if n not in MEANINGS["environment"]]
    missing += [f"environment variable {n} (make)" for n in MAKE_VARIABLES if n not in MEANINGS["environment"]]
    missing += [f"block field {p}" for p in block_fields() if p not in MEANINGS["block_fields"]]
    missing += [f"task option {n}" for n in task_options() if n not in MEANINGS["task_options"]]
    missing += [f"task type {t.name}: no module docstring" for t in TASK_TYPES if not task_summary(t)]
    return missing


def write_pages(out: Path) -> None:
    for page, make in PAGES.items():
        (out / page).parent.mkdir(parents=True, exist_ok=True)
        (out / page).write_text(make())


if __name__ == "__main__":
    write_pages(Path(sys.argv[1]))
elif __name__ == "<run_path>":  # run by mkdocs-gen-files during the build
    import mkdocs_gen_files

    for page, make in PAGES.items():
        with mkdocs_gen_files.open(page, "w") as handle:
            handle.write(make())
