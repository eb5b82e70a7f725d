"""The rank page in Chromium at 390 px and on a desktop: one rank select per person beside their profile,
no horizontal scroll on a phone; a rank given twice is refused naming both people and the ranks chosen
are kept; corrected, the ranking is stored. Screenshots of both widths (and of the refusal) are saved."""

import pytest

from participation.models import Answer, Participant
from studies.services import study_load
from studies.synthetic_defendants import draw_defendants
from tests.studies.test_builder import build
from tests.surveys.test_e2e_browser import submit

WIDTHS = {"phone": (390, 844), "desktop": (1280, 900)}


def rank_page(browser, base: str, label: str, viewport: tuple[int, int]):  # noqa: F811
    """A participant ``label`` consents and is moved on to their first rank page (the pages before it,
    instructions, questionnaire and an attention check, are other task types' tests)."""
    page = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}).new_page()
    page.goto(f"{base}/s/rankings/?participant_label={label}")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    participant = Participant.objects.get(external_id=label)
    first = next(i for i, p in enumerate(participant.plan) if p["kind"] == "rank")
    Participant.objects.filter(pk=participant.pk).update(position=first)
    page.goto(f"{base}/s/rankings/page/")
    return page, participant, participant.plan[first]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_participant_ranks_four_people_on_a_phone_and_a_desktop(browser, live_server, researcher, tmp_path):  # noqa: F811
    spec = build(draw_defendants(12, seed=5), "rank", group_columns=["race", "sex"], score_column="ai_score")
    spec["slug"] = "rankings"
    study_load(spec=spec, owner=researcher)
    for width, viewport in WIDTHS.items():
        page, participant, shown = rank_page(browser, live_server.url, f"rank-{width}", viewport)
        assert (
            page.get_by_role("heading", level=1).inner_text()
            == "Rank these people by who should be considered lower risk."
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport[0]
        page.screenshot(path=str(tmp_path / f"rank-{width}.png"), full_page=True)
        boxes = [page.get_by_label(f"Rank of Person {letter}") for letter in "ABCD"]
        for box, rank in zip(boxes, ("1", "1", "3", "4"), strict=True):
            box.select_option(rank)
        submit(page)
        assert "you gave rank 1 to Person A, Person B." in page.content()
        assert [box.input_value() for box in boxes] == ["1", "1", "3", "4"]  # what was chosen is kept
        assert not Answer.objects.filter(participant=participant, measure="rank").exists()
        page.screenshot(path=str(tmp_path / f"rank-{width}-refused.png"), full_page=True)
        boxes[1].select_option("2")
        submit(page)
        subjects = shown["item"].split("~")
        stored = {a.subject_key: a.number for a in Answer.objects.filter(participant=participant, measure="rank")}
        assert stored == dict(zip(subjects, (1.0, 2.0, 3.0, 4.0), strict=True))
        page.context.close()
