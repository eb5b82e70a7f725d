"""The task registry and every format 2 task type through the participant's pages: rendered,
refused with a specific message (nothing stored), saved as the format 2 contract's answer rows."""

import json

import pytest
from django.template.loader import get_template

from participation.models import Answer, Participant
from participation.plan import plan_for
from tasks import BLOCK_TASKS, REGISTRY, UnknownPageKind, task_for
from tests.participation.format2_helpers import example_spec, simple_plan
from tests.surveys.helpers import participant_session


def test_every_page_kind_of_both_formats_has_a_task_type_and_a_template(demo_spec):
    from studies.services import stored_file
    from studies.study_file import validate_study

    converted = stored_file(validate_study(demo_spec))[0]  # a format 1 file runs as its conversion
    kinds = {p["kind"] for c in converted["conditions"] for p in plan_for(converted, c["key"], 1)}
    spec2 = example_spec()
    kinds |= {p["kind"] for c in spec2["conditions"] for p in simple_plan(spec2, c["key"])}
    kinds |= set(BLOCK_TASKS) | {"instructions", "questionnaire", "attention", "screening"}
    assert kinds <= set(REGISTRY), kinds - set(REGISTRY)
    for kind in kinds:
        get_template(task_for({"kind": kind}).template({"kind": kind}))  # raises when missing
    with pytest.raises(UnknownPageKind, match="unknown page kind 'nope'"):
        task_for({"kind": "nope"})


def _start(client, slug: str) -> Participant:
    client.get(f"/s/{slug}/?participant_label=p1")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    return Participant.objects.get(external_id="p1")


def _page_key(client, slug: str) -> str:
    response = client.get(f"/s/{slug}/page/")
    assert response.status_code == 200
    html = response.content.decode()
    return html.split('name="page_key" value="', 1)[1].split('"', 1)[0]


def _post(client, slug: str, data: dict):
    return client.post(f"/s/{slug}/page/", {"page_key": _page_key(client, slug), **data})


VALID = {
    "instructions": {},
    "questionnaire": {"role": "Works in criminal justice", "age": "40", "trust": "4", "news": ["TV", "Social media"]},
    "agree": {"answer": "1", "sure": "2", "prediction": "50"},
    "attention": {"choice": "Red"},
    "rate": {"rating": "3", "prediction": "10"},
    "pair_comparable": {"answer": "1", "sure": "5"},
    "pair_distance": {"rating": "2", "prediction": "30"},
    "fair_score": {
        "k_decision": "correct",
        "k_score": "20",
        "score_d02": "40",
        "rationale_d02": "same record",
        "score_d03": "50",
        "rationale_d03": "same record",
    },
}
# kind -> (an invalid POST, the specific message it must show)
INVALID = {
    "questionnaire": (
        {"role": "Member of the public", "age": "17", "trust": "4"},
        "Enter a whole number between 18 and 100.",
    ),
    "agree": ({"answer": "1", "sure": "4", "prediction": "101"}, "A percentage cannot be above 100."),
    "attention": ({"choice": "Purple"}, "Select a valid choice"),
    "rate": ({"rating": "5", "prediction": "10"}, "Choose one of the 4 options on the scale."),
    "pair_comparable": ({"answer": "1"}, "Choose one of the 5 options."),
    "pair_distance": ({"rating": "9"}, "Choose one of the 6 options on the scale."),
    "fair_score": ({**VALID["fair_score"], "k_score": ""}, "You chose to correct the score"),
}


def _rows(**where) -> set:
    return {(a.question, a.measure, a.set_key, a.subject_key, a.number, a.text) for a in Answer.objects.filter(**where)}


def _expected(page: dict) -> set:
    """The contract's answer rows of a page answered with VALID."""
    block, item = page.get("block", ""), page.get("item", "")
    rows = {
        "instructions": set(),
        "questionnaire": {
            ("about/role", "questionnaire", "about", "role", None, "Works in criminal justice"),
            ("about/age", "questionnaire", "about", "age", 40.0, ""),
            ("about/trust", "questionnaire", "about", "trust", 4.0, ""),
            ("about/news", "questionnaire", "about", "news", None, json.dumps(["TV", "Social media"])),
        },
        "agree": {
            (f"{block}/{item}/agree", "agree", block, item, 1, ""),
            (f"{block}/{item}/confidence", "confidence", block, item, 2, ""),
            (f"{block}/{item}/prediction", "prediction", block, item, 50, ""),
        },
        "attention": {("attention/check", "attention", "check", "", 0, "Red")},
        "rate": {
            (f"{block}/{item}/rating", "rating", block, item, 3, ""),
            (f"{block}/{item}/prediction", "prediction", block, item, 10, ""),
        },
        "pair_comparable": {
            (f"{block}/{item}/comparable", "comparable", block, item, 1, ""),
            (f"{block}/{item}/strength", "strength", block, item, 5, ""),
        },
        "fair_score": {
            ("fair/s1/k_accept", "k_accept", "fair", "d01", 0, ""),
            ("fair/s1/k_score", "k_score", "fair", "d01", 0.2, ""),
            ("fair/s1/d02/fair_score", "fair_score", "fair", "d02", 0.4, ""),
            ("fair/s1/d02/rationale", "rationale", "fair", "d02", None, "same record"),
            ("fair/s1/d03/fair_score", "fair_score", "fair", "d03", 0.5, ""),
            ("fair/s1/d03/rationale", "rationale", "fair", "d03", None, "same record"),
        },
    }
    if page["kind"] == "pair_distance":
        measure = page["measure"]
        question = f"{block}/{item}/{measure}"
        out = {(question, measure, block, item, 2, "")}
        if measure == "overall":
            out.add((f"{question}/prediction", "prediction", block, item, 30, ""))
        return out
    return rows[page["kind"]]


