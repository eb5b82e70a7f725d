"""The study builder (``studies/builder.py``, ``build_study`` command): each template's file validates and
has the promised blocks, every bad CSV or option gets its specific message, the pair rule does what it
documents, a study built from Dressel & Farid's defendants shows their profile wording, and the bundled
synthetic studies are what their generator writes."""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from core.uploads import UploadError
from studies.builder import (
    StudyBuildError,
    build_study,
    study_file_bytes,
    summarise_study,
)
from studies.study_file import read_study_file, validate_study
from studies.synthetic_defendants import PROFILE, bundled_studies, draw_defendants
from tasks.drawing import draw_pairs, gower_distances
from tests.conftest import REFERENCE_DATA, ROOT

BUNDLED = ROOT / "studies" / "bundled"
DRESSEL_FARID = REFERENCE_DATA / "dressel_farid"


def csv_bytes(frame: pd.DataFrame) -> bytes:
    out = io.StringIO()
    frame.to_csv(out, index=False)
    return out.getvalue().encode()


@pytest.fixture
def defendants() -> pd.DataFrame:
    return draw_defendants(40, seed=5)


def build(frame_or_bytes, template="disagreement", **options):
    raw = frame_or_bytes if isinstance(frame_or_bytes, bytes) else csv_bytes(frame_or_bytes)
    options.setdefault("label_column", "ai_label")
    return build_study(template, raw, "id", name="people.csv", **options)


def problems_of(frame_or_bytes, template="disagreement", **options) -> str:
    with pytest.raises((StudyBuildError, UploadError)) as caught:
        build(frame_or_bytes, template, **options)
    return str(caught.value)


def test_disagreement_template_validates_with_its_blocks(defendants):
    spec = build(defendants, score_column="ai_score", group_columns=["race"], profile=PROFILE, per_participant=10)
    checked = validate_study(spec)
    assert [b["key"] for b in checked["blocks"]] == ["instructions", "about_you", "attention_1", "agree", "attention_2"]
    agree = checked["blocks"][3]
    assert (agree["task"], agree["model"], agree["confidence"]) == ("agree", "ai", True)
    assert agree["bts"]["prompt"].startswith("What percentage")
    assert agree["assignment"] == {"per_participant": 10}
    questions = checked["blocks"][1]["questions"]
    assert [(q["key"], q["required"]) for q in questions] == [
        ("role", True),
        ("age", True),
        ("gender", True),
        ("education", False),
    ]
    assert "Works in criminal justice" in questions[0]["options"]
    subject = checked["pools"][0]["subjects"][0]
    row = defendants.iloc[0]
    assert subject["id"] == row["id"]
    assert subject["models"]["ai"] == {"score": row["ai_score"], "label": row["ai_label"]}
    assert subject["groups"] == {"race": row["race"]}
    assert "race" not in subject["features"] and "ai_score" not in subject["features"]
    assert subject["features"]["age"] == row["age"]
    assert (
        checked["completion"]["code"]
        == build(defendants, score_column="ai_score", group_columns=["race"], profile=PROFILE, per_participant=10)[
            "completion"
        ]["code"]
    )


def test_label_from_score_when_only_a_score_is_given(defendants):
    spec = build(defendants, label_column=None, score_column="ai_score")
    labels = [s["models"]["ai"]["label"] for s in spec["pools"][0]["subjects"]]
    assert labels == [int(x >= 0.5) for x in defendants["ai_score"]]


def test_rating_template_is_a_7_point_likert_with_the_model_kept_hidden(defendants):
    spec = validate_study(build(defendants, "rating", group_columns=["race"], per_participant=10, stratify_by="race"))
    rate = spec["blocks"][3]
    assert rate["task"] == "rate" and rate["question"] == "How risky do you think this person is?"
    assert len(rate["scale"]["labels"]) == 7 and rate["scale"]["positive_from"] == 5
    assert (rate["model"], rate["show_model"]) == ("ai", False)
    assert rate["assignment"] == {"per_participant": 10, "stratify_by": "race"}
    assert spec["pools"][0]["display"] == {
        "table": ["sex", "age", "charge", "degree", "priors", "juv_fel", "juv_misd", "race", "ai_score"]
    }


