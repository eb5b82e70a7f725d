"""The tradeoff task type ("which model is fairer?"), added as one module, its template and these tests: its
item shape and study-file checks (the comparisons must identify the trade-off weights), its page (rates by
group as SVG bars with their numbers), its answers and simulation, and its analysis into model strengths and
trade-off weights per rater group."""

import json
import random
import re

import pytest

from participation.models import Answer
from studies.study_file import InvalidStudyFile, validate_study
from tasks.tradeoff import FEATURES, differences, identified_weights, model_outcomes
from tests.conftest import ROOT
from tests.tasks import reach_task_page

MODELS = ("ai", "strict", "lenient", "parity")
LABEL_NAMES = {"0": "low risk", "1": "high risk"}
OUTCOME_NAMES = {"0": "did not reoffend", "1": "reoffended"}
OUTCOME_DE = {"0": "nicht rückfällig wurden", "1": "rückfällig wurden"}


def tradeoff_pool(seed: int = 7) -> dict:
    """The bundled disagreement study's 200 defendants with a drawn true outcome (P = their AI risk score) and
    four models' labels: the AI's, a strict and a lenient threshold, and one with a threshold per race."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    pool = spec["pools"][0]
    rng = random.Random(seed)
    thresholds = {"strict": (0.35, 0.35), "lenient": (0.6, 0.6), "parity": (0.55, 0.4)}
    for subject in pool["subjects"]:
        score = subject["models"]["ai"]["score"]
        subject["outcome"] = int(rng.random() < score)
        black = subject["groups"]["race"] == "Black"
        for name, (cut_black, cut_white) in thresholds.items():
            subject["models"][name] = {"label": int(score + rng.gauss(0, 0.08) > (cut_black if black else cut_white))}
    pool["outcome_column"] = "outcome"
    return pool


def comparisons(pool: dict, n: int = 12, size: int = 80, seed: int = 1) -> list[dict]:
    """``n`` comparisons of pairs of the models, each on a random sub-pool of ``size`` subjects."""
    rng = random.Random(seed)
    ids = [s["id"] for s in pool["subjects"]]
    out = []
    for i in range(n):
        a, b = rng.sample(MODELS, 2)
        out.append({"key": f"c{i + 1}", "a": a, "b": b, "subjects": sorted(rng.sample(ids, size))})
    return out


def tradeoff_spec(**block) -> dict:
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"] = "tradeoff-models"
    spec["pools"] = [tradeoff_pool()]
    task = {"key": "fairer", "type": "task", "task": "tradeoff", "pool": "subjects", "group": "race"}
    task |= {"comparisons": comparisons(spec["pools"][0]), "strength": True, **block}
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [task]
    return spec


def test_model_outcomes_are_the_confusion_matrix_rates_by_group():
    """Selection rate, FPR, FNR and accuracy by group and their gaps (Fairlearn's ``difference()``: max - min
    over groups) equal those of scikit-learn's confusion matrix of each group's labels."""
    from sklearn.metrics import accuracy_score, confusion_matrix

    pool = tradeoff_pool()
    ids = comparisons(pool)[0]["subjects"]
    chosen = [s for s in pool["subjects"] if s["id"] in ids]
    for model in MODELS:
        outcomes = model_outcomes(pool, ids, model, "race")
        expected = {}
        for group in ("Black", "White"):
            truth = [s["outcome"] for s in chosen if s["groups"]["race"] == group]
            labels = [s["models"][model]["label"] for s in chosen if s["groups"]["race"] == group]
            tn, fp, fn, tp = confusion_matrix(truth, labels, labels=[0, 1]).ravel()
            expected[group] = ((fp + tp) / len(truth), fp / (fp + tn), fn / (fn + tp), accuracy_score(truth, labels))
        rates = {
            g.group: (g.selection_rate, g.false_positive_rate, g.false_negative_rate, g.accuracy)
            for g in outcomes.groups
        }
        for group, values in expected.items():
            assert rates[group] == pytest.approx(values), (model, group)
        truth = [s["outcome"] for s in chosen]
        assert outcomes.accuracy == pytest.approx(accuracy_score(truth, [s["models"][model]["label"] for s in chosen]))
        gaps = [abs(expected["Black"][k] - expected["White"][k]) for k in (1, 2, 0)]
        assert outcomes.features == pytest.approx(dict(zip(FEATURES, [outcomes.accuracy, *gaps], strict=True)))


def test_identification_needs_comparisons_that_vary_the_gaps_independently():
    """One pair of models on the whole pool identifies one direction; pairs on different sub-pools all four."""
    import numpy as np

    pool = tradeoff_pool()
    block = {"group": "race"}
    whole = [{"key": f"w{i}", "a": "ai", "b": "strict"} for i in range(6)]
    rows = [list(differences(pool, block, c).values()) for c in whole]
    assert identified_weights(rows) == 1 == np.linalg.matrix_rank(np.array(rows))
    rows = [list(differences(pool, block, c).values()) for c in comparisons(pool)]
    assert identified_weights(rows) == len(FEATURES) == np.linalg.matrix_rank(np.array(rows))
    assert identified_weights([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]) == 1 and identified_weights([]) == 0


def test_the_block_is_validated_by_its_own_rules():
    spec = tradeoff_spec()
    del spec["blocks"][-1]["strength"]
    spec = validate_study(spec)
    block = spec["blocks"][-1]
    assert block["question"] == "Which model is fairer?" and block["strength"] is False
    pool = tradeoff_pool()
    one_pair = [{"key": f"w{i}", "a": "ai", "b": "strict"} for i in range(6)]

    def first(sex: str, outcome: int, n: int) -> list[str]:
        return [s["id"] for s in pool["subjects"] if s["groups"]["sex"] == sex and s["outcome"] == outcome][:n]

    no_positive = [*first("female", 0, 3), *first("male", 0, 1), *first("male", 1, 1)]  # no woman with outcome 1
    problems = {
        "no group": (tradeoff_spec(group=None), "a tradeoff task needs 'group'"),
        "the same model twice": (
            tradeoff_spec(comparisons=[{"key": "x", "a": "ai", "b": "ai"}]),
            "comparisons[0]: a comparison needs two different models",
        ),
        "an unknown model": (
            tradeoff_spec(comparisons=[{"key": "x", "a": "ai", "b": "nope"}]),
            "has no label from model 'nope'",
        ),
        "an unknown subject": (
            tradeoff_spec(comparisons=[{"key": "x", "a": "ai", "b": "strict", "subjects": ["D001", "X9"]}]),
            "comparisons[0].subjects: subject 'X9' is not in pool 'subjects'",
        ),
        "a key twice": (
            tradeoff_spec(comparisons=comparisons(pool)[:5] + [{**comparisons(pool)[5], "key": "c1"}]),
            "the comparison key 'c1' is used twice",
        ),
        "a group without a positive outcome": (
            tradeoff_spec(
                group="sex",
                comparisons=[{"key": "x", "a": "ai", "b": "strict", "subjects": no_positive}],
            ),
            "group 'female' has no subject with a positive (1) outcome: its error rates are undefined",
        ),
        "not identified": (tradeoff_spec(comparisons=one_pair), "identify only 1 of the 4 trade-off weights"),
        "labels named, outcomes not": (
            tradeoff_spec(label_names=LABEL_NAMES),
            "outcome_names: label_names needs outcome_names too",
        ),
    }
    for name, (bad, message) in problems.items():
        bad["blocks"][-1] = {k: v for k, v in bad["blocks"][-1].items() if v is not None}
        with pytest.raises(InvalidStudyFile, match=re.escape(message)):
            validate_study(bad)
        assert name
    no_outcome = tradeoff_spec()
    for subject in no_outcome["pools"][0]["subjects"]:
        del subject["outcome"]
    del no_outcome["pools"][0]["outcome_column"]
    with pytest.raises(InvalidStudyFile, match="has no true outcomes"):
        validate_study(no_outcome)


@pytest.mark.django_db
def test_a_participant_chooses_and_the_answers_follow_the_contract(client, researcher):
    from studies.services import study_load

    spec = tradeoff_spec()
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "tradeoff")
    html = client.get("/s/tradeoff-models/page/").content.decode()
    comparison = next(c for c in spec["blocks"][-1]["comparisons"] if c["key"] == page["item"])
    pool = tradeoff_pool()
    a = model_outcomes(pool, comparison["subjects"], comparison["a"], "race")
    assert "<h1>Which model is fairer?</h1>" in html and "<svg" in html and not re.search(r"<script(?![^>]*src=)", html)
    black = next(g for g in a.groups if g.group == "Black")
    assert f"Black: {black.n} people" in html and f"{100 * black.false_positive_rate:.0f}%" in html
    assert "(share of true negatives labelled positive)" in html
    assert comparison["a"] not in re.sub(r"<[^>]+>", "", html.split("<main")[-1]).split(), "model keys stay hidden"
    refused = client.post("/s/tradeoff-models/page/", {"page_key": page["key"], "sure": "3"})
    assert refused.status_code == 422 and "Choose Model A or Model B." in refused.content.decode()
    assert not Answer.objects.filter(participant=participant, measure="fairer").exists()
    client.post("/s/tradeoff-models/page/", {"page_key": page["key"], "choice": "b", "sure": "4"})
    stored = {x.measure: (x.number, x.text) for x in Answer.objects.filter(participant=participant, set_key="fairer")}
    assert stored == {"fairer": (0.0, comparison["b"]), "strength": (4.0, "")}


@pytest.mark.django_db
def test_the_rates_are_explained_in_the_blocks_words(client, researcher):
    """With ``label_names`` and ``outcome_names`` the page says what a label and an outcome mean (a participant
    cannot tell what "positive" is); in German, the platform's words around the study's own."""
    from studies.services import study_load

    spec = tradeoff_spec(label_names=LABEL_NAMES, outcome_names=OUTCOME_NAMES)
    study_load(spec=spec, owner=researcher)
    reach_task_page(client, spec, "tradeoff")
    html = client.get("/s/tradeoff-models/page/").content.decode()
    assert "(share labelled high risk)" in html
    assert "(share of the people who did not reoffend who were labelled high risk)" in html
    assert "(share of the people who reoffended who were labelled low risk)" in html
    assert "labelled positive" not in html and "true negatives" not in html

    from django.utils import translation

    from tasks.tradeoff import rate_help

    with translation.override("de"):
        german = rate_help({"label_names": {"0": "geringes Risiko", "1": "hohes Risiko"}, "outcome_names": OUTCOME_DE})
    assert german["false_positive_rate"] == (
        "Anteil der Personen, die nicht rückfällig wurden, die als hohes Risiko eingestuft wurden"
    )


@pytest.mark.django_db
def test_how_sure_is_optional(client, researcher):
    from studies.services import study_load

    spec = tradeoff_spec()
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "tradeoff")
    client.post("/s/tradeoff-models/page/", {"page_key": page["key"], "choice": "a"})
    stored = {x.measure: x.number for x in Answer.objects.filter(participant=participant, set_key="fairer")}
    assert stored == {"fairer": 1.0}


@pytest.mark.django_db
def test_simulated_raters_give_weights_near_theirs_strengths_and_a_report_with_figures(researcher, tmp_path):
    """Simulated raters choose by ``SIMULATED_WEIGHTS`` (``Tradeoff.simulate``): the analysis's trade-off
    weights of all participants hold them within their intervals, and the report shows both tables with
    their Plotly figures."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from runs.reports.design import write_design_report
    from studies.services import study_load
    from tasks.tradeoff import SIMULATED_WEIGHTS

    spec = study_load(spec=tradeoff_spec(), owner=researcher).study.spec
    simulate_participants("tradeoff-models", n=80, seed=3, decline_rate=0)
    result = study_analysis("tradeoff-models", spec, by=["role"], n_resamples=100, n_permutations=100)
    block = next(b for b in result.blocks if b.task == "tradeoff")
    weights = block.tables["tradeoff_weights"]
    overall = weights[weights["rater_group"] == "all participants"].set_index("feature")
    truth = [SIMULATED_WEIGHTS[f] for f in FEATURES]
    assert (overall["ci_low"] <= truth).all() and (overall["ci_high"] >= truth).all(), overall
    assert (overall.loc[list(FEATURES[1:]), "ci_high"] < 0).all() and overall.loc["accuracy", "ci_low"] > 0
    assert list(overall.index) == list(FEATURES) and (overall["n_choices"] == 80 * 12).all()
    assert weights["rater_group"].nunique() > 1
    strengths = block.tables["model_strengths"]
    assert set(strengths.loc[strengths["rater_group"] == "all participants", "model"]) == set(MODELS)
    html = write_design_report(result, tmp_path, title="Trade-off").read_text()
    assert "Block fairer: trade-off weights: what makes a model fairer, by rater group" in html
    assert (tmp_path / "fairer_tradeoff_weights.csv").exists() and (tmp_path / "fairer_model_strengths.csv").exists()