def _shows(page: dict, html: str, spec: dict) -> None:
    """What the first page of each kind must show."""
    if page["kind"] == "agree":
        subject = next(s for s in spec["pools"][0]["subjects"] if s["id"] == page["item"])
        label = spec["blocks"][2]["label_names"][str(subject["models"]["ai"]["label"])]
        assert f"The AI predicts that this defendant {label}. Do you agree?" in html
        assert f"aged {subject['features']['age']}" in html and "How confident are you?" in html
    if page["kind"] == "rate":
        assert "How likely is this defendant to reoffend?" in html and "out of 100" in html
    if page["kind"] in ("pair_comparable", "pair_distance"):
        assert "Defendant A" in html and "Defendant B" in html
    if page["kind"] == "pair_comparable":
        assert "Should these two defendants be treated alike?" in html and "How sure are you?" in html
    if page["kind"] == "questionnaire":
        assert "Anything else? (optional)" in html and "<legend>Which best describes you?</legend>" in html


@pytest.mark.django_db(transaction=True)
def test_format2_pages_render_refuse_and_save_the_contract_rows(client, format2_study):
    slug, spec = format2_study.slug, format2_study.spec
    participant = _start(client, slug)
    kinds_seen = set()
    for page in participant.plan:
        html = client.get(f"/s/{slug}/page/").content.decode()
        assert f'name="page_key" value="{page["key"]}"' in html
        before = Answer.objects.count()
        if page["kind"] not in kinds_seen or page.get("measure") == "overall":
            _shows(page, html, spec)
            if page["kind"] in INVALID:
                data, message = INVALID[page["kind"]]
                response = _post(client, slug, data)
                assert response.status_code == 422 and message in response.content.decode(), page["key"]
                assert Answer.objects.count() == before  # nothing stored
        kinds_seen.add(page["kind"])
        data = dict(VALID[page["kind"]])
        if page.get("measure") in ("trajectory", "aggregate"):
            data.pop("prediction")
        response = _post(client, slug, data)
        assert response.status_code in (200, 302), response.content.decode()
        assert _rows(question__in=[row[0] for row in _expected(page)]) == _expected(page), page["key"]
        assert Answer.objects.count() == before + len(_expected(page))
    assert kinds_seen == set(VALID)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    done = client.get(f"/s/{slug}/done/").content.decode()
    assert "C0DE2" in done  # one failed attention check: below the default threshold of 2
    assert participant_session(client).get(f"participant:{slug}") is None


def test_simulated_raters_answer_every_format2_page_validly():
    import numpy as np
    from django.utils.datastructures import MultiValueDict

    from participation.pages import condition_index, form_answers, page_form
    from simulation.raters import SimulatedRater

    spec = example_spec()
    rng = np.random.default_rng(3)
    for condition in ("shown", "hidden"):
        index = condition_index(spec, "sim-test", condition)
        for page in simple_plan(spec, condition):
            for rater in (SimulatedRater(leniency=-3.0, noise=0.1), SimulatedRater(leniency=3.0, scale_shift=1)):
                data = task_for(page).simulate(page, index, rater, rng)
                form = page_form(
                    page, index, MultiValueDict({k: v if isinstance(v, list) else [v] for k, v in data.items()})
                )
                assert form.is_valid(), (page["key"], form.errors)
                form_answers(page, index, form)


def test_leniency_moves_simulated_agreement():
    """A rater with positive leniency agrees with the AI more often than one with negative leniency."""
    import numpy as np

    from participation.pages import condition_index
    from simulation.raters import SimulatedRater

    spec = example_spec()
    index = condition_index(spec, "sim-test", "shown")
    page = next(p for p in simple_plan(spec, "shown") if p["kind"] == "agree")
    rng = np.random.default_rng(0)
    agree = task_for(page)

    def rate(leniency: float) -> float:
        return np.mean(
            [int(agree.simulate(page, index, SimulatedRater(leniency=leniency), rng)["answer"]) for _ in range(400)]
        )

    low, high = rate(-1.0), rate(2.0)
    assert 0.4 < low < 0.6 and 0.9 < high  # expit(1 - 1) = 0.5, expit(1 + 2) = 0.95 (noise 0.5 widens a little)


def test_a_task_blocks_intro_is_shown_under_the_heading_of_each_of_its_pages():
    from django.template.loader import render_to_string

    from participation.pages import condition_index, page_context, page_form

    spec = example_spec()
    for block in spec["blocks"]:
        if block["type"] == "task":
            block["intro"] = f"About block {block['key']} & its <items>."
    seen = set()
    for condition in spec["conditions"]:
        index = condition_index(spec, "intro-test", condition["key"])
        for page in simple_plan(spec, condition["key"]):
            if page["kind"] not in BLOCK_TASKS:
                continue
            ctx = page_context(page, index)
            html = render_to_string(ctx.pop("template"), {**ctx, "form": page_form(page, index), "page": page})
            intro = f'<p class="context">About block {page["block"]} &amp; its &lt;items&gt;.</p>'
            assert html.count(intro) == 1, page["key"]
            seen.add(page["kind"])
    assert seen == {b["task"] for b in spec["blocks"] if b["type"] == "task"} and len(seen) >= 5
