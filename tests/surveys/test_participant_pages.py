"""What participants see of a study's pages: no subject ids (the format 1 conversion and the study file's
validation), Plotly only on the pages that draw a chart, the BTS follow-up explained where a choice page
has none (the fair-score page's accept
box in Chromium: tests/participation/test_participant_browser.py)."""

import copy
import re

import pytest

from participation.models import Participant
from studies.study_file import InvalidStudyFile, validate_study
from tests.tasks import reach_task_page
from tests.tasks.test_choose import choice_spec
from tests.tasks.test_triplet import triplet_spec


@pytest.mark.django_db
def test_converted_format1_pools_show_no_subject_id(demo_study):
    """The effort demo (format 1, converted when loaded) used to show each person's id as their profile."""
    pools = demo_study.spec["pools"]
    assert pools and all("profile" not in pool["display"] for pool in pools)


@pytest.mark.parametrize(
    "display, where",
    [({"profile": "Case {id}: aged {age}."}, "display.profile"), ({"table": ["id", "age"]}, "display.table[0]")],
)
def test_a_study_file_cannot_show_a_subjects_id(display, where):
    spec = choice_spec()
    spec["pools"][0]["display"] = display
    with pytest.raises(InvalidStudyFile, match=re.escape(where) + ".*a subject's id is the study file's"):
        validate_study(spec)


@pytest.mark.django_db
def test_plotly_loads_only_on_pages_with_a_chart(client, demo_study):
    """The consent page, a page without a chart and the end page load no Plotly (4.8 MB); a pair page of the
    effort demo (a chart of both people's series) does."""
    consent = client.get("/s/effort-demo/", {"participant_label": "charts"}).content.decode()
    assert "I agree to take part" in consent and "plotly" not in consent and "charts.js" not in consent
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id="charts")
    first = client.get("/s/effort-demo/page/").content.decode()  # the instructions
    assert participant.plan[0]["kind"] == "instructions" and "plotly" not in first
    pair = next(i for i, p in enumerate(participant.plan) if p["kind"] == "pair_distance")
    from tests.surveys.helpers import answer_pages

    answer_pages(participant, pair)
    page = client.get("/s/effort-demo/page/").content.decode()
    assert 'data-chart="chart-data-pair"' in page and "vendor/plotly.min.js" in page


def _tied(spec: dict) -> dict:
    """``spec`` with every subject of its pool given the same AI score: no page has an AI favourite."""
    spec = copy.deepcopy(spec)
    for subject in spec["pools"][0]["subjects"]:
        subject["models"]["ai"]["score"] = 0.4
    return spec


@pytest.mark.django_db
@pytest.mark.parametrize("kind, make", [("choose", choice_spec), ("triplet", triplet_spec)])
def test_a_choice_page_without_the_bts_follow_up_says_why(client, researcher, kind, make):
    """The follow-up asks about the AI's favourite; when the AI's scores tie there is none, and the page says
    so instead of leaving the question out without a word. With a favourite, the question and no note."""
    from studies.services import study_load

    spec = _tied(make())
    study_load(spec=spec, owner=researcher)
    reach_task_page(client, spec, kind)
    page = client.get(f"/s/{spec['slug']}/page/").content.decode()
    assert 'id="bts-note"' in page and "no question about other participants" in page
    assert "What percentage of other participants" not in page
    client.cookies.clear()
    spec = make()
    spec["slug"] += "-scored"
    study_load(spec=spec, owner=researcher)
    reach_task_page(client, spec, kind, label="p2")
    page = client.get(f"/s/{spec['slug']}/page/").content.decode()
    assert "What percentage of other participants" in page and 'id="bts-note"' not in page
