"""The choose task type ("which of these two should get the loan?"), added as one module, its template
and these tests: its study-file options, its page and answers, its simulation, and its analysis into
Bradley-Terry strengths per rater group with a BTS follow-up on choosing the AI's favourite."""

import json
import re

import pytest
from scipy.stats import spearmanr

from participation.models import Answer
from studies.study_file import InvalidStudyFile, validate_study
from tests.conftest import ROOT
from tests.tasks import reach_task_page

SUBJECTS = ["D031", "D076", "D112", "D148", "D196"]  # AI risk scores .18 to .57, about .1 apart


def choice_spec(**block) -> dict:
    """The bundled disagreement study with a choose block over every pair of five of its defendants."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "choose-loan"
    pool = spec["pools"][0]
    pool["subjects"] = [s for s in pool["subjects"] if s["id"] in SUBJECTS]
    pairs = [{"a": a, "b": b} for i, a in enumerate(SUBJECTS) for b in SUBJECTS[i + 1 :]]
    task = {"key": "loan", "type": "task", "task": "choose", "pool": "subjects", "pairs": pairs}
    task |= {"decision": "be released before trial", "model": "ai", "strength": True, "bts": {}, **block}
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [task]
    return spec


def test_the_block_is_validated_by_its_own_rules():
    spec = validate_study(choice_spec())
    block = spec["blocks"][-1]
    assert block["question"] == "Which of these two {subject_nouns} should {decision}?"
    assert block["allow_equal"] is False and block["favourable"] == "lower"
    problems = {
        "no decision": (choice_spec(decision=None), "a choose task needs 'decision'"),
        "BTS without a model": (choice_spec(model=None), "name a model"),
        "another task's option": (choice_spec(confidence=True), "blocks[4].confidence: not used by a choose task"),
        "a pair twice": (choice_spec(pairs=[{"a": "D001", "b": "D002"}, {"a": "D002", "b": "D001"}]), "listed twice"),
    }
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name


@pytest.mark.django_db
def test_a_participant_chooses_and_the_answers_follow_the_contract(client, researcher):
    from studies.services import study_load

    spec = choice_spec(allow_equal=True)
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "choose")
    html = client.get("/s/choose-loan/page/").content.decode()
    assert "<h1>Defendant A or Defendant B?</h1>" in html
    assert "Which of these two defendants should be released before trial?" in html
    assert "Equally" in html and "What percentage of other participants do you think chose Defendant" in html
    refused = client.post("/s/choose-loan/page/", {"page_key": page["key"], "sure": "3", "prediction": "40"})
    assert refused.status_code == 422 and "Choose one of the two, or Equally." in refused.content.decode()
    assert not Answer.objects.filter(participant=participant, measure="choice").exists()
    client.post("/s/choose-loan/page/", {"page_key": page["key"], "choice": "b", "sure": "4", "prediction": "40"})
    a, b = page["item"].split("~")
    scores = {s["id"]: s["models"]["ai"]["score"] for s in choice_spec()["pools"][0]["subjects"]}
    stored = {x.measure: (x.number, x.text) for x in Answer.objects.filter(participant=participant, set_key="loan")}
    assert stored["choice"] == (0.0, b) and stored["strength"] == (4.0, "") and stored["prediction"] == (40.0, "")
    assert stored["ai_choice"] == (float(scores[b] < scores[a]), "")  # the AI favours the lower risk score


@pytest.fixture(scope="module")
def simulated_choices(django_db_setup, django_db_blocker):
    """The choose study taken by 60 simulated raters (seed 3) and its analysis by role (200 resamples and
    permutations), built once for the tests that read it (they must not change it); removed afterwards."""
    from django.contrib.auth import get_user_model

    from participation.models import Participant
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from studies.models import Study
    from studies.services import study_load

    slug = "choose-shared"  # not choose-loan: the module's other tests load that one while this one lives
    with django_db_blocker.unblock():
        owner = get_user_model().objects.create_user("choose-owner", password="owner-pass-123")
        spec = study_load(spec=choice_spec() | {"slug": slug}, owner=owner).study.spec
        simulate_participants(slug, n=60, seed=3, decline_rate=0)
        yield spec, study_analysis(slug, spec, by=["role"], n_resamples=200, n_permutations=200)
        Participant.objects.filter(study__slug=slug).delete()
        Study.objects.filter(slug=slug).delete()
        owner.delete()


@pytest.mark.django_db
def test_simulated_choices_give_strengths_that_follow_the_ai_and_a_bts_honesty_score(simulated_choices):
    """Simulated raters choose the subject with the lower risk score more often (``Choose.simulate``): the
    Bradley-Terry strengths of all participants must rank the subjects against their scores."""
    spec, result = simulated_choices
    block = next(b for b in result.blocks if b.task == "choose")
    strengths = block.tables["strengths"]
    overall = strengths[strengths["rater_group"] == "all participants"].set_index("subject")
    assert len(overall) == len(SUBJECTS) and overall["n_comparisons"].iloc[0] == 60 * 10
    scores = {s["id"]: s["models"]["ai"]["score"] for s in spec["pools"][0]["subjects"]}
    rho = spearmanr(overall["strength"], [scores[s] for s in overall.index]).statistic
    assert rho <= -0.9, rho  # at most one neighbouring pair swapped
    assert (overall["ci_low"] <= overall["strength"]).all() and (overall["strength"] <= overall["ci_high"]).all()
    assert len(result.honesty) == 60 and result.honesty["n_questions"].min() >= 5  # ai_choice + prediction


@pytest.mark.django_db
def test_simulated_choices_give_utility_weights_a_borda_ranking_and_a_report_figure(simulated_choices, tmp_path):
    """The utility model (``analysis.paired_comparison.utility_model``) over the pool's features: its Borda
    ranking of all participants follows the AI's scores that the simulated raters choose by, and the report
    shows the weights' table with its Plotly figure."""
    from runs.reports.design import write_design_report

    spec, result = simulated_choices
    block = next(b for b in result.blocks if b.task == "choose")
    weights, borda = block.tables["utility_weights"], block.tables["borda"]
    assert weights["rater_group"].iloc[0] == "all participants" and weights["rater_group"].nunique() > 1
    assert (weights["ci_low"] <= weights["weight"]).all() and (weights["weight"] <= weights["ci_high"]).all()
    overall = borda[borda["rater_group"] == "all participants"].set_index("subject")
    scores = {s["id"]: s["models"]["ai"]["score"] for s in spec["pools"][0]["subjects"]}
    assert spearmanr(overall["borda"], [scores[s] for s in overall.index]).statistic <= -0.8
    # The pool's features the utility model cannot weigh are named with why (a text column, a constant one).
    assert (
        "The utility model leaves out charge (text with more than two values); juv_misd (the same for every subject)."
        in block.notes
    )
    html = write_design_report(result, tmp_path, title="Choose").read_text()
    assert (
        "Block loan: utility weights of the subjects&#x27; features by rater group" in html
        and (tmp_path / "loan_utility_weights.csv").exists()
    )


