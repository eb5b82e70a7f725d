"""The platform's German catalogue: the committed .mo is the compiled .po (CI machines may lack GNU
gettext, so the .mo is committed and this test reads both with the standard library and a small .po
reader), every entry is translated, and every text the participant templates mark for translation
is in it."""

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


def test_every_text_of_the_participant_templates_is_in_the_catalogue():
    msgids = template_msgids()
    assert len(msgids) > 60  # the reader found the templates' texts
    po = read_po(CATALOGUE / "django.po")
    known = {key if isinstance(key, str) else key[0] for key in po} | {
        plural for plural in _plural_ids(CATALOGUE / "django.po")
    }
    missing = sorted(msgids - known)
    assert not missing, f"not in locale/de/LC_MESSAGES/django.po (run manage.py makemessages -l de): {missing}"


def _plural_ids(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {
        "".join(ast.literal_eval(part) for part in re.findall(r'"(?:[^"\\]|\\.)*"', block))
        for block in re.findall(r'^msgid_plural ((?:"[^\n]*"\n)+)', text, re.M)
    }


def test_the_platform_languages_are_the_settings_languages():
    assert tuple(code for code, _ in settings.LANGUAGES) == PLATFORM_LANGUAGES
    assert all((ROOT / "locale" / code).is_dir() for code in PLATFORM_LANGUAGES if code != "en")
