"""The triplet task type ("who is more similar to Person A: Person B or Person C?"), added as one module,
its template and these tests: its study-file options, its page and answers, its simulation, and its
analysis into a learned fair metric per rater group with a BTS follow-up on the AI's closer subject."""

import json
import re

import pytest

from participation.models import Answer
from studies.study_file import InvalidStudyFile, validate_study
from tests.conftest import ROOT
from tests.tasks import reach_task_page

SUBJECTS = ["D031", "D076", "D112", "D148", "D196", "D003", "D010", "D020"]


def triplet_spec(**block) -> dict:
    """The bundled disagreement study with a triplet block: each of eight defendants the anchor of the
    triplets with the next two (cyclically) and with the two after those."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "triplet-sim"
    pool = spec["pools"][0]
    pool["subjects"] = [s for s in pool["subjects"] if s["id"] in SUBJECTS]
    n = len(SUBJECTS)
    triplets = [
        {"anchor": SUBJECTS[i], "b": SUBJECTS[(i + k) % n], "c": SUBJECTS[(i + k + 1) % n]}
        for i in range(n)
        for k in (1, 3)
    ]
    task = {"key": "alike", "type": "task", "task": "triplet", "pool": "subjects", "triplets": triplets}
    task |= {"model": "ai", "strength": True, "bts": {}, **block}
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [task]
    return spec


def test_the_block_is_validated_by_its_own_rules():
    spec = validate_study(triplet_spec())
    block = spec["blocks"][-1]
    assert block["question"] == "Who is more similar to {anchor}: {b} or {c}?" and block["strength"] is True
    twice = [{"anchor": "D031", "b": "D076", "c": "D112"}, {"anchor": "D031", "b": "D112", "c": "D076"}]
    problems = {
        "BTS without a model": (triplet_spec(model=None), "name a model"),
        "another task's option": (triplet_spec(decision="x"), "blocks[4].decision: not used by a triplet task"),
        "a subject twice": (triplet_spec(triplets=[{"anchor": "D031", "b": "D031", "c": "D076"}]), "three different"),
        "not in the pool": (triplet_spec(triplets=[{"anchor": "D031", "b": "X1", "c": "D076"}]), "triplets[0].b"),
        "a triplet twice": (triplet_spec(triplets=twice), "the triplet D031 (D076 / D112) is listed twice"),
    }
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name


@pytest.mark.django_db
def test_a_participant_chooses_and_the_answers_follow_the_contract(client, researcher):
    from studies.services import study_load

    spec = triplet_spec()
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "triplet")
    html = client.get("/s/triplet-sim/page/").content.decode()
    assert "Who is more similar to Defendant A: Defendant B or Defendant C?" in html
    assert "a fair decision should treat the two alike" in html
    anchor, b, c = page["item"].split("~")
    scores = {s["id"]: s["models"]["ai"]["score"] for s in triplet_spec()["pools"][0]["subjects"]}
    ai_b = abs(scores[b] - scores[anchor]) < abs(scores[c] - scores[anchor])
    assert f"What percentage of other participants do you think chose Defendant {'B' if ai_b else 'C'}?" in html
    refused = client.post("/s/triplet-sim/page/", {"page_key": page["key"], "sure": "3", "prediction": "40"})
    assert refused.status_code == 422 and "Choose Defendant B or Defendant C." in refused.content.decode()
    assert not Answer.objects.filter(participant=participant, measure="closer").exists()
    client.post("/s/triplet-sim/page/", {"page_key": page["key"], "closer": "c", "sure": "4", "prediction": "40"})
    stored = {x.measure: (x.number, x.text) for x in Answer.objects.filter(participant=participant, set_key="alike")}
    assert stored["closer"] == (0.0, c) and stored["strength"] == (4.0, "") and stored["prediction"] == (40.0, "")
    assert stored["ai_closer"] == (float(not ai_b), "")


@pytest.mark.slow
@pytest.mark.django_db
def test_simulated_triplets_give_a_metric_and_a_bts_honesty_score(researcher, tmp_path):
    """Simulated raters judge by the pool's scaled features with equal weights (``simulation.metric``): the
    learned metric of all participants weighs every feature that varies, its CIs contain the estimates, and
    each rater group gets its own rows."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from studies.services import study_load

    spec = study_load(spec=triplet_spec(), owner=researcher).study.spec
    simulate_participants("triplet-sim", n=40, seed=3, decline_rate=0)
    result = study_analysis("triplet-sim", spec, by=["role"], n_resamples=20, n_permutations=20)
    block = next(b for b in result.blocks if b.task == "triplet")
    metric = block.tables["triplet_metric"]
    overall = metric[metric["rater_group"] == "all participants"].set_index("feature")
    assert overall["n_judgements"].iloc[0] == 40 * 16 and overall["n_raters"].iloc[0] == 40
    assert (overall["weight"] >= 0).all() and overall["weight"].sum() > 1
    # basic bootstrap intervals (2 t - quantiles) need not contain the estimate; they are ordered and finite
    assert (overall["ci_low"] <= overall["ci_high"]).all() and overall[["ci_low", "ci_high"]].notna().all().all()
    assert metric["rater_group"].nunique() > 2
    assert len(result.honesty) == 40 and result.honesty["n_questions"].min() >= 5
    from runs.reports.design import write_design_report

    html = write_design_report(result, tmp_path, title="Triplets").read_text()
    assert html.count('class="chart report-chart"') == 1 and "learned fair metric: feature weights" in html


@pytest.mark.django_db
def test_pair_comparable_blocks_also_learn_a_metric(researcher):
    """The same estimator from "treat alike" answers (``kind="comparable"``, EXPLORE's link): the
    pair_comparable analysis has a ``comparable_metric`` table for all participants and per rater group.
    Rater groups too small to compare (30 participants in four roles, fewer than 10 each) leave the
    all-participants rows, which count every rater."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from studies.services import study_load

    spec = triplet_spec()
    pairs = [{"a": a, "b": b} for i, a in enumerate(SUBJECTS) for b in SUBJECTS[i + 1 :]]
    spec["slug"] = "comparable-metric"
    spec["blocks"][-1] = {"key": "alike", "type": "task", "task": "pair_comparable", "pool": "subjects", "pairs": pairs}
    spec = study_load(spec=spec, owner=researcher).study.spec
    simulate_participants("comparable-metric", n=30, seed=5, decline_rate=0)
    result = study_analysis("comparable-metric", spec, by=["role"], n_resamples=15, n_permutations=15)
    block = next(b for b in result.blocks if b.task == "pair_comparable")
    metric = block.tables["comparable_metric"]
    overall = metric[metric["rater_group"] == "all participants"]
    assert len(overall) == 6 and (overall["n_judgements"] == 30 * len(pairs)).all()
    assert (overall["weight"] >= 0).all() and "15 rater resamples" in block.notes[0]
    assert set(metric["rater_group"]) == {"all participants"}
    assert (result.rater_groups["status"] == "too few to compare").all()
    smaller = study_analysis(
        "comparable-metric", spec, by=["role"], n_resamples=15, n_permutations=15, min_group_size=5
    ).blocks
    metric = next(b for b in smaller if b.task == "pair_comparable").tables["comparable_metric"]
    compared = {g for g in metric["rater_group"] if g != "all participants"}
    assert compared and all(len(metric[metric["rater_group"] == g]) == 6 for g in compared)
    assert metric.loc[metric["rater_group"] == "all participants", "weight"].tolist() == overall["weight"].tolist()
