"""The platform's German catalogue: the committed .mo is the compiled .po (CI machines may lack GNU
gettext, so the .mo is committed and this test reads both with the standard library and a small .po
reader), every entry is translated, and in it are every text the participant templates mark for
translation, every text the task modules mark (``gettext`` and its kin in ``tasks/``) and every default
text a task type shows (what its builder template writes and its ``apply_defaults`` fills in)."""

import ast
import gettext
import re
from pathlib import Path

from django.conf import settings

from studies.translation import PLATFORM_LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "locale" / "de" / "LC_MESSAGES"
# The templates of participant pages (the researcher pages stay English).
PARTICIPANT_TEMPLATES = [*sorted((ROOT / "templates" / "surveys").glob("*.html")), ROOT / "templates" / "base.html"]
PARTICIPANT_TEMPLATES.append(ROOT / "templates" / "retry.html")


def read_po(path: Path) -> dict[str | tuple[str, int], str]:
    """msgid (or (msgid, plural index)) -> msgstr of a .po file's entries, without the header."""
    entries: dict[str | tuple[str, int], str] = {}
    current: dict[str, str] = {}
    field = ""

    def flush() -> None:
        if current.get("msgid"):
            if "msgid_plural" in current:
                for name, text in current.items():
                    if name.startswith("msgstr["):
                        entries[(current["msgid"], int(name[7:-1]))] = text
            else:
                entries[current["msgid"]] = current.get("msgstr", "")
        current.clear()

    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            flush()
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            current[field] += ast.literal_eval(line)
        else:
            field, _, text = line.partition(" ")
            current[field] = ast.literal_eval(text)
    return entries


def test_the_committed_mo_is_the_compiled_po_and_everything_is_translated():
    po = read_po(CATALOGUE / "django.po")
    with (CATALOGUE / "django.mo").open("rb") as handle:
        mo = gettext.GNUTranslations(handle)
    compiled = {key: text for key, text in mo._catalog.items() if key != ""}  # type: ignore[attr-defined]
    assert compiled == po  # same entries, same texts: recompile (manage.py compilemessages) after editing the .po
    assert all(text.strip() for text in po.values())
    assert mo.info()["plural-forms"] == "nplurals=2; plural=(n != 1);"


_TRANSLATE = re.compile(r'{%\s*translate\s+"((?:[^"\\]|\\.)*)"\s*%}')
_BLOCK = re.compile(r"{%\s*blocktranslate(?P<options>[^%]*)%}(?P<body>.*?){%\s*endblocktranslate\s*%}", re.S)


def _block_msgid(text: str, trimmed: bool) -> str:
    """A blocktranslate body as Django looks it up: {{ name }} as %(name)s, % doubled, trimmed lines joined."""
    if trimmed:
        text = " ".join(line.strip() for line in text.strip().splitlines())
    return re.sub(r"{{\s*(\w+)\s*}}", r"%(\1)s", text.replace("%", "%%"))


def template_msgids() -> set[str]:
    msgids: set[str] = set()
    for template in PARTICIPANT_TEMPLATES:
        source = template.read_text(encoding="utf-8")
        msgids.update(match.replace('\\"', '"') for match in _TRANSLATE.findall(source))
        for block in _BLOCK.finditer(source):
            trimmed = "trimmed" in block["options"]
            for part in re.split(r"{%\s*plural\s*%}", block["body"]):
                msgids.add(_block_msgid(part, trimmed))
    return msgids


def catalogue_msgids() -> set[str]:
    """Every msgid of the German catalogue, singular and plural."""
    po = read_po(CATALOGUE / "django.po")
    return {key if isinstance(key, str) else key[0] for key in po} | _plural_ids(CATALOGUE / "django.po")


def assert_in_catalogue(msgids: set[str]) -> None:
    missing = sorted(msgids - catalogue_msgids())
    assert not missing, f"not in locale/de/LC_MESSAGES/django.po (run manage.py makemessages -l de): {missing}"


def test_every_text_of_the_participant_templates_is_in_the_catalogue():
    msgids = template_msgids()
    assert len(msgids) > 60  # the reader found the templates' texts
    assert_in_catalogue(msgids)


# The translation functions of django.utils.translation the task modules call (``_`` is gettext_lazy),
# with the number of msgid arguments each takes first (ngettext: singular and plural).
_MARKERS = {"gettext": 1, "gettext_lazy": 1, "gettext_noop": 1, "_": 1, "ngettext": 2, "ngettext_lazy": 2}


