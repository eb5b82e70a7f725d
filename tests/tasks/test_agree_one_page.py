"""An ``agree`` block with ``one_page``: all its items on one page (one fieldset each, as format 1 asks its
disagreement prompts) and ``item_keys`` (format 1's prompt keys) carried by the answers' ``text`` and the
disagreements table's ``prompt``: validation, plan and page counts, the page and its answers, simulation,
the integrity bounds, the export and BTS."""

import copy
import json
import re

import pytest

from analysis.bts import honesty_scores
from participation.assignment import build_plan_v2
from participation.integrity import check_integrity
from participation.models import Answer, Participant
from participation.page_bot import page_answers
from participation.simulate import simulate_participants
from research.export import export_tables
from studies.content import study_content
from studies.format2 import condition_summaries
from studies.services import study_load
from studies.study_file import InvalidStudyFile, validate_study
from tasks import bts_positives
from tasks.questions import task_question
from tests.conftest import ROOT
from tests.tasks import reach_task_page

SUBJECTS = ["D001", "D002", "D003", "D004", "D005", "D006"]
KEYS = {"D001": "q1", "D004": "q4"}


def one_page_spec(**block) -> dict:
    """The bundled disagreement study with its agree block over six defendants, all on one page."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "agree-one-page"
    pool = spec["pools"][0]
    pool["subjects"] = [s for s in pool["subjects"] if s["id"] in SUBJECTS]
    (agree,) = [b for b in spec["blocks"] if b.get("task") == "agree"]
    agree |= {"one_page": True, "item_keys": dict(KEYS), "assignment": {}, **block}
    return spec


def _problems(spec: dict) -> str:
    with pytest.raises(InvalidStudyFile) as caught:
        validate_study(spec)
    return str(caught.value)


def test_the_options_are_validated_with_their_paths():
    spec = one_page_spec()
    del spec["blocks"][3]["one_page"], spec["blocks"][3]["item_keys"]
    block = validate_study(spec)["blocks"][3]
    assert block["one_page"] is False and block["item_keys"] == {}  # the defaults
    assert "blocks[3].item_keys.D999: subject 'D999' is not in pool 'subjects'" in _problems(
        one_page_spec(item_keys={"D999": "q9"})
    )
    assert "blocks[3].item_keys: key 'q1' is given to two items" in _problems(
        one_page_spec(item_keys={"D001": "q1", "D002": "q1"})
    )
    assert "blocks[3].item_keys" in _problems(one_page_spec(item_keys={"D001": "not a key!"}))
    assert "blocks[3].one_page" in _problems(one_page_spec(one_page="yes"))
    spec = one_page_spec()
    check = next(b for b in spec["blocks"] if b["key"] == "attention_2")
    check["among"] = {"blocks": ["agree"], "after_items": 2}
    spec["blocks"].remove(check)
    spec["blocks"].insert(3, check)
    assert "blocks[3].among.blocks[0]: 'agree' asks its items on one page (one_page)" in _problems(spec)
    rate = one_page_spec()
    rate["blocks"][3] |= {"task": "rate", "one_page": True}
    assert "blocks[3].one_page: not used by a rate task" in _problems(rate)


@pytest.mark.parametrize("per_participant", [None, 4])
def test_the_plan_shows_the_items_of_the_per_item_plan_on_one_page(per_participant):
    """Same seed: the one page lists the items the one-item-per-page plan shows, in the same order, and the
    pages counted at validation are the plan's (one for the block instead of one per item)."""
    assignment = {} if per_participant is None else {"per_participant": per_participant, "stratify_by": "race"}
    one = validate_study(one_page_spec(assignment=assignment))
    per_item = validate_study(one_page_spec(assignment=assignment, one_page=False))
    condition = one["conditions"][0]["key"]
    for seed in range(5):
        choice = {"agree": SUBJECTS[: per_participant or 6]}
        plan = build_plan_v2(one, study_content(one, "one"), condition, seed, choice)
        items = [
            p["item"]
            for p in build_plan_v2(per_item, study_content(per_item, "per"), condition, seed, choice)
            if p["kind"] == "agree"
        ]
        (page,) = [p for p in plan if p["kind"] == "agree"]
        assert page == {"key": "agree", "kind": "agree", "block": "agree", "items": items, "position": 0}
        assert len(items) == (per_participant or 6)
        assert condition_summaries(one)[condition].pages == len(plan)
    assert condition_summaries(per_item)[condition].pages == len(plan) - 1 + (per_participant or 6)


