"""A quota's own screened-out ``message`` in a study's languages: given per language and validated like
every shown text (``path: rule``), shown to a screened-out participant in their language; without one,
the platform's default in their language."""

import json
from pathlib import Path

import pytest

from participation.models import Participant
from studies.quotas import DEFAULT_MESSAGE
from studies.study_file import validate_study
from tests.studies.test_format2 import problems

TRANSLATED = Path(__file__).resolve().parent.parent / "studies" / "translated_study.json"
MESSAGE = {
    "en": "Thank you! We already have enough legal professionals, so the study ends here.",
    "de": "Danke! Personen aus juristischen Berufen haben wir schon genug, daher endet die Studie hier.",
}


def quota_spec(**quota) -> dict:
    """The two-language example with at most one legal professional."""
    spec = json.loads(TRANSLATED.read_text())
    spec["quotas"] = [{"question": "role", "max": {"Legal professional": 1}, **quota}]
    return spec


def test_the_message_is_stored_in_every_language():
    stored = validate_study(quota_spec(message=MESSAGE))
    assert stored["quotas"][0]["message"] == MESSAGE["en"]
    assert stored["translations"]["de"]["quotas[0].message"] == MESSAGE["de"]
    assert "quotas[0].message" not in validate_study(quota_spec())["translations"]["de"]  # the default: none stored


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"en": MESSAGE["en"]}, "quotas[0].message: has no text in 'de' (the study's languages: en, de)"),
        (
            MESSAGE["en"],
            "quotas[0].message: must give the text in each of the study's languages: an object with 'en', 'de'",
        ),
        ({**MESSAGE, "de": ""}, "quotas[0].message.de: '' should be non-empty"),
        ({**MESSAGE, "fr": "Merci"}, "quotas[0].message: 'fr' is not one of the study's languages (en, de)"),
    ],
)
def test_a_message_missing_a_language_names_its_path(message, expected):
    assert expected in problems(quota_spec(message=message))


def test_a_message_per_language_needs_languages():
    spec = quota_spec(message=MESSAGE)
    english = {k: v for k, v in json.loads(json.dumps(spec)).items() if k != "languages"}
    assert any(p.startswith("quotas[0].message: a text in several languages needs") for p in problems(english))


def _screened_out(client, study, label: str, lang: str) -> str:
    """Participant ``label`` arrives with ``?lang=`` and answers "Legal professional"; the last page's HTML."""
    client.cookies.clear()
    client.get(f"/s/{study.slug}/?participant_label={label}&lang={lang}")
    client.post(f"/s/{study.slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    for page in participant.plan[:2]:  # the instructions, then the questionnaire with the quota's question
        data = {"role": "Legal professional"} if page.get("block") == "about" else {}
        response = client.post(f"/s/{study.slug}/page/", {"page_key": page["key"], **data}, follow=True)
    return response.content.decode()


@pytest.mark.parametrize(("message", "german"), [(MESSAGE, MESSAGE["de"]), (None, "Vielen Dank für Ihr Interesse.")])
def test_the_participant_sees_the_message_in_their_language(client, db, researcher, message, german):
    from studies.services import study_load

    spec = quota_spec(**({"message": message} if message else {}))
    study = study_load(spec=spec, owner=researcher).study
    first = _screened_out(client, study, "first", "de")
    assert german not in first and "Legal professional" not in first  # admitted: the group had a place
    html = _screened_out(client, study, "de-late", "de")
    assert Participant.objects.get(external_id="de-late").status == Participant.Status.SCREENED_OUT
    assert '<html lang="de">' in html and german in html
    assert MESSAGE["en"] not in html and DEFAULT_MESSAGE not in html
    english = _screened_out(client, study, "en-late", "en")
    assert (message or {"en": DEFAULT_MESSAGE})["en"] in english and german not in english
