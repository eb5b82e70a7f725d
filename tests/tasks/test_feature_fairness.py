"""The feature_fairness task type ("Is it fair to use {feature} to decide {decision}?"), added as one module,
its template and these tests: its study-file options, its page and answers, its simulation, and its analysis
into per-feature shares by rater group and the latent-property model."""

import json
import re

import pytest

from participation.models import Answer
from studies.study_file import InvalidStudyFile, validate_study
from tests.conftest import ROOT
from tests.tasks import reach_task_page

FEATURES = [{"column": "priors", "label": "the number of prior convictions"}, {"column": "age"}, {"column": "charge"}]


def feature_spec(**block) -> dict:
    """The bundled disagreement study with a feature_fairness block over three of its columns."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "feature-sim"
    task = {"key": "uses", "type": "task", "task": "feature_fairness", "pool": "defendants", "features": FEATURES}
    task |= {"decision": "whether a defendant is released", "properties": True, "bts": {}, **block}
    task["pool"] = spec["pools"][0]["key"]
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [task]
    return spec


def test_the_block_is_validated_by_its_own_rules():
    spec = validate_study(feature_spec())
    assert spec["blocks"][-1]["question"] == "Is it fair to use {feature} to decide {decision}?"
    problems = {
        "no decision": (feature_spec(decision=None), "a feature_fairness task needs 'decision'"),
        "not a column": (feature_spec(features=[{"column": "income"}]), "features[0].column: 'income' is not a"),
        "twice": (feature_spec(features=[{"column": "age"}, {"column": "age"}]), "the feature 'age' is listed twice"),
        "strata": (
            feature_spec(assignment={"per_participant": 2, "stratify_by": "race"}),
            "the items of a feature_fairness block are features, not subjects",
        ),
    }
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name


@pytest.mark.django_db
def test_a_participant_judges_a_feature_and_the_answers_follow_the_contract(client, researcher):
    from studies.services import study_load

    spec = feature_spec(order={"fixed": {"priors": 0}})
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "feature_fairness")
    assert page["item"] == "priors"
    html = client.get("/s/feature-sim/page/").content.decode()
    assert "Is it fair to use the number of prior convictions to decide whether a defendant is released?" in html
    assert "This information is relevant to deciding whether a defendant is released." in html
    assert "Very unfair" in html and "Strongly agree" in html
    assert "judged it fair to use the number of prior convictions?" in html
    answers = {"page_key": page["key"], "fair_use": "6", "prediction": "55"}
    properties = dict.fromkeys(
        [
            "relevance",
            "reliability",
            "privacy",
            "volitionality",
            "causes_outcome",
            "vicious_cycle",
            "causes_disparity",
            "caused_by_group",
        ],
        "3",
    )
    refused = client.post("/s/feature-sim/page/", {**answers, **properties, "privacy": "9"})
    assert refused.status_code == 422 and "Choose one of the 7 options on the scale." in refused.content.decode()
    assert not Answer.objects.filter(participant=participant, set_key="uses").exists()
    client.post("/s/feature-sim/page/", {**answers, **properties})
    stored = {
        x.measure: (x.number, x.subject_key) for x in Answer.objects.filter(participant=participant, set_key="uses")
    }
    assert stored["fair_use"] == (6.0, "priors") and stored["prediction"] == (55.0, "priors")
    assert {m: stored[m] for m in properties} == dict.fromkeys(properties, (3.0, "priors"))


@pytest.mark.django_db
def test_simulated_judgements_give_shares_tests_and_the_property_model(researcher, tmp_path):
    """Simulated raters (``simulation.feature_judgements``) judge every feature; the first questionnaire
    option's raters are more lenient (``default_group_effects``). The report has per-feature shares for all
    and each rater group, one test per feature, and property effects with the simulation's signs."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from simulation.feature_judgements import PROPERTIES, PROPERTY_EFFECTS
    from studies.services import study_load

    spec = study_load(spec=feature_spec(), owner=researcher).study.spec
    simulate_participants("feature-sim", n=80, seed=4, decline_rate=0)
    result = study_analysis("feature-sim", spec, by=["role"], n_resamples=200, n_permutations=200)
    block = next(b for b in result.blocks if b.task == "feature_fairness")
    shares = block.tables["feature_shares"]
    overall = shares[shares["rater_group"] == "all participants"]
    assert sorted(overall["feature"]) == ["age", "charge", "priors"] and (overall["n_answers"] == 80).all()
    assert ((overall["ci_low"] <= overall["share"]) & (overall["share"] <= overall["ci_high"])).all()
    assert len(block.tables["tests"]) == 3 and block.tables["tests"]["pvalue"].between(0, 1).all()
    model = block.tables["feature_properties"].set_index("term")
    signs = model.loc[list(PROPERTIES), "statistic"] * PROPERTY_EFFECTS
    assert (signs > 0).sum() >= 6, model  # most effects recovered in sign from 240 judgements
    assert len(result.honesty) == 80
    from runs.reports.design import write_design_report

    html = write_design_report(result, tmp_path, title="Feature fairness").read_text()
    assert html.count('class="chart report-chart"') == 1  # the shares' bars; no figure for the other tables
    assert "Block uses: share judging the use of each feature fair, by rater group" in html
    assert (tmp_path / "uses_feature_properties.csv").exists()
