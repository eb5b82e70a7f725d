"""build_study's templates for the judgement task types of issue 21: choice (choose), triplet and
feature_fairness: valid files, reproducible item mixes (near / far / random), their refusals, and the
web builder listing and building them."""

import numpy as np
import pytest

from studies.study_file import validate_study
from studies.synthetic_defendants import draw_defendants
from tasks.drawing import draw_triplets, gower_distances
from tests.studies.test_builder import build, problems_of
from tests.studies.test_builder_views import form

GROUPS = ["race", "sex"]


@pytest.fixture
def defendants():
    return draw_defendants(40, seed=5)


def task_block(spec: dict) -> dict:
    return next(b for b in spec["blocks"] if b["type"] == "task")


def test_choice_template(defendants):
    spec = validate_study(build(defendants, "choice", score_column="ai_score", group_columns=GROUPS))
    block = task_block(spec)
    assert block["task"] == "choose" and block["key"] == "choices" and block["decision"] == "be considered lower risk"
    assert block["model"] == "ai" and "bts" in block and block["strength"] is True
    assert [p["relation"] for p in block["pairs"][:2]] == ["near", "far"]
    custom = task_block(build(defendants, "choice", group_columns=GROUPS, decision="get the loan", mix=["random"]))
    assert custom["decision"] == "get the loan" and {p["relation"] for p in custom["pairs"]} == {"random"}
    assert len(custom["pairs"]) <= 40


def test_triplet_template_mixes_near_far_and_random_reproducibly(defendants):
    spec = validate_study(build(defendants, "triplet", group_columns=GROUPS, per_participant=20))
    block = task_block(spec)
    assert block["task"] == "triplet" and block["assignment"] == {"per_participant": 20}
    relations = [t["relation"] for t in block["triplets"]]
    assert relations.count("near-far") == 40 and relations.count("random") == 40  # one of each per anchor
    rebuilt = task_block(build(defendants, "triplet", group_columns=GROUPS, per_participant=20))
    assert block["triplets"] == rebuilt["triplets"]
    near_shown_first = [t for t in block["triplets"] if t["relation"] == "near-far"]
    features = defendants.drop(columns=["id", "ai_label", *GROUPS])  # without --score-column ai_score is a feature
    ids = list(defendants["id"])
    distances = gower_distances(features, slice(0, len(ids)))
    np.fill_diagonal(distances, np.inf)
    nearest = {ids[i]: ids[int(np.argmin(row))] for i, row in enumerate(distances)}
    assert all(nearest[t["anchor"]] in (t["b"], t["c"]) for t in near_shown_first)
    firsts = sum(nearest[t["anchor"]] == t["b"] for t in near_shown_first)
    assert 10 < firsts < 30  # the near subject is shown as B about half the time, not always
    again = draw_triplets(features, ids, mix=("near-random",), seed=1)
    assert {t["relation"] for t in again} == {"near-random"} and again == draw_triplets(
        features, ids, mix=("near-random",), seed=1
    )


def test_feature_fairness_template_asks_about_every_feature_column(defendants):
    spec = validate_study(build(defendants, "feature_fairness", score_column="ai_score", group_columns=GROUPS))
    block = task_block(spec)
    assert [f["column"] for f in block["features"]] == ["age", "charge", "degree", "priors", "juv_fel", "juv_misd"]
    assert block["decision"] == "whether a person is high risk" and block["properties"] is True and "bts" in block


@pytest.mark.parametrize(
    "template, options, expected",
    [
        ("triplet", {"mix": ["far"]}, "--mix: 'far' is not a relation of the triplet template"),
        ("choice", {"mix": ["near", "near"]}, "--mix: a relation is named twice"),
        ("rating", {"mix": ["near"]}, "--mix is for the templates that draw items from the pool"),
        ("rating", {"decision": "x"}, "--decision is for the templates whose question names it"),
        (
            "triplet",
            {"per_participant": 4, "stratify_by": "race"},
            "--stratify-by is not available for the triplet template: its items are triplets, not subjects",
        ),
        (
            "feature_fairness",
            {"per_participant": 7, "score_column": "ai_score"},
            "--per-participant 7 is larger than the pool: there are only 6 features",
        ),
    ],
)
def test_refusals(defendants, template, options, expected):
    assert expected in problems_of(defendants, template, group_columns=GROUPS, **options)


@pytest.mark.django_db
def test_the_web_builder_lists_and_builds_the_new_templates(researcher, client):
    client.force_login(researcher)
    page = client.get("/researcher/build/").content.decode()
    assert "Triplets: who is more similar to Person A" in page and "Feature fairness: is it fair" in page
    response = client.post("/researcher/build/", form(template="triplet", stratify_by="", mix="near-random, random"))
    assert response.status_code == 302, response.content.decode()[:2000]
    preview = client.get(response["Location"]).content.decode()
    assert "triplet" in preview


def test_allow_tie_gives_the_choice_template_an_equally_answer(defendants, tmp_path):
    """``--allow-tie`` (the choose module's ``builder_allows_tie``): the block's ``allow_equal``, in the command
    and its file; without it, no tie answer; the other templates refuse it."""
    from django.core.management import call_command

    assert task_block(validate_study(build(defendants, "choice", group_columns=GROUPS)))["allow_equal"] is False
    tied = validate_study(build(defendants, "choice", group_columns=GROUPS, allow_tie=True))
    assert task_block(tied)["allow_equal"] is True
    csv, out = tmp_path / "d.csv", tmp_path / "study.json"
    defendants.to_csv(csv, index=False)
    call_command(
        "build_study", "--template", "choice", "--subjects", str(csv), "--id-column", "id", "--group-columns", *GROUPS,
        "--allow-tie",
        "--out", str(out), "--no-design-check",
    )  # fmt: skip
    import json

    assert task_block(json.loads(out.read_text()))["allow_equal"] is True
    for template in ("triplet", "rating", "comparable"):
        assert "--allow-tie is for the templates whose choices can end in a tie" in problems_of(
            defendants, template, group_columns=GROUPS, allow_tie=True
        )


@pytest.mark.django_db
def test_the_web_builders_allow_tie_box_builds_a_tie_answer(researcher, client):
    from research.study_upload import stashed_spec

    client.force_login(researcher)
    assert "Allow a tie" in client.get("/researcher/build/").content.decode()
    response = client.post("/researcher/build/", form(template="choice", stratify_by="", allow_tie="on"))
    assert response.status_code == 302, response.content.decode()[:2000]
    digest = response["Location"].rstrip("/").rsplit("/", 1)[-1]
    assert task_block(stashed_spec(user=researcher, digest=digest))["allow_equal"] is True