def test_comparable_template_pairs_each_subject_with_a_near_and_a_far_neighbour(defendants):
    spec = validate_study(build(defendants, "comparable", label_column=None, group_columns=["race"]))
    block = spec["blocks"][3]
    assert block["task"] == "pair_comparable" and block["strength"] is True
    pairs = block["pairs"]
    assert len({frozenset((p["a"], p["b"])) for p in pairs}) == len(pairs)
    features = defendants.drop(columns=["id", "race"])
    ids = list(defendants["id"])
    distances = gower_distances(features, slice(0, len(ids)))
    for p in pairs:
        i, j = ids.index(p["a"]), ids.index(p["b"])
        others = np.delete(distances[i], i)
        if p["relation"] == "near":
            assert distances[i, j] == others.min()
        else:
            assert distances[i, j] >= np.median(np.delete(others, np.argmin(others)))
    firsts = {p["a"] for p in pairs}
    assert firsts <= set(ids) and len(firsts) >= len(ids) - 1  # every subject starts its pairs (unless found twice)
    assert draw_pairs(features, ids, seed=0) == pairs  # reproducible


def test_gower_distance_against_hand_computed_values():
    frame = pd.DataFrame({"age": [20, 30, 60], "charge": ["theft", "theft", "fraud"]})
    d = gower_distances(frame, slice(0, 3))
    assert d[0, 1] == pytest.approx((10 / 40 + 0) / 2)
    assert d[0, 2] == pytest.approx((40 / 40 + 1) / 2)
    assert d[1, 2] == pytest.approx((30 / 40 + 1) / 2)


def with_edit(frame: pd.DataFrame, column: str, row: int, value) -> pd.DataFrame:
    out = frame.astype({column: object})
    out.loc[row, column] = value
    return out


@pytest.mark.parametrize(
    ("make", "options", "expected"),
    [
        (
            lambda f: f,
            {"group_columns": ["ethnicity"]},
            "--group-columns: column 'ethnicity' is not in the CSV; its columns are: id, sex, age",
        ),
        (lambda f: f, {"label_column": "label"}, "--label-column: column 'label' is not in the CSV"),
        (lambda f: with_edit(f, "id", 3, "D001"), {}, "id 'D001' appears more than once (rows 2, 5)"),
        (lambda f: with_edit(f, "ai_label", 4, 2), {}, "label column 'ai_label' (model 'ai') must be 0 or 1; rows 6"),
        (
            lambda f: with_edit(f, "ai_score", 2, 1.2),
            {"score_column": "ai_score"},
            "score column 'ai_score' (model 'ai') must be a number in [0, 1]; rows 4",
        ),
        (lambda f: with_edit(f, "race", 6, None), {"group_columns": ["race"]}, "column 'race' is blank in rows 8"),
        (lambda f: with_edit(f, "id", 1, "D 2"), {}, "ids must be 1-40 letters, digits, '-' or '_'; rows 3"),
        (
            lambda f: f,
            {"profile": "A {sex} aged {agee}."},
            "--profile: placeholder {agee} is not a column of the CSV; its columns are: id, sex",
        ),
        (lambda f: f, {"profile": "aged {age:.1f}"}, "--profile: placeholder {age:.1f} is not a plain {column}"),
        (lambda f: f, {"profile": "aged {age"}, "--profile: expected '}' before end of string"),
        (lambda f: f, {"profile": "AI says {ai_label}"}, "--profile: {ai_label} is the model's column"),
        (lambda f: f, {"per_participant": 41}, "--per-participant 41 is larger than the pool: there are only 40"),
        (lambda f: f, {"per_participant": 0}, "--per-participant must be at least 1 (got 0)"),
        (
            lambda f: f,
            {"per_participant": 9, "stratify_by": "race"},
            "--per-participant 9 is not divisible by the 2 values of --stratify-by 'race'",
        ),
        (
            lambda f: f,
            {"per_participant": 36, "stratify_by": "race"},
            "--stratify-by 'race': each participant needs 18 subjects of each value, but 'White' has 17",
        ),
        (lambda f: f, {"stratify_by": "race"}, "--stratify-by needs --per-participant"),
        (lambda f: f, {"label_column": None}, "the disagreement template needs the AI's prediction"),
        (lambda f: f, {"template": "ranking"}, "--template: 'ranking' is not a template"),
    ],
)
def test_each_bad_input_gets_its_specific_message(defendants, make, options, expected):
    template = options.pop("template", "disagreement")
    assert expected in problems_of(make(defendants), template, **options)