@pytest.mark.django_db
def test_without_rater_groups_each_table_has_one_all_participants_part(researcher):
    """Split by no question, every participant is in the one rater group 'all': its rows would repeat the
    'all participants' rows, so the strengths, the utility weights and the Borda table hold them once."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis

    spec = study_load_choice(researcher)
    simulate_participants("choose-loan", n=20, seed=5, decline_rate=0)
    result = study_analysis("choose-loan", spec, by=[], n_resamples=100, n_permutations=100)
    block = next(b for b in result.blocks if b.task == "choose")
    for name in ("strengths", "utility_weights", "borda"):
        assert set(block.tables[name]["rater_group"]) == {"all participants"}, name


def study_load_choice(researcher) -> dict:
    from studies.services import study_load

    return study_load(spec=choice_spec(), owner=researcher).study.spec


def test_feature_matrix_codes_two_valued_features_and_leaves_out_the_rest():
    from tasks.choose import feature_matrix, left_out_note

    spec = {
        "pools": [
            {
                "key": "p",
                "subjects": [
                    {"id": "a", "features": {"priors": 0, "double": 0, "degree": "felony", "charge": "x", "k": 1}},
                    {"id": "b", "features": {"priors": 1, "double": 2, "degree": "misdemeanor", "charge": "y", "k": 1}},
                    {"id": "c", "features": {"priors": 3, "double": 6, "degree": "felony", "charge": "z", "k": 1}},
                ],
            }
        ]
    }
    frame, features, dropped = feature_matrix(spec, {"pool": "p"})
    assert features == ["priors", "degree=misdemeanor"]
    assert dropped == {
        "charge": "text with more than two values",
        "k": "the same for every subject",
        "double": "determined by the features before it",  # 2 x priors
    }
    assert left_out_note(dropped) == (
        "The utility model leaves out charge (text with more than two values); k (the same for every subject); "
        "double (determined by the features before it)."
    )
    assert frame["degree=misdemeanor"].tolist() == pytest.approx([-(2**-0.5), 2**0.5, -(2**-0.5)])
    assert frame["priors"].mean() == pytest.approx(0) and frame["priors"].std(ddof=0) == pytest.approx(1)
