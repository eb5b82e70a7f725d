"""The participant's language (``studies.translation``): from the study link's ``?lang=``, else the
browser's Accept-Language, else the study's first; stored on the participant at arrival and kept for
every later page whatever the browser says; pages, ``<html lang>`` and the platform's own texts in it;
answers store the first language's option values."""

import json
from pathlib import Path

import pytest

from participation.models import Answer, Participant

TRANSLATED = Path(__file__).resolve().parent.parent / "studies" / "translated_study.json"


@pytest.fixture
def translated_study(db, researcher):
    from studies.services import study_load

    return study_load(spec=json.loads(TRANSLATED.read_text()), owner=researcher).study


def _arrive(client, study, label: str, query: str = "", **headers):
    return client.get(f"/s/{study.slug}/?participant_label={label}{query}", headers=headers)


@pytest.mark.parametrize(
    ("query", "accept", "language"),
    [
        ("&lang=de", "", "de"),  # the link
        ("&lang=de", "en-GB,en;q=0.9", "de"),  # the link before the browser
        ("", "de-AT,de;q=0.9,en;q=0.5", "de"),  # the browser, matched by its primary subtag
        ("", "fr-FR,fr;q=0.9,de;q=0.8", "de"),  # the browser's first language the study has
        ("", "", "en"),  # the study's first
        ("&lang=fr", "fr", "en"),  # no language the study has: the study's first
    ],
)
def test_language_from_link_then_browser_then_study(client, translated_study, query, accept, language):
    headers = {"Accept-Language": accept} if accept else {}
    response = _arrive(client, translated_study, "p1", query, **headers)
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<html lang="{language}">' in html
    assert response["Content-Language"] == language
    assert Participant.objects.get(external_id="p1").language == language
    if language == "de":
        assert "<h1>Einwilligung</h1>" in html and "Ich bin einverstanden und nehme teil" in html
        assert "Die Teilnahme ist freiwillig." in html and "Wie urteilt eine KI?" in html
    else:
        assert "<h1>Consent</h1>" in html and "Taking part is voluntary." in html


def _pages(client, study, label: str = "de1", agree: str = "1") -> list[str]:
    """Answer every page of a participant of the translated study; the HTML of each page."""
    seen = []
    response = client.post(f"/s/{study.slug}/consent/", {"decision": "accept"}, follow=True)
    for _ in range(10):
        html = response.content.decode()
        seen.append(html)
        if "/done/" in response.request["PATH_INFO"]:
            return seen
        participant = Participant.objects.get(external_id=label)
        page = participant.plan[participant.position]
        data = {"page_key": page["key"]}
        if page.get("block") == "about":
            data["role"] = "Legal professional"
        elif page.get("block") == "check":
            data["choice"] = "Blue"
        elif page.get("block") == "judge":
            data["answer"] = agree
        response = client.post(f"/s/{study.slug}/page/", data, follow=True, headers={"Accept-Language": "en"})
    raise AssertionError("the study did not end")


def test_a_german_participant_stays_german_and_answers_store_first_language_values(client, translated_study):
    _arrive(client, translated_study, "de1", "&lang=de")
    pages = _pages(client, translated_study)
    assert all('<html lang="de">' in html for html in pages)  # never re-read from the browser's English
    joined = "\n".join(pages)
    for german in (
        "Anleitung",
        "Sie lesen gleich von zwei Personen",
        "Zu Ihrer Person",
        "In einem juristischen Beruf tätig",  # the option's German text shown ...
        "Wählen Sie bitte „Blau“",
        "Die KI sagt für diese Person ein",  # the default question and label names, in German
        "Diese Person ist 34 Jahre alt",  # the pool's German profile
        "Ja, ich stimme zu",
        "Seite 2 von",
        "Vielen Dank, Ihre Antworten sind gespeichert",
        "TRANS1",
    ):
        assert german in joined, german
    for english in ("Which describes you best?", "Next</button>", "Legal professional</span>"):
        assert english not in joined, english
    participant = Participant.objects.get(external_id="de1")
    assert participant.status == Participant.Status.COMPLETED and participant.language == "de"
    answers = {a.measure: a for a in Answer.objects.filter(participant=participant)}
    assert answers["questionnaire"].text == "Legal professional"  # ... and its first-language value stored
    assert answers["attention"].text == "Blue" and answers["attention"].number == 1


def test_a_refused_answer_is_explained_in_german(client, translated_study):
    _arrive(client, translated_study, "de1", "&lang=de")
    client.post(f"/s/{translated_study.slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id="de1")
    client.post(f"/s/{translated_study.slug}/page/", {"page_key": participant.plan[0]["key"]})  # instructions
    response = client.post(f"/s/{translated_study.slug}/page/", {"page_key": participant.plan[1]["key"]})
    html = response.content.decode()
    assert response.status_code == 422
    assert "Bitte wählen Sie eine Antwort." in html
    assert "Bitte korrigieren Sie die markierte Antwort unten" in html


def test_a_study_in_one_language_is_shown_in_it_whatever_the_link_asks(client, demo_study):
    response = _arrive(client, demo_study, "p9", "&lang=de", **{"Accept-Language": "de"})
    assert '<html lang="en">' in response.content.decode() and "I agree to take part" in response.content.decode()
    assert Participant.objects.get(external_id="p9").language == "en"


def test_exports_record_the_language_and_the_analysis_splits_by_it(client, translated_study):
    from research.export import export_tables
    from runs.design_analysis import study_analysis

    for label, query, agree in (("g1", "&lang=de", "1"), ("g2", "&lang=de", "1"), ("e1", "", "0"), ("e2", "", "0")):
        client.cookies.clear()
        _arrive(client, translated_study, label, query)
        _pages(client, translated_study, label, agree)
    participants = export_tables(translated_study.slug).participants.set_index("participant_id")
    by_label = {p.external_id: str(p.pseudonym) for p in Participant.objects.all()}
    assert participants.loc[by_label["g1"], "language"] == "de" and participants.loc[by_label["e2"], "language"] == "en"
    result = study_analysis(
        translated_study.slug,
        translated_study.spec,
        by=["language"],
        seed=1,
        n_resamples=50,
        n_permutations=50,
        min_group_size=1,
    )
    groups = result.rater_groups.set_index("rater_group")
    assert groups.loc["de", "n_participants"] == 2 and groups.loc["en", "n_participants"] == 2
    # the German participants agreed with the AI on both people, the English ones disagreed: DR 0 and 1
    rates = result.blocks[0].tables["disagreement_rate"].set_index("rater_group")["mean"]
    assert rates["de"] == 0.0 and rates["en"] == 1.0 and rates["all participants"] == 0.5
    assert result.blocks[0].tables["tests"].iloc[0]["difference"] == 1.0
