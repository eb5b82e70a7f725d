"""Study files in several languages: ``languages: ["en", "de"]`` and every text participants see given
as ``{"en": ..., "de": ...}`` (format 2 only).

The texts participants see are the study file schema's fields marked ``tasks.schema.SHOWN``. A file
with ``languages`` is checked against the schema in which each of them must be an object with a
non-empty text for every language (``path: has no text in 'de'``). The stored file is the file in its
first language, exactly as a file without translations (so exports, analyses and the dashboard read it
unchanged), plus ``translations``: per further language, the path of each shown text and its text,
e.g. ``{"de": {"blocks[0].text": "..."}}``; defaults the platform fills in (the decline message, default
questions) are written in each language from the platform's catalogue. Values a participant's answer
stores (questionnaire and attention options, screening ``eligible``, attention ``correct``) are the
first language's texts, so answers in every language are the same values. The participant's pages read
the file of their language (:func:`localized`), built once per process and language.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

from django.utils import translation
from jsonschema import Draft202012Validator

from core.caching import BoundedCache
from tasks.schema import SHOWN_MARK, TEXT

# The languages of the platform's own texts (settings.LANGUAGES; locale/<code>/LC_MESSAGES/django.po).
PLATFORM_LANGUAGES = ("en", "de")
DEFAULT_LANGUAGE = "en"

Path = tuple[str | int, ...]


def file_languages(spec: dict) -> list[str]:
    """The study's languages, first the one its stored texts are in (``["en"]`` without ``languages``)."""
    return list(spec.get("languages", [DEFAULT_LANGUAGE]))


def path_text(path: Path) -> str:
    """``("blocks", 0, "text")`` -> ``blocks[0].text`` (the form of every problem's path)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def parse_path(text: str) -> Path:
    """The inverse of :func:`path_text`."""
    return tuple(int(index) if index else name for index, name in _PART.findall(text))


_SCHEMAS: dict[tuple[int, tuple[str, ...]], dict] = {}


def language_schema(schema: dict, languages: Sequence[str]) -> dict:
    """``schema`` with every shown text asking for an object with one text per language."""
    key = (id(schema), tuple(languages))
    if key not in _SCHEMAS:
        texts = {
            "type": "object",
            "$comment": SHOWN_MARK,
            "additionalProperties": False,
            "required": list(languages),
            "properties": dict.fromkeys(languages, TEXT),
        }

        def swap(node: Any) -> Any:
            if isinstance(node, dict):
                return texts if node.get("$comment") == SHOWN_MARK else {k: swap(v) for k, v in node.items()}
            return [swap(v) for v in node] if isinstance(node, list) else node

        _SCHEMAS[key] = swap(schema)
    return _SCHEMAS[key]


def shown_rule(error) -> str | None:
    """The rule a schema error on a shown text breaks, in the file's terms (None for other errors)."""
    if error.schema.get("$comment") != SHOWN_MARK or error.validator not in (
        "type",
        "required",
        "additionalProperties",
    ):
        return None
    if "properties" not in error.schema:  # the schema of a file without languages
        return 'a text in several languages needs the file\'s "languages" (for example ["en", "de"])'
    languages = list(error.schema["properties"])
    if error.validator == "type":
        return f"must give the text in each of the study's languages: an object with {', '.join(map(repr, languages))}"
    if error.validator == "required":
        missing = [lang for lang in languages if lang not in error.instance]
        return f"has no text in {missing[0]!r} (the study's languages: {', '.join(languages)})"
    extra = sorted(set(error.instance) - set(languages))
    return f"{extra[0]!r} is not one of the study's languages ({', '.join(languages)})"


def _marked(spec: dict, schema: dict) -> list[tuple[Path, Any]]:
    """Where ``spec`` breaks a shown text's schema by its type: (path, value)."""
    return [
        (tuple(e.absolute_path), e.instance)
        for e in Draft202012Validator(schema).iter_errors(spec)
        if e.validator == "type" and e.schema.get("$comment") == SHOWN_MARK
    ]


def shown_paths(spec: dict, schema: dict) -> list[Path]:
    """The paths of every text participants see in a file whose texts are plain strings."""
    return [path for path, _ in _marked(spec, language_schema(schema, ("-",)))]


def _get(spec: Any, path: Path) -> Any:
    for part in path:
        spec = spec[part]
    return spec


def _with_texts(spec: dict, texts: dict[Path, str], *, labels: bool = False) -> dict:
    """A copy of ``spec`` with ``texts`` at their paths; only the objects on the way are copied (a pool's
    subjects are shared). ``labels``: an option's text goes to its list's ``option_labels``, the option
    itself (the value an answer stores) stays."""
    out = dict(spec)
    copied = {id(out)}

    def own(parent: Any, key: str | int) -> Any:
        child = parent[key]
        if id(child) not in copied:
            child = dict(child) if isinstance(child, dict) else list(child)
            parent[key] = child
            copied.add(id(child))
        return child

    for path, text in texts.items():
        node = out
        if labels and len(path) >= 2 and path[-2] == "options":
            for part in path[:-2]:
                node = own(node, part)
            if "option_labels" not in node:
                node["option_labels"] = list(node["options"])
                copied.add(id(node["option_labels"]))
            node["option_labels"][path[-1]] = text
            continue
        for part in path[:-1]:
            node = own(node, part)
        node[path[-1]] = text
    return out


