"""Study files in several languages (``studies.translation``): every shown text in every language or a
``path: rule`` problem; the stored file is the first language plus ``translations`` and validates again
unchanged; defaults in each language from the platform's catalogue; format 1 refuses ``languages``."""

import json
from pathlib import Path

import pytest

from studies.study_file import validate_study
from studies.translation import choose_language, localized, parse_path, path_text
from tests.studies.test_format2 import problems

TRANSLATED = Path(__file__).resolve().parent / "translated_study.json"
FORMAT1 = Path(__file__).resolve().parent.parent.parent / "studies" / "bundled" / "effort_demo.json"


def translated() -> dict:
    return json.loads(TRANSLATED.read_text())


def test_stored_file_is_the_first_language_plus_translations_and_validates_again():
    stored = validate_study(translated())
    assert stored["languages"] == ["en", "de"]
    assert stored["title"] == "Judging an AI's predictions"
    assert stored["blocks"][1]["questions"][0]["options"] == ["Member of the public", "Legal professional"]
    assert stored["blocks"][2]["correct"] == "Blue"
    german = stored["translations"]["de"]
    assert german["title"] == "Wie urteilt eine KI?"
    assert german["blocks[1].questions[0].options[1]"] == "In einem juristischen Beruf tätig"
    # the platform's defaults, written in each language from its catalogue
    assert stored["consent"]["decline_message"].startswith("Thank you. You chose not to take part")
    assert german["consent.decline_message"].startswith("Vielen Dank")
    assert stored["blocks"][3]["label_names"] == {"0": "is low risk", "1": "is high risk"}
    assert german["blocks[3].label_names.1"] == "ein hohes Risiko"
    assert german["blocks[3].question"] == "Die KI sagt für diese {subject_noun} {prediction} voraus. Stimmen Sie zu?"
    assert validate_study(stored) == stored
    assert validate_study(json.loads(json.dumps(stored))) == stored


def test_localized_file_shows_the_language_and_keeps_the_answer_values():
    stored = validate_study(translated())
    german, key = localized(stored, "digest", "de")
    assert key == "digest:de"
    question = german["blocks"][1]["questions"][0]
    assert question["text"] == "Was beschreibt Sie am besten?"
    assert question["options"] == ["Member of the public", "Legal professional"]  # values, as stored
    assert question["option_labels"] == ["Privatperson", "In einem juristischen Beruf tätig"]
    assert german["blocks"][2]["option_labels"] == ["Rot", "Blau"] and german["blocks"][2]["correct"] == "Blue"
    assert german["pools"][0]["subjects"] is stored["pools"][0]["subjects"]  # the subjects are shared, not copied
    assert stored["blocks"][1]["questions"][0]["text"] == "Which describes you best?"  # the stored file unchanged
    assert localized(stored, "digest", "en") == (stored, "digest")
    assert localized(stored, "digest", "fr") == (stored, "digest")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda s: s["blocks"][0]["text"].pop("de"),
            "blocks[0].text: has no text in 'de' (the study's languages: en, de)",
        ),
        (
            lambda s: s["blocks"][1]["questions"][0].update(text="Which describes you best?"),
            "blocks[1].questions[0].text: must give the text in each of the study's languages: an object with "
            "'en', 'de'",
        ),
        (
            lambda s: s["blocks"][2]["options"][1].update(fr="Bleu"),
            "blocks[2].options[1]: 'fr' is not one of the study's languages (en, de)",
        ),
        (
            lambda s: s["consent"]["text"].update(de=""),
            "consent.text.de: '' should be non-empty",
        ),
        (
            lambda s: s.update(languages=["en", "fr"]),
            "languages[1]: 'fr' is not a language of the platform's own texts (en, de)",
        ),
        (lambda s: s.update(languages=["en", "en"]), "languages[1]: 'en' is listed twice"),
        (
            lambda s: s["pools"][0]["display"]["profile"].update(de="Diese Person ist {alter} Jahre alt."),
            "pools[0].display.profile.de: must name the same placeholders as the 'en' text",
        ),
        (  # the semantic checks see the first language: correct is one of its options
            lambda s: s["blocks"][2].update(correct="Blau"),
            "blocks[2].correct: 'Blau' is not one of the options",
        ),
    ],
)
def test_missing_or_wrong_translations_name_path_and_rule(edit, expected):
    spec = translated()
    edit(spec)
    assert expected in problems(spec)


def test_texts_per_language_need_languages_and_format_1_refuses_them():
    spec = translated()
    del spec["languages"]
    assert 'title: a text in several languages needs the file\'s "languages" (for example ["en", "de"])' in problems(
        spec
    )
    stored = validate_study(translated())
    stored["translations"]["de"]["blocks[0].text"] = ""
    assert "blocks[0].text.de: '' should be non-empty" in problems(stored)
    del stored["translations"]["de"]["blocks[0].text"]
    assert "blocks[0].text: must give the text in each of the study's languages: an object with 'en', 'de'" in problems(
        stored
    )
    format1 = json.loads(FORMAT1.read_text())
    format1["languages"] = ["en", "de"]
    assert problems(format1) == [
        "languages: format 1 files are in one language: convert the file to format 2 (manage.py convert_study) "
        "and give its texts in each language there"
    ]


def test_a_file_in_german_only_gets_german_defaults():
    spec = translated()
    spec["languages"] = ["de"]

    def german(node):
        if isinstance(node, dict) and set(node) == {"en", "de"}:
            return {"de": node["de"]}
        if isinstance(node, dict):
            return {k: german(v) for k, v in node.items()}
        return [german(v) for v in node] if isinstance(node, list) else node

    spec = german(spec)
    spec["blocks"][2]["correct"] = "Blau"
    stored = validate_study(spec)
    assert stored["translations"] == {} and stored["title"] == "Wie urteilt eine KI?"
    assert stored["blocks"][3]["label_names"]["0"] == "ein niedriges Risiko"


def test_paths_read_back_and_language_choice():
    for path in (("blocks", 0, "text"), ("blocks", 3, "label_names", "1"), ("screening", "options", 2)):
        assert parse_path(path_text(path)) == path
    assert choose_language(["en", "de"], ["", "de-CH", "en"]) == "de"
    assert choose_language(["en", "de"], ["fr", "it"]) == "en"
    assert choose_language(["de", "en"], []) == "de"
