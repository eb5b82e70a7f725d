"""Features are what participants saw (``build_study --feature-columns``): on a CSV prepared from ProPublica's
COMPAS file, the features are exactly the chosen columns, the outcome and the AI's label and score are never
features, hidden columns are not in the study file, pairs are drawn over the shown features only, and the study
file's validation refuses an estimator feature that no page shows."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from studies.builder import StudyBuildError, build_study
from studies.study_file import InvalidStudyFile, validate_study
from tasks.choose import feature_matrix
from tasks.drawing import draw_pairs
from tests.conftest import REFERENCE_DATA

COMPAS = REFERENCE_DATA / "propublica_compas" / "compas-scores-two-years.csv"
FEATURES = ["age", "priors_count", "juv_fel_count", "c_charge_degree"]


def compas_csv(tmp_path: Path, n: int = 60) -> Path:
    """The first ``n`` defendants of ProPublica's two-year file as a researcher would prepare them: id, shown
    columns, race and sex, COMPAS's decile score as the AI's score and label, the two-year outcome, and
    columns the researcher keeps hidden (name, juvenile misdemeanours)."""
    raw = pd.read_csv(COMPAS).head(n)
    table = pd.DataFrame(
        {
            "id": raw["id"].astype(str),
            "name": raw["name"].str.replace(" ", "_"),
            "age": raw["age"],
            "sex": raw["sex"],
            "race": raw["race"],
            "priors_count": raw["priors_count"],
            "juv_fel_count": raw["juv_fel_count"],
            "juv_misd_count": raw["juv_misd_count"],
            "c_charge_degree": raw["c_charge_degree"].map({"F": "felony", "M": "misdemeanor"}),
            "ai_score": raw["decile_score"] / 10,
            "ai_label": (raw["decile_score"] > 4).astype(int),
            "two_year_recid": raw["two_year_recid"],
        }
    )
    path = tmp_path / "compas.csv"
    table.to_csv(path, index=False)
    return path


def built(path: Path, template: str = "choice", **options) -> dict:
    options = {
        "score_column": "ai_score",
        "group_columns": ["race", "sex"],
        "outcome_column": "two_year_recid",
        **options,
    }
    return build_study(template, path, "id", **options)


def test_features_are_exactly_the_chosen_columns(tmp_path):
    """The issue's finding: ``--outcome-column two_year_recid`` and an unnamed ``ai_label`` became features."""
    path = compas_csv(tmp_path)
    spec = validate_study(built(path, feature_columns=FEATURES))
    pool = spec["pools"][0]
    truth = pd.read_csv(path)
    for subject, row in zip(pool["subjects"], truth.itertuples(), strict=True):
        assert list(subject["features"]) == FEATURES
        assert set(subject["groups"]) == {"race", "sex"}
        assert subject["outcome"] == row.two_year_recid  # kept for error rates, never a feature
        assert subject["models"]["ai"] == {"score": row.ai_score, "label": int(row.ai_score >= 0.5)}
    assert pool["outcome_column"] == "two_year_recid"
    assert pool["display"] == {"table": ["age", "sex", "race", "priors_count", "juv_fel_count", "c_charge_degree"]}
    text = json.dumps(spec)
    for hidden in ("juv_misd_count", "ai_label", "name"):  # named nowhere: kept hidden, not in the file at all
        assert hidden not in text
    block = next(b for b in spec["blocks"] if b.get("task") == "choose")
    _, weighed, _ = feature_matrix(spec, block)  # the utility model's columns
    assert weighed == ["age", "priors_count", "juv_fel_count", "c_charge_degree=misdemeanor"]


def test_pairs_are_drawn_over_the_shown_features_only(tmp_path):
    path = compas_csv(tmp_path)
    spec = built(path, template="comparable", feature_columns=FEATURES)
    pairs = [{k: p[k] for k in ("a", "b", "relation")} for p in spec["blocks"][3]["pairs"]]
    frame = pd.read_csv(path, dtype={"id": str})
    assert pairs == draw_pairs(frame[FEATURES], frame["id"].tolist())
    everything = frame.drop(columns=["id"])  # the old rule's distance over every column, hidden ones included
    assert pairs != draw_pairs(everything, frame["id"].tolist())


def test_without_feature_columns_the_profile_decides(tmp_path):
    """A profile shows some columns: those that are not groups are the features, the rest stay hidden."""
    profile = "A {race} {sex} aged {age} with {priors_count} prior offences, charged with a {c_charge_degree}."
    spec = validate_study(built(compas_csv(tmp_path), profile=profile))
    subject = spec["pools"][0]["subjects"][0]
    assert list(subject["features"]) == ["age", "priors_count", "c_charge_degree"]
    assert "juv_fel_count" not in json.dumps(spec)