def _expanded(spec: dict) -> dict:
    """A stored file (first language + ``translations``) back in the form a researcher writes."""
    languages, translations = file_languages(spec), spec["translations"]
    texts: dict[Path, dict[str, str]] = {}
    for lang in languages[1:]:
        for where, text in translations.get(lang, {}).items():
            texts.setdefault(parse_path(where), {})[lang] = text
    maps = {}
    for path, given in texts.items():
        try:
            first = _get(spec, path)
        except (KeyError, IndexError, TypeError):
            first = None
        maps[path] = {languages[0]: first, **given} if isinstance(first, str) else given
    out = _with_texts(spec, maps)  # type: ignore[arg-type]  # objects in place of texts, checked next
    del out["translations"]
    return out


def _language_problems(spec: dict) -> list[tuple[str, str]]:
    languages = spec["languages"]
    if not isinstance(languages, list) or not languages:
        return [("languages", f"must be a list of language codes, such as {list(PLATFORM_LANGUAGES)}")]
    problems = []
    for i, lang in enumerate(languages):
        if lang not in PLATFORM_LANGUAGES:
            problems.append(
                (
                    f"languages[{i}]",
                    f"{lang!r} is not a language of the platform's own texts ({', '.join(PLATFORM_LANGUAGES)})",
                )
            )
        elif lang in languages[:i]:
            problems.append((f"languages[{i}]", f"{lang!r} is listed twice"))
    if "translations" in spec and not isinstance(spec["translations"], dict):
        problems.append(("translations", "must be an object: language -> {path: text}"))
    return problems


def translated_file(
    spec: dict,
    schema: dict,
    *,
    problem: Callable[[str, str], Any],
    schema_problems: Callable[[dict, dict], list],
    check: Callable[[dict], list],
    defaults: Callable[[dict], dict],
) -> tuple[dict, list]:
    """Validate a file with ``languages``; (the stored file, []) or (``{}``, its problems).

    ``schema_problems(spec, schema)``, ``check(spec)`` (the page and semantic checks of the file in its
    first language) and ``defaults(spec)`` are the format's own; ``problem(path, rule)`` makes a problem.
    """
    found = _language_problems(spec)
    if found:
        return {}, [problem(path, rule) for path, rule in found]
    if "translations" in spec:
        spec = _expanded(spec)
    languages = spec["languages"]
    problems = schema_problems(spec, language_schema(schema, languages))
    if problems:
        return {}, problems
    maps = dict(_marked(spec, schema))
    files = {lang: _with_texts(spec, {path: texts[lang] for path, texts in maps.items()}) for lang in languages}
    problems = check(files[languages[0]]) + _placeholder_problems(maps, languages, problem)
    if problems:
        return {}, problems
    done = {}
    for lang in languages:  # each language's defaults in that language
        with translation.override(lang):
            done[lang] = defaults(files[lang])
    out = done[languages[0]]
    paths = shown_paths(out, schema)
    out["translations"] = {lang: {path_text(p): _get(done[lang], p) for p in paths} for lang in languages[1:]}
    return out, []


def _placeholder_problems(maps: dict[Path, dict], languages: list[str], problem: Callable) -> list:
    """A profile text names the same ``{column}`` placeholders in every language."""
    from studies.format2 import placeholder_problems, placeholders

    out: list = []
    for path, texts in maps.items():
        if path[-1] != "profile":
            continue
        first = set(placeholders(texts[languages[0]])) if not placeholder_problems(texts[languages[0]]) else None
        for lang in languages[1:]:
            where = f"{path_text(path)}.{lang}"
            rules = placeholder_problems(texts[lang])
            out.extend(problem(where, rule) for rule in rules)
            if not rules and first is not None and set(placeholders(texts[lang])) != first:
                out.append(problem(where, f"must name the same placeholders as the {languages[0]!r} text"))
    return out


_LOCALIZED: BoundedCache[dict] = BoundedCache(size=256)


def localized(spec: dict, spec_hash: str, language: str) -> tuple[dict, str]:
    """The study file as participants of ``language`` see it, and the key its cached pages go under
    (the file and its digest themselves for its first language or a language it lacks). Options keep
    their values and carry the language's texts in ``option_labels``."""
    texts = spec.get("translations", {}).get(language)
    if not texts:
        return spec, spec_hash
    key = f"{spec_hash}:{language}"
    out = _LOCALIZED.get(key)
    if out is None:
        out = _LOCALIZED.put(key, _with_texts(spec, {parse_path(p): t for p, t in texts.items()}, labels=True))
    return out, key


def choose_language(languages: Sequence[str], wanted: Sequence[str]) -> str:
    """The first of ``wanted`` (the link's ``?lang=``, then the browser's languages, best first) that is
    one of ``languages`` (a study's, or the platform's), matching ``de-AT`` to ``de``; else the first of
    ``languages``."""
    for code in wanted:
        code = code.strip().lower()
        for candidate in (code, code.split("-")[0]):
            if candidate in languages:
                return candidate
    return languages[0]
