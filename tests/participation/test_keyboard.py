"""A keyboard-only participant (Tab, arrow keys, Space, typing and Enter; never a click) completes the effort
demo (its first stimulus set per condition: every page kind of the demo, a third of its pages) and the bundled
disagreement template (4 of the 20 defendants its participants judge, two per race: every page kind, a third of
its pages) in Chromium at phone width, answering attention checks correctly and reaching the completion code."""

import json

import pytest

from participation.models import Answer, Participant
from tasks.questions import page_key
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = """() => {
  const el = document.activeElement;
  const label = el.labels && el.labels.length ? el.labels[0].innerText.trim() : "";
  return {tag: el.tagName.toLowerCase(), type: (el.type || "").toLowerCase(), name: el.name || "",
          label: label, required: !!el.required, min: el.min || "", max: el.max || "", step: el.step || "",
          inMain: !!el.closest("main form")};
}"""
MAX_KEYS = 400


def _correct_answers(spec: dict) -> dict[str, str]:
    """The right option of each attention check, by the last part of its page key (a converted format 1
    check's page key is format 1's, ``attention/<check>``)."""
    return {page_key(b).split("/")[-1]: b["correct"] for b in spec["blocks"] if b["type"] == "attention"}


def _number(focused: dict) -> str:
    low = float(focused["min"]) if focused["min"] else 0.0
    high = float(focused["max"]) if focused["max"] else low + 100
    return str(int((low + high) / 2))  # a whole number is valid for any step


def _answer_page_by_keyboard(page, correct: dict[str, str]) -> None:
    """Tab through the page once, answering every field it reaches, then press Enter on the submit button."""
    key = (
        page.locator("input[name=page_key]").get_attribute("value")
        if page.locator("input[name=page_key]").count()
        else ""
    )
    wanted = correct.get(key.split("/")[-1])
    answered: set[str] = set()
    for _ in range(MAX_KEYS):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if not focused["inMain"]:
            continue
        name, kind = focused["name"], focused["type"]
        if kind == "submit":
            with page.expect_navigation():
                page.keyboard.press("Enter")
            return
        if name in answered:
            continue
        answered.add(name)
        if kind == "radio":
            if wanted is None:
                page.keyboard.press("Space")
            else:
                for _ in range(12):
                    if page.evaluate(FOCUSED)["label"] == wanted:
                        break
                    page.keyboard.press("ArrowDown")  # moves to and selects the next option
                page.keyboard.press("Space")
        elif kind == "checkbox":
            page.keyboard.press("Space")
        elif kind == "number" and focused["required"]:
            page.keyboard.type(_number(focused))
        elif focused["tag"] in ("textarea", "input") and kind in ("text", "textarea", "") and focused["required"]:
            page.keyboard.type("Typed with the keyboard only")
    raise AssertionError(f"no submit button reached by Tab on {page.url}")


def _take_study_by_keyboard(browser, live_server, spec: dict, label: str) -> Participant:  # noqa: F811
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{live_server.url}/s/{spec['slug']}/?PROLIFIC_PID={label}&STUDY_ID=s&SESSION_ID=k")
    correct = _correct_answers(spec)
    for _ in range(200):
        if "/done/" in page.url:
            break
        before = page.url, page.content()
        _answer_page_by_keyboard(page, correct)
        assert not page.get_by_role("alert").count(), f"refused: {page.get_by_role('alert').all_inner_texts()}"
        assert (page.url, page.content()) != before
    assert page.locator("#completion-code").inner_text() == spec["completion"]["code"]
    page.context.close()
    return Participant.objects.get(external_id=label)


@pytest.mark.parametrize("bundled", ["effort_demo", "disagreement_synthetic"])
def test_a_keyboard_only_participant_completes_the_study(browser, live_server, researcher, bundled):  # noqa: F811
    from studies.services import study_load
    from studies.study_file import validate_study

    spec = json.loads((ROOT / "studies" / "bundled" / f"{bundled}.json").read_text())
    for condition in spec.get("conditions", []):  # the pair, chart and score pages of one set are those of three
        condition["stimulus_sets"] = condition["stimulus_sets"][:1]
    for block in spec.get("blocks", []):  # the agree pages (one per defendant) are one page kind
        if "per_participant" in block.get("assignment", {}):
            block["assignment"]["per_participant"] = 4
    study = study_load(spec=validate_study(spec), owner=researcher).study
    participant = _take_study_by_keyboard(browser, live_server, study.spec, f"keys-{bundled}")
    assert participant.status == Participant.Status.COMPLETED
    attention = Answer.objects.filter(participant=participant, measure="attention")
    assert attention.count() and set(attention.values_list("number", flat=True)) == {1.0}  # every check right