def test_bad_files_get_the_upload_readers_messages(defendants):
    assert "the file is empty" in problems_of(b"")
    assert "header but no data rows" in problems_of(b"id,ai_label\n")
    assert "duplicate column name(s) in the header: 'age' (2 times)" in problems_of(b"id,age,age,ai_label\nA,1,2,0\n")
    assert "comparable template needs at least one feature column" in problems_of(
        defendants[["id", "race"]], "comparable", label_column=None, group_columns=["race"]
    )


def test_a_too_large_study_file_is_refused(defendants):
    spec = build(defendants)
    with pytest.raises(StudyBuildError, match="more than the limit of 1,000"):
        study_file_bytes(spec, max_bytes=1000)


def dressel_farid_csv(tmp_path: Path) -> Path:
    """Dressel & Farid's 1,000 defendants with their codes turned into the words of their profiles."""
    subset = pd.read_csv(DRESSEL_FARID / "BROWARD_CLEAN_SUBSET.csv")
    subset.columns = [c.split(" ")[0] for c in subset.columns]
    charges = pd.read_csv(DRESSEL_FARID / "CHARGE_ID.csv", usecols=["charge_id", "mturk_charge_name"])
    subset = subset.merge(charges, on="charge_id", how="left")
    table = pd.DataFrame(
        {
            "id": subset["id"],
            "sex": subset["sex"].map({0: "male", 1: "female"}),
            "age": subset["age"],
            "charge": subset["mturk_charge_name"],
            "degree": subset["charge_degree"].map({0: "misdemeanor", 1: "felony"}),
            "priors": subset["priors_count"],
            "juv_fel": subset["juv_fel_count"],
            "juv_misd": subset["juv_misd_count"],
            "race": subset["race"],
            "compas_label": (subset["compas_decile_score"] > 4).astype(int),
        }
    )
    path = tmp_path / "dressel_farid_defendants.csv"
    table.to_csv(path, index=False)
    return path


def test_a_disagreement_study_from_dressel_and_farids_defendants(tmp_path, db):
    out = tmp_path / "df.json"
    call_command(
        "build_study",
        "--template", "disagreement",
        "--subjects", str(dressel_farid_csv(tmp_path)),
        "--id-column", "id",
        "--label-column", "compas_label",
        "--group-columns", "race", "sex",
        "--profile", PROFILE,
        "--per-participant", "50",
        "--slug", "dressel-farid-rebuilt",
        "--title", "Dressel & Farid, rebuilt",
        "--completion-code", "DF2018",
        "--out", str(out),
        "--no-design-check",
        stdout=io.StringIO(),
    )  # fmt: skip
    spec = read_study_file(out)
    assert (spec["slug"], spec["title"], spec["completion"]["code"]) == (
        "dressel-farid-rebuilt",
        "Dressel & Farid, rebuilt",
        "DF2018",
    )
    subjects = spec["pools"][0]["subjects"]
    assert len(subjects) == 1000
    # COMPAS's accuracy on the 1,000 defendants with the built study's labels: 65.2% in the paper
    truth = pd.read_csv(DRESSEL_FARID / "BROWARD_CLEAN_SUBSET.csv").set_index("id")["two_year_recid"]
    correct = [s["models"]["ai"]["label"] == truth[int(s["id"])] for s in subjects]
    assert round(float(np.mean(correct)), 3) == 0.652
    summary = summarise_study(spec)
    assert (summary.pool_size, summary.per_participant, summary.pages_per_participant) == (1000, 50, 54)
    # the first defendant of BROWARD_CLEAN_SUBSET: id 8307, female, 53, charge 413, felony, 5 priors
    assert summary.example_subject == "8307"
    assert summary.profile_text == (
        "The defendant is a female aged 53. They have been charged with: Unlicensed Telemarketing. This crime is "
        "classified as a felony. They have been convicted of 5 prior crimes. They have 0 juvenile felony charges and "
        "0 juvenile misdemeanor charges on their record."
    )


