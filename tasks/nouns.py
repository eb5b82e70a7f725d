"""The subject noun in participants' questions: ``{subject_noun}`` (singular) and ``{subject_nouns}`` (plural).

A pool names its subjects once (``subject_noun``, default "person") and may give the plural
(``subject_noun_plural``); without it the plural follows English rules: the irregular nouns a study is likely to
use ("person" -> "people", "child" -> "children", "man"/"woman" -> "men"/"women"), -s/-x/-z/-ch/-sh -> -es,
consonant + y -> -ies, otherwise -s. A study in another language gives ``subject_noun_plural`` (the German
default questions avoid the plural). Questions written as ``{subject_noun}s`` (the defaults before the plural
existed, kept in stored study files) read as the plural.
"""

from tasks.page_index import Pool

IRREGULAR = {"person": "people", "child": "children", "man": "men", "woman": "women"}


def plural(noun: str) -> str:
    """The English plural of ``noun`` (its last word is inflected: "loan applicant" -> "loan applicants")."""
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if lower in IRREGULAR:
        word = IRREGULAR[lower]
        word = word.capitalize() if last[:1].isupper() else word
    elif lower.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def question_text(template: str, pool: Pool, **values: str) -> str:
    """``template`` with the pool's noun (``{subject_noun}``), its plural (``{subject_nouns}``, also written
    ``{subject_noun}s``) and the block's other ``values`` (``{decision}``, ``{prediction}``) filled in."""
    noun = pool.get("subject_noun") or "person"
    nouns = pool.get("subject_noun_plural") or plural(noun)
    plural_written = template.replace("{subject_noun}s", "{subject_nouns}")
    return plural_written.format(subject_noun=noun, subject_nouns=nouns, **values)