@pytest.mark.django_db
def test_the_page_has_one_fieldset_per_item_and_stores_each_items_answers_with_its_key(client):
    spec = validate_study(one_page_spec())
    study_load(spec=spec)
    participant, page = reach_task_page(client, spec, "agree")
    html = client.get(f"/s/{spec['slug']}/page/").content.decode()
    assert (
        html.count('<fieldset class="item-group"') == 6 and html.count('<fieldset class="field') == 12
    )  # yes/no and confidence
    for i in range(6):  # answer, confidence and the BTS prediction of each item, named by its prefix
        assert f'name="item{i}-answer"' in html and f'name="item{i}-sure"' in html
        assert f'name="item{i}-prediction"' in html
    assert "Defendant 1 of 6" in html and "Defendant 6 of 6" in html
    # An empty answer: every error linked to its field, the page kept
    refused = client.post(f"/s/{spec['slug']}/page/", {"page_key": "agree"})
    body = refused.content.decode()
    assert refused.status_code in (200, 422) and 'id="id_item0-answer_error"' in body
    assert 'aria-describedby="id_item5-answer_error"' in body
    data = {"page_key": "agree"}
    for i in range(6):
        data |= {f"item{i}-answer": str(i % 2), f"item{i}-sure": "4", f"item{i}-prediction": "60"}
    client.post(f"/s/{spec['slug']}/page/", data)
    stored = Answer.objects.filter(participant=participant, page="agree")
    assert stored.count() == 18
    agree = {a.subject_key: a for a in stored.filter(measure="agree")}
    assert [agree[item].number for item in page["items"]] == [0, 1, 0, 1, 0, 1]
    for item, answer in agree.items():
        assert answer.question == task_question("agree", item, "agree") and answer.text == KEYS.get(item, "")
    # the type's bot (bench/launch.py's load client) answers every item of the page
    other, _ = reach_task_page(client, spec, "agree", label="p2")
    client.get(f"/s/{spec['slug']}/page/")
    client.post(f"/s/{spec['slug']}/page/", page_answers(other.pk))
    assert Answer.objects.filter(participant=other, page="agree").count() == 18


@pytest.mark.django_db
def test_simulated_participants_pass_the_integrity_check_and_export_one_row_per_item_with_bts():
    spec = validate_study(one_page_spec())
    study_load(spec=spec)
    report = simulate_participants(spec["slug"], n=8, seed=3, decline_rate=0)
    assert report.completed == 8
    assert check_integrity(spec["slug"]).ok
    tables = export_tables(spec["slug"])
    rows = tables.disagreements
    assert len(rows) == 8 * 6 and set(rows.groupby("participant_id").size()) == {6}
    expected = {s: KEYS.get(s, f"agree/{s}") for s in SUBJECTS}
    assert dict(zip(rows["subject"], rows["prompt"], strict=True)) == expected
    assert (rows["disagreement"] == 1 - rows["agree"]).all()
    agree = tables.answers[tables.answers["measure"] == "agree"]
    assert dict(zip(agree["subject"], agree["text"].fillna(""), strict=True)) == {s: KEYS.get(s, "") for s in SUBJECTS}
    scores = honesty_scores(tables.answers, bts_positives(spec), min_respondents=2)
    assert len(scores) == 8 and set(scores["n_questions"]) == {6}
    # one answer of the one page lost: the integrity check finds it
    victim = Participant.objects.filter(status="completed").first()
    Answer.objects.filter(participant=victim, page="agree", measure="confidence").first().delete()
    assert check_integrity(spec["slug"]).wrong == [str(victim.pseudonym)]


def test_a_format2_study_without_the_options_plans_as_before():
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    valid = validate_study(copy.deepcopy(spec))
    plan = build_plan_v2(valid, study_content(valid, "bundled"), valid["conditions"][0]["key"], 1, {})
    assert all(re.fullmatch(r"agree/D\d+", p["key"]) for p in plan if p["kind"] == "agree")