def models_csv(n: int = 120):
    """Synthetic defendants with a drawn true outcome and two more models' labels (strict, lenient)."""
    import numpy as np

    from studies.synthetic_defendants import draw_defendants

    frame = draw_defendants(n, seed=5)
    rng = np.random.default_rng(2)
    frame["outcome"] = (rng.random(n) < frame["ai_score"]).astype(int)
    frame["strict"] = (frame["ai_score"] + rng.normal(0, 0.08, n) > 0.4).astype(int)
    frame["lenient"] = (frame["ai_score"] + rng.normal(0, 0.08, n) > 0.6).astype(int)
    return frame


def test_the_builder_template_draws_comparisons_that_identify_the_weights():
    from tests.studies.test_builder import build, problems_of

    frame = models_csv()
    options = {
        "group_columns": ["race", "sex"],
        "outcome_column": "outcome",
        "model_label_columns": ["strict", "lenient"],
    }
    spec = validate_study(build(frame, "tradeoff", **options))
    block = next(b for b in spec["blocks"] if b["type"] == "task")
    assert (block["task"], block["key"], block["group"], block["strength"]) == ("tradeoff", "tradeoffs", "race", True)
    pairs = {(c["a"], c["b"]) for c in block["comparisons"]}
    assert pairs == {("ai", "lenient"), ("ai", "strict"), ("lenient", "strict")} and len(block["comparisons"]) == 12
    assert all(len(c["subjects"]) == 60 for c in block["comparisons"])
    again = next(b for b in build(frame, "tradeoff", **options)["blocks"] if b["type"] == "task")
    assert again["comparisons"] == block["comparisons"]  # reproducible
    pool = spec["pools"][0]
    rows = [list(differences(pool, block, c).values()) for c in block["comparisons"]]
    assert identified_weights(rows) == len(FEATURES)
    assert "strict" not in pool["display"]["table"] and "outcome" not in pool["display"]["table"]
    two = validate_study(build(frame, "tradeoff", **{**options, "model_label_columns": ["strict"]}))
    assert len(next(b for b in two["blocks"] if b["type"] == "task")["comparisons"]) == 8  # MIN_COMPARISONS
    refusals = {
        "no outcome": ({**options, "outcome_column": None}, "needs the true outcome: give --outcome-column"),
        "one model": ({**options, "model_label_columns": []}, "needs two or more models' labels (found 1)"),
        "no group": ({**options, "group_columns": []}, "needs a group to compare the models' rates by"),
        "a model shown": (
            {**options, "feature_columns": ["age", "strict"]},
            "--feature-columns: 'strict' is named by --model-label-columns",
        ),
    }
    for name, (bad, message) in refusals.items():
        assert message in problems_of(frame, "tradeoff", **bad), name