def task_module_msgids() -> set[str]:
    """The literal texts of every translation call in ``tasks/`` (a call on a name, such as
    ``gettext(DEFAULT_QUESTION)``, translates a text marked where the name is defined)."""
    msgids: set[str] = set()
    for module in sorted((ROOT / "tasks").rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            for argument in node.args[: _MARKERS.get(name or "", 0)]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    msgids.add(argument.value)
    return msgids


def test_every_text_the_task_modules_mark_is_in_the_catalogue():
    msgids = task_module_msgids()
    assert {"How sure are you?", "Choose at most %(n)d options.", "I don't know"} <= msgids  # calls of each kind
    assert_in_catalogue(msgids)


def builder_default_texts() -> dict[str, set[str]]:
    """Per builder template, the texts participants see on its instructions page and in its task block of a
    file built from synthetic defendants, after the file is read (``apply_defaults``): all of them the
    template's or the task type's defaults."""
    from studies.builder import BUILDERS
    from studies.format2 import SCHEMA
    from studies.study_file import validate_study
    from studies.synthetic_defendants import draw_defendants
    from studies.translation import shown_paths
    from tests.studies.test_builder import build

    defendants = draw_defendants(40, seed=5)
    # a true outcome and a second model's labels (hidden), for the templates that compare models' outcomes
    defendants["outcome"] = (defendants["priors"] > defendants["priors"].median()).astype(int)
    defendants["strict"] = (defendants["ai_score"] > 0.4).astype(int)
    hidden = {"outcome_column": "outcome", "model_label_columns": ["strict"]}
    texts: dict[str, set[str]] = {}
    for template in BUILDERS:
        options = {"score_column": "ai_score", "group_columns": ["race", "sex"], **hidden}
        spec = validate_study(build(defendants, template, **options))
        found = texts.setdefault(template, set())
        for path in shown_paths(spec, SCHEMA):
            if path[0] == "blocks" and spec["blocks"][path[1]]["type"] in ("instructions", "task"):
                value = spec
                for part in path:
                    value = value[part]
                found.add(value)
    return texts


def test_every_default_text_a_task_type_shows_is_in_the_catalogue():
    from tasks import BLOCK_TASKS

    texts = builder_default_texts()
    assert {"rating", "choice"} <= set(texts) and all(len(found) >= 2 for found in texts.values())
    declared = {
        text
        for task in BLOCK_TASKS.values()
        for text in (task.default_bts_prompt, task.builder_instructions, task.builder_decision)
        if text
    }
    assert_in_catalogue(declared | set().union(*texts.values()))


def _plural_ids(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {
        "".join(ast.literal_eval(part) for part in re.findall(r'"(?:[^"\\]|\\.)*"', block))
        for block in re.findall(r'^msgid_plural ((?:"[^\n]*"\n)+)', text, re.M)
    }


def test_the_platform_languages_are_the_settings_languages():
    assert tuple(code for code, _ in settings.LANGUAGES) == PLATFORM_LANGUAGES
    assert all((ROOT / "locale" / code).is_dir() for code in PLATFORM_LANGUAGES if code != "en")


def test_a_builder_template_writes_its_texts_in_the_active_language():
    """The rating template built with German active: its instructions, question and scale in German (the
    catalogue's entries are the texts the task module writes, line breaks included)."""
    from django.utils import translation

    from studies.synthetic_defendants import draw_defendants
    from tests.studies.test_builder import build

    with translation.override("de"):
        spec = build(draw_defendants(10, seed=1), "rating")
    instructions, block = spec["blocks"][0], next(b for b in spec["blocks"] if b["type"] == "task")
    assert instructions["text"].startswith("Sie lesen nacheinander kurze Beschreibungen von Personen.\n\n")
    assert block["question"] == "Wie riskant schätzen Sie diese Person ein?"
    assert block["scale"]["labels"][0] == "Überhaupt nicht riskant" and len(block["scale"]["labels"]) == 7
    with translation.override("de"):
        choice = build(draw_defendants(10, seed=1), "choice", score_column="ai_score")
    assert next(b for b in choice["blocks"] if b["type"] == "task")["decision"] == "als weniger riskant gelten"