def test_the_command_reports_problems_and_writes_nothing(tmp_path, defendants):
    source = tmp_path / "people.csv"
    source.write_bytes(csv_bytes(with_edit(defendants, "ai_label", 0, "yes")))
    out = tmp_path / "out.json"
    with pytest.raises(CommandError, match="label column 'ai_label' \\(model 'ai'\\) must be 0 or 1; rows 2"):
        call_command(
            "build_study",
            "--template",
            "disagreement",
            "--subjects",
            str(source),
            "--id-column",
            "id",
            "--label-column",
            "ai_label",
            "--out",
            str(out),
        )
    with pytest.raises(CommandError, match="slug: 'Not A Slug' does not match"):
        call_command(
            "build_study",
            "--template",
            "rating",
            "--subjects",
            str(source),
            "--id-column",
            "id",
            "--slug",
            "Not A Slug",
            "--out",
            str(out),
        )
    assert not out.exists()


def test_the_command_writes_the_options_into_the_file(tmp_path, defendants):
    source = tmp_path / "people.csv"
    source.write_bytes(csv_bytes(defendants))
    out = tmp_path / "pairs.json"
    stdout = io.StringIO()
    call_command(
        "build_study",
        "--template",
        "comparable",
        "--subjects",
        str(source),
        "--id-column",
        "id",
        "--score-column",
        "ai_score",
        "--label-column",
        "ai_label",
        "--group-columns",
        "race",
        "sex",
        "--per-participant",
        "12",
        "--out",
        str(out),
        "--no-design-check",
        stdout=stdout,
    )
    spec = json.loads(out.read_text())
    assert spec["slug"] == "people-comparable" and spec["title"] == "Comparable study: people"
    assert spec["blocks"][3]["assignment"] == {"per_participant": 12}
    assert set(spec["pools"][0]["subjects"][0]["groups"]) == {"race", "sex"}
    assert spec["pools"][0]["display"]["table"] == [
        "sex", "age", "charge", "degree", "priors", "juv_fel", "juv_misd", "race"
    ]  # fmt: skip
    assert "people-comparable, 40 subjects, 12 items and 16 pages per participant" in stdout.getvalue()
    assert out.read_bytes() == study_file_bytes(spec)


def test_regenerating_the_bundled_studies_reproduces_the_files():
    for name, raw in bundled_studies().items():
        assert (BUNDLED / name).read_bytes() == raw, f"{name} differs: run python manage.py generate_bundled_studies"


def test_bundled_synthetic_studies_validate_and_follow_the_stated_model():
    disagreement = read_study_file(BUNDLED / "disagreement_synthetic.json")
    agree = disagreement["blocks"][3]
    assert agree["assignment"] == {"per_participant": 20, "stratify_by": "race"}
    assert agree["label_names"]["1"] == "will commit another crime within two years"
    summary = summarise_study(disagreement)
    assert summary.strata == {"Black": 109, "White": 91} and summary.per_stratum == 10
    assert summary.profile_text.startswith("The defendant is a male aged 26. They have been charged with: Petit Theft.")
    rating = read_study_file(BUNDLED / "rating_synthetic.json")
    assert rating["blocks"][3]["task"] == "rate" and len(rating["pools"][0]["subjects"]) == 100
    table = pd.read_csv(BUNDLED / "synthetic_defendants.csv")
    z = -1.0 - 0.04 * (table["age"] - 30) + 0.7 * np.log1p(table["priors"]) + 0.5 * table["juv_fel"]
    z += 0.25 * table["juv_misd"] + 0.3 * (table["degree"] == "felony")
    assert np.allclose(table["ai_score"], (1 / (1 + np.exp(-z))).round(3))
    assert (table["ai_label"] == (table["ai_score"] >= 0.5)).all()


def test_a_csv_with_old_mac_line_endings_is_read(defendants):
    """Dressel & Farid's release ends lines with CR only; the upload reader's header check used to crash on it."""
    raw = csv_bytes(defendants).replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    assert len(build(raw)["pools"][0]["subjects"]) == 40


def test_ids_are_kept_as_written(defendants):
    """Ids that look like numbers keep their leading zeros (no type inference on the id column)."""
    frame = defendants.assign(id=[f"{i:03d}" for i in range(len(defendants))])
    ids = [s["id"] for s in build(frame)["pools"][0]["subjects"]]
    assert ids[:3] == ["000", "001", "002"] and len(set(ids)) == len(frame)