@pytest.mark.django_db
def test_the_web_builder_builds_a_tradeoff_study_and_previews_its_model_comparisons(researcher, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    frame = models_csv()
    roles = {"id": "id", "race": "group", "outcome": "outcome", "ai_label": "label", "ai_score": "hidden"}
    roles |= {"strict": "model_label", "lenient": "model_label"}
    data = {
        "subjects": SimpleUploadedFile("models.csv", frame.to_csv(index=False).encode(), content_type="text/csv"),
        "template": "tradeoff",
        **{f"role_{i}": roles.get(column, "feature") for i, column in enumerate(frame.columns)},
        **dict.fromkeys(("profile", "per_participant", "stratify_by", "slug", "title", "completion_code"), ""),
    }
    client.force_login(researcher)
    assert "Trade-off: which of two models is fairer" in client.get("/researcher/build/").content.decode()
    response = client.post("/researcher/build/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    preview = client.get(response["Location"]).content.decode()
    assert re.search(r"tradeoffs\s*</code>|tradeoffs</td>|>tradeoffs<", preview), "the built block is previewed"
    from tests.research.test_upload_preview_items import preview_of
    from tests.studies.test_builder import build

    options = {"group_columns": ["race"], "outcome_column": "outcome", "model_label_columns": ["strict", "lenient"]}
    html = preview_of(client, build(frame, "tradeoff", slug="tradeoff-upload", **options))
    assert "<code>tradeoffs</code> (tradeoff): 12 model comparisons" in html


@pytest.fixture
def tradeoff_study(researcher):
    from studies.services import study_load

    spec = tradeoff_spec(assignment={"per_participant": 3})
    return study_load(spec=spec, owner=researcher).study


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [390, 1280])
def test_a_participant_takes_the_tradeoff_study_in_chromium(browser, live_server, tradeoff_study, width):  # noqa: F811
    """At 390 px and on a desktop, the comparison pages draw the rates as SVG bars with their numbers, fit the
    screen without a horizontal scroll, and the choices are stored."""
    import os
    from pathlib import Path

    from participation.models import Participant

    shots = os.environ.get("SCREENSHOT_DIR")
    correct = [b["correct"] for b in tradeoff_study.spec["blocks"] if b["type"] == "attention"]
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(f"{live_server.url}/s/{tradeoff_study.slug}/?participant_label=taker-{width}")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    compared = 0
    while "/done/" not in page.url:
        assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url
        if page.locator(".tradeoff svg").count():
            assert page.locator(".tradeoff svg").count() == 4 and page.locator(".tradeoff svg rect").count() == 16
            assert "Model A" in page.locator(".tradeoff").inner_text()
            if shots and not compared:
                page.screenshot(path=str(Path(shots) / f"tradeoff-{width}.png"), full_page=True)
            page.get_by_role("radio", name="Model B").check()
            if compared:  # how sure is optional: the first answer leaves it out
                page.get_by_role("radio", name="Very", exact=True).check()
            compared += 1
        else:
            for fieldset in page.locator("fieldset").all():
                text = fieldset.inner_text()
                answer = next((c for c in correct if c in text), None)
                if answer:
                    fieldset.get_by_label(answer, exact=True).check()
                elif fieldset.locator("input[type=radio]").count():
                    fieldset.locator("input[type=radio]").first.check()
        with page.expect_navigation():
            page.get_by_role("button", name=re.compile("Next|Start")).click()
    participant = Participant.objects.get(external_id=f"taker-{width}")
    assert participant.status == Participant.Status.COMPLETED and compared == 3
    stored = Answer.objects.filter(participant=participant, set_key="fairer")
    assert sorted(a.measure for a in stored) == ["fairer", "fairer", "fairer", "strength", "strength"]
    assert {a.number for a in stored if a.measure == "fairer"} == {0.0}