def test_without_any_choice_every_unnamed_column_is_a_shown_feature(tmp_path):
    spec = validate_study(built(compas_csv(tmp_path), template="disagreement", label_column="ai_label"))
    pool = spec["pools"][0]
    assert list(pool["subjects"][0]["features"]) == [
        "name",
        "age",
        "priors_count",
        "juv_fel_count",
        "juv_misd_count",
        "c_charge_degree",
    ]
    assert set(pool["display"]["table"]) == {*pool["subjects"][0]["features"], "race", "sex"}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"feature_columns": ["age", "two_year_recid"]},
            "--feature-columns: 'two_year_recid' is named by --outcome-column",
        ),
        ({"feature_columns": ["age", "ai_score"]}, "--feature-columns: 'ai_score' is named by --score-column"),
        ({"feature_columns": ["age", "race"]}, "--feature-columns: 'race' is named by --group-columns"),
        ({"feature_columns": ["age", "age"]}, "--feature-columns: a column is named twice"),
        ({"feature_columns": ["age", "height"]}, "--feature-columns: column 'height' is not in the CSV"),
        (
            {"feature_columns": ["age", "priors_count"], "profile": "A person aged {age}."},
            "--feature-columns: 'priors_count' is not in --profile, so participants would not see it",
        ),
        (
            {"feature_columns": ["age"], "profile": "Aged {age}, {juv_misd_count} juvenile misdemeanours."},
            "--profile: {juv_misd_count} is neither a feature nor a group column (it is kept hidden)",
        ),
        (
            {"feature_columns": ["age"], "per_participant": 10, "stratify_by": "juv_misd_count"},
            "--stratify-by: 'juv_misd_count' is kept hidden",
        ),
    ],
)
def test_each_bad_feature_choice_gets_its_message(tmp_path, options, expected):
    template = "rating" if "stratify_by" in options else "choice"
    with pytest.raises(StudyBuildError) as caught:
        built(compas_csv(tmp_path), template=template, **options)
    assert expected in str(caught.value)


def test_the_command_takes_feature_columns(tmp_path, db):
    def command(out: Path, *options: str) -> None:
        source = ["--subjects", str(compas_csv(tmp_path)), "--id-column", "id", "--label-column", "ai_label"]
        call_command("build_study", "--template", "triplet", *source, *options, "--out", str(out), "--no-design-check",
                     stdout=io.StringIO())  # fmt: skip

    out = tmp_path / "study.json"
    command(out, "--group-columns", "race", "sex", "--outcome-column", "two_year_recid", "--feature-columns", "age",
            "priors_count")  # fmt: skip
    spec = json.loads(out.read_text())
    assert {tuple(s["features"]) for s in spec["pools"][0]["subjects"]} == {("age", "priors_count")}
    with pytest.raises(CommandError, match="'ai_label' is named by --label-column"):
        command(tmp_path / "other.json", "--feature-columns", "age", "ai_label")


def _problems(spec: dict) -> list[str]:
    with pytest.raises(InvalidStudyFile) as caught:
        validate_study(spec)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize("template", ["choice", "comparable", "triplet"])
def test_validation_refuses_an_estimator_feature_no_page_shows(tmp_path, template):
    spec = built(compas_csv(tmp_path), template=template, feature_columns=FEATURES)
    spec["pools"][0]["display"] = {"profile": "A person aged {age} with {priors_count} priors."}
    task = spec["blocks"][3]["task"]
    assert _problems(spec) == [
        f"blocks[3].pool: the {task} estimator weighs every feature of pool 'subjects', but no page shows "
        "juv_fel_count, c_charge_degree: show it in the pool's display (profile or table) or take it out of the "
        "subjects' features"
    ]


def test_a_block_that_weighs_no_feature_may_leave_features_unshown(tmp_path):
    spec = built(compas_csv(tmp_path), template="disagreement", label_column="ai_label", feature_columns=FEATURES)
    spec["pools"][0]["display"] = {"profile": "A person aged {age}."}
    validate_study(spec)


def test_an_outcome_needs_its_column_named(tmp_path):
    spec = built(compas_csv(tmp_path), feature_columns=FEATURES)
    del spec["pools"][0]["outcome_column"]
    assert _problems(spec) == [
        "pools[0].outcome_column: the subjects have an outcome: name its column (outcome_column)"
    ]
