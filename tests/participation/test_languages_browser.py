"""A German participant completes the two-language example study in Chromium at phone width (390 px):
the link's ``?lang=de`` beats the browser's English, every page is German with ``<html lang="de">``,
nothing is wider than the phone; a browser asking for German (Accept-Language) gets German without the
link, and one asking for French gets the study's first language. With ``SCREENSHOT_DIR`` set, the
pages are photographed."""

import json
import os
from pathlib import Path

import pytest

from participation.models import Answer, Participant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("SCREENSHOT_DIR")
TRANSLATED = Path(__file__).resolve().parent.parent / "studies" / "translated_study.json"


@pytest.fixture
def translated_study(db, researcher):
    from studies.services import study_load

    return study_load(spec=json.loads(TRANSLATED.read_text()), owner=researcher).study


def _page(browser, locale: str):  # noqa: F811
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale)
    return context.new_page()


def _next(page, name: str = "Weiter") -> None:
    assert page.evaluate("document.documentElement.lang") == "de"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"de-{page_key(page)}.png"), full_page=True)
    with page.expect_navigation():
        page.get_by_role("button", name=name).click()


def page_key(page) -> str:
    found = page.locator("input[name=page_key]")
    return found.get_attribute("value").replace("/", "-") if found.count() else "consent"


def test_a_german_participant_completes_the_study_on_a_phone(browser, live_server, translated_study):  # noqa: F811
    page = _page(browser, "en-GB")
    page.goto(f"{live_server.url}/s/{translated_study.slug}/?participant_label=tel-de&lang=de")
    assert page.get_by_role("heading", name="Einwilligung").is_visible()
    _next(page, "Ich bin einverstanden und nehme teil")
    assert page.get_by_role("heading", name="Anleitung").is_visible()
    _next(page, "Los geht’s")
    page.get_by_label("In einem juristischen Beruf tätig").check()
    _next(page)
    page.get_by_label("Blau").check()
    _next(page)
    for _ in range(2):  # the two people, in this participant's order
        assert "Die KI sagt für diese Person ein" in page.content()
        page.get_by_label("Nein, ich stimme nicht zu").check()
        _next(page)
    assert page.get_by_role("heading", name="Vielen Dank, Ihre Antworten sind gespeichert").is_visible()
    assert page.locator("#completion-code").inner_text() == "TRANS1"
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "de-done.png"), full_page=True)
    participant = Participant.objects.get(external_id="tel-de")
    assert participant.language == "de" and participant.status == Participant.Status.COMPLETED
    texts = set(Answer.objects.filter(participant=participant).values_list("text", flat=True))
    assert {"Legal professional", "Blue"} <= texts  # the first language's values


@pytest.mark.parametrize(("locale", "lang", "heading"), [("de-DE", "de", "Einwilligung"), ("fr-FR", "en", "Consent")])
def test_the_browser_language_without_the_link(browser, live_server, translated_study, locale, lang, heading):  # noqa: F811
    page = _page(browser, locale)
    page.goto(f"{live_server.url}/s/{translated_study.slug}/?participant_label=tel-{lang}")
    assert page.evaluate("document.documentElement.lang") == lang
    assert page.get_by_role("heading", name=heading).is_visible()
