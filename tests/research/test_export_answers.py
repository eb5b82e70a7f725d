"""The answers and questionnaire tables for both study formats, and format 2 tasks in the pairs and
disagreements tables."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from participation.enrolment import enrolment_of
from participation.models import Answer, Participant
from participation.services import AnswerInput, page_submit
from participation.simulate import simulate_participants
from research.codebook import codebook_of
from research.export import COLUMNS, TABLES, export_tables, write_exports
from studies.models import Condition, Study
from studies.services import spec_digest
from studies.study_file import validate_study
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

EXAMPLE = ROOT / "tests" / "studies" / "format2_example.json"
SLUG = "format2-example"

# The participant's plan, as the contract lays it out (page key -> page dict).
PLAN = [
    {"key": "intro", "kind": "instructions", "block": "intro"},
    {"key": "about", "kind": "questionnaire", "block": "about"},
    {"key": "judge/d01", "kind": "agree", "block": "judge", "item": "d01", "position": 0},
    {"key": "judge/d02", "kind": "agree", "block": "judge", "item": "d02", "position": 1},
    {"key": "check", "kind": "attention", "block": "check"},
    {"key": "risk/d03", "kind": "rate", "block": "risk", "item": "d03", "position": 0},
    {"key": "alike/d01~d02", "kind": "pair_comparable", "block": "alike", "item": "d01~d02", "position": 0},
    *(
        {
            "key": f"distance/d01~d03/{m}",
            "kind": "pair_distance",
            "block": "distance",
            "item": "d01~d03",
            "measure": m,
            "position": 0,
        }
        for m in ("trajectory", "aggregate", "overall")
    ),
    {"key": "fair/s1", "kind": "fair_score", "block": "fair", "item": "s1", "position": 0},
]


def _a(question: str, measure: str, block: str = "", item: str = "", number=None, text: str = "") -> AnswerInput:
    return AnswerInput(question=question, measure=measure, set_key=block, subject_key=item, number=number, text=text)


ROLES = {True: "Works in criminal justice", False: "Member of the public"}


def answers_of(agree_d01: int, *, full: bool) -> dict[str, list[AnswerInput]]:
    """Page key -> its answers, with the contract's question keys (``full``: the optional questions too)."""
    about = [
        _a("about/role", "questionnaire", "about", text=ROLES[full]),
        _a("about/age", "questionnaire", "about", number=41 if full else 23),
        _a("about/trust", "questionnaire", "about", number=4 if full else 2),
    ]
    if full:
        about += [
            _a("about/news", "questionnaire", "about", text=json.dumps(["TV", "Social media"])),
            _a("about/comment", "questionnaire", "about", text="=cmd"),
        ]
    return {
        "intro": [],
        "about": about,
        "judge/d01": [
            _a("judge/d01/agree", "agree", "judge", "d01", agree_d01),
            _a("judge/d01/confidence", "confidence", "judge", "d01", 4),
            _a("judge/d01/prediction", "prediction", "judge", "d01", 70),
        ],
        "judge/d02": [
            _a("judge/d02/agree", "agree", "judge", "d02", 0),
            _a("judge/d02/confidence", "confidence", "judge", "d02", 2),
            _a("judge/d02/prediction", "prediction", "judge", "d02", 40),
        ],
        "check": [_a("attention/check", "attention", "check", number=int(full), text="Blue" if full else "Red")],
        "risk/d03": [
            _a("risk/d03/rating", "rating", "risk", "d03", 3),
            _a("risk/d03/prediction", "prediction", "risk", "d03", 55),
        ],
        "alike/d01~d02": [
            _a("alike/d01~d02/comparable", "comparable", "alike", "d01~d02", 1),
            _a("alike/d01~d02/strength", "strength", "alike", "d01~d02", 5),
        ],
        "distance/d01~d03/trajectory": [_a("distance/d01~d03/trajectory", "trajectory", "distance", "d01~d03", 2)],
        "distance/d01~d03/aggregate": [_a("distance/d01~d03/aggregate", "aggregate", "distance", "d01~d03", 5)],
        "distance/d01~d03/overall": [
            _a("distance/d01~d03/overall", "overall", "distance", "d01~d03", 3),
            _a("distance/d01~d03/overall/prediction", "prediction", "distance", "d01~d03", 65),
        ],
        "fair/s1": [
            _a("fair/s1/k_accept", "k_accept", "fair", "s1", 0),
            _a("fair/s1/k_score", "k_score", "fair", "s1", 0.2),
            _a("fair/s1/d02/fair_score", "fair_score", "fair", "d02", 0.5),
            _a("fair/s1/d02/rationale", "rationale", "fair", "d02", text="Same charge history."),
            _a("fair/s1/d03/fair_score", "fair_score", "fair", "d03", 0.35),
            _a("fair/s1/d03/rationale", "rationale", "fair", "d03", text="Fewer priors."),
        ],
    }


@pytest.fixture
def format2(db):
    """The format 2 example stored as a version with two participants who answered through
    ``page_submit``: one answered everything (and passed the check), one left the optional
    questions out (and failed it)."""
    spec = validate_study(json.loads(EXAMPLE.read_text()))
    study = Study.objects.create(slug=SLUG, title=spec["title"], spec=spec, spec_hash=spec_digest(spec))
    condition = Condition.objects.create(  # the example's conditions do not say whether a feature is desirable
        study=study, key="shown", label="AI score shown", feature="", unit="", desirable=None, position=0
    )
    people = []
    for i, (agree, full) in enumerate([(1, True), (0, False)]):
        p = Participant.objects.create(
            study=study, condition=condition, external_id=f"P{i}", seed=i, plan=PLAN, status="active"
        )
        for page, answers in answers_of(agree, full=full).items():
            page_submit(enrolment=enrolment_of(p), page_key=page, answers=answers)
        p.refresh_from_db()
        assert p.status == "completed"
        people.append(p)
    return people


def test_every_format2_answer_appears_once_with_its_block_task_and_subject(format2):
    tables = export_tables(SLUG)
    answers = tables.answers
    assert list(answers.columns) == list(COLUMNS["answers"])
    assert len(answers) == Answer.objects.count() == 2 * 26 - 2  # the second left two optional questions out
    full = answers[answers["participant_id"] == str(format2[0].pseudonym)]
    rows = {(r.block, r.task, r.subject, r.measure): (r.value, r.text, r.page_position) for r in full.itertuples()}
    assert len(rows) == len(full)  # one row per answer
    assert rows[("judge", "agree", "d01", "agree")][::2] == (1.0, 2)
    assert rows[("judge", "agree", "d02", "confidence")][::2] == (2.0, 3)
    news = rows[("about", "questionnaire", "news", "questionnaire")]
    assert np.isnan(news[0]) and news[1] == '["TV", "Social media"]'
    assert rows[("about", "questionnaire", "age", "questionnaire")][0] == 41
    assert rows[("check", "attention", "", "attention")][:2] == (1.0, "Blue")
    assert rows[("risk", "rate", "d03", "rating")][0] == 3
    assert rows[("alike", "pair_comparable", "d01~d02", "comparable")][::2] == (1.0, 6)
    assert rows[("distance", "pair_distance", "d01~d03", "prediction")][::2] == (65.0, 9)
    assert rows[("fair", "fair_score", "d03", "fair_score")][::2] == (0.35, 10)
    assert rows[("fair", "fair_score", "s1", "k_score")][0] == 0.2
    assert set(answers["excluded"][answers["participant_id"] == str(format2[1].pseudonym)]) == {1}
    assert set(full["excluded"]) == {0} and set(answers["condition"]) == {"shown"}


def test_format2_agree_answers_feed_the_disagreements_table(format2):
    d = export_tables(SLUG).disagreements
    assert list(d.columns) == [*list(COLUMNS["disagreements"])[:-2], "demo_race", "excluded"]
    assert len(d) == 4
    first = d[d["participant_id"] == str(format2[0].pseudonym)].set_index("subject")
    # d01: the AI says 1 (will reoffend), the participant agrees; d02: the AI says 0, they disagree
    assert first.loc["d01", ["agree", "disagreement", "model_label", "participant_label"]].tolist() == [1, 0, 1, 1]
    assert first.loc["d02", ["agree", "disagreement", "model_label", "participant_label"]].tolist() == [0, 1, 0, 1]
    assert first.loc["d01", "model_score"] == 0.066 and first.loc["d02", "demo_race"] == "White"
    assert first.loc["d01", "prompt"] == "judge/d01"
    second = d[d["participant_id"] == str(format2[1].pseudonym)].set_index("subject")
    assert second.loc["d01", ["agree", "participant_label", "excluded"]].tolist() == [0, 0, 1]


def test_format2_pair_distance_feeds_the_pairs_table(format2):
    pairs = export_tables(SLUG).pairs
    assert list(pairs.columns) == list(COLUMNS["pairs"]) and len(pairs) == 2
    row = pairs.iloc[0]
    assert (row["set"], row["reference"], row["comparison"], row["relation"]) == ("distance", "d01", "d03", "similar")
    assert (row["d_traj"], row["d_aggr"], row["d_overall"], row["overall_similar"]) == (2, 5, 3, 1.0)
    assert row["prediction_similar"] == 65
    # the output-space columns come from the fair_score set with reference d01 and comparison d03
    assert (row["k_ai_score"], row["k_accepted"], row["k_score"], row["fair_score"]) == (0.066, 0, 0.2, 0.35)
    assert row["output_distance"] == pytest.approx(0.15) and row["rationale"] == "Fewer priors."
    assert (row["ref_total"], row["comp_total"]) == (16, 13)
    assert np.isnan(row["desirable"])


def test_questionnaire_table_is_one_row_per_participant_and_one_column_per_question(format2):
    q = export_tables(SLUG).questionnaire
    questions = ["role", "age", "news", "trust", "comment"]
    assert list(q.columns) == ["participant_id", "study", "study_version", "condition", *questions]
    by_id = q.set_index("participant_id")
    full, short = by_id.loc[str(format2[0].pseudonym)], by_id.loc[str(format2[1].pseudonym)]
    assert full[["role", "age", "news", "trust", "comment"]].tolist() == [
        "Works in criminal justice",
        41,
        "TV; Social media",
        4,
        "=cmd",
    ]
    assert short["role"] == "Member of the public" and short["age"] == 23
    assert pd.isna(short["news"]) and pd.isna(short["comment"])  # optional and unanswered: blank


def test_format2_tables_present_and_written(format2, tmp_path):
    tables = export_tables(SLUG)
    # the example has every kind of block but tradeoff, none of them adaptive (tests/participation/test_adaptive.py)
    assert tables.present == tuple(name for name in TABLES if name not in ("assignments", "model_comparisons"))
    write_exports(tables, tmp_path, "csv")
    written = pd.read_csv(tmp_path / "questionnaire.csv")
    assert written.loc[0, "comment"] == "'=cmd"  # neutralised for spreadsheets
    assert len(pd.read_csv(tmp_path / "answers.csv")) == len(tables.answers)


def test_format1_answers_equal_the_pairs_and_disagreements(demo_study):
    """Property: the long table holds the same answers as the wide ones."""
    simulate_participants("effort-demo", n=6, seed=3)
    tables = export_tables("effort-demo")
    answers, pairs = tables.answers, tables.pairs
    assert len(answers) == Answer.objects.count()
    pairs = pairs.assign(subject=pairs["reference"] + "~" + pairs["comparison"])
    long = answers[answers["block"] == "pairs"].pivot_table(
        index=["participant_id", "subject"], columns="measure", values="value", aggfunc="first"
    )
    wide = pairs.set_index(["participant_id", "subject"])
    assert len(long) == len(wide)
    for measure, column in (
        ("trajectory", "d_traj"),
        ("aggregate", "d_aggr"),
        ("overall", "d_overall"),
        ("prediction", "prediction_similar"),
    ):
        pd.testing.assert_series_equal(long[measure], wide[column].loc[long.index], check_names=False)
    assert set(answers.loc[answers["block"] == "pairs", "task"]) == {"pair_distance"}

    output = answers[answers["block"] == "output"]
    fair = output[output["measure"] == "fair_score"].set_index(["participant_id", "subject"])["value"]
    expected = pairs.set_index(["participant_id", "comparison"])["fair_score"]
    pd.testing.assert_series_equal(fair.sort_index(), expected.sort_index(), check_names=False, check_index=False)

    agree = answers[answers["task"] == "agree"].set_index(["participant_id", "subject"])["value"].sort_index()
    d = tables.disagreements.set_index(["participant_id", "subject"])["agree"].astype(float).sort_index()
    assert agree.index.equals(d.index) and (agree.to_numpy() == d.to_numpy()).all()
    assert set(answers.loc[answers["task"] == "agree", "block"]) == {"disagreement"}


def test_export_of_a_study_without_answers(demo_study, tmp_path):
    tables = export_tables("effort-demo")
    assert tables.present == ("pairs", "participants", "disagreements", "pages", "answers", "quality")
    for name, frame in tables.items():
        assert frame.empty, name
    paths = write_exports(tables, tmp_path, "csv")
    assert [p.name for p in paths] == [f"{name}.csv" for name in tables.present]
    assert pd.read_csv(tmp_path / "answers.csv").columns.tolist() == list(COLUMNS["answers"])


def _headers(tables) -> dict[str, list[str]]:
    return {name: list(frame.columns) for name, frame in tables.items()}


def _codebook_headers(slug: str) -> dict[str, list[str]]:
    codebook = codebook_of(slug)
    return {table: rows["column"].tolist() for table, rows in codebook.groupby("table", sort=False)}


def test_codebook_covers_every_exported_column_of_a_format2_study(format2, tmp_path):
    assert _codebook_headers(SLUG) == _headers(export_tables(SLUG))
    call_command("export_codebook", SLUG, "--out", str(tmp_path), stdout=io.StringIO())
    codebook = pd.read_csv(tmp_path / "codebook.csv", keep_default_na=False).set_index(["table", "column"])
    assert codebook.loc[("questionnaire", "role"), "allowed_values"] == (
        "Member of the public | Works in criminal justice | Affected person or family"
    )
    assert codebook.loc[("questionnaire", "age"), ["type", "allowed_values"]].tolist() == ["integer", "18..100"]
    assert codebook.loc[("questionnaire", "trust"), "allowed_values"].startswith("1 = Strongly disagree; 2 = ")
    assert "(optional" in codebook.loc[("questionnaire", "news"), "meaning"]
    assert codebook.loc[("answers", "condition"), "allowed_values"] == "shown, hidden"
    blocks = "intro, about, judge, check, risk, alike, distance, fair"
    assert codebook.loc[("answers", "block"), "allowed_values"] == blocks
    value = codebook.loc[("answers", "value"), "allowed_values"]
    assert "agree (agree): 0, 1" in value and "risk: 1 = Very unlikely" in value and "d_traj" not in value
    assert codebook.loc[("disagreements", "demo_race"), "allowed_values"] == "Black, White"
    assert codebook.loc[("pairs", "d_overall"), "allowed_values"] == "1..6"
    markdown = (tmp_path / "codebook.md").read_text()
    assert "## questionnaire" in markdown and "| role | string |" in markdown


def test_codebook_covers_every_exported_column_of_the_effort_demo(demo_study):
    simulate_participants("effort-demo", n=2, seed=1)
    assert _codebook_headers("effort-demo") == _headers(export_tables("effort-demo"))
    codebook = codebook_of("effort-demo").set_index(["table", "column"])
    assert codebook.loc[("pairs", "excluded"), "allowed_values"] == "0, 1"
    assert set(codebook.loc[("answers", "task"), "allowed_values"].split(", ")) == {
        "pair_distance",
        "fair_score",
        "agree",
        "attention",
        "screening",
    }
    assert codebook["meaning"].str.len().gt(0).all() and codebook["type"].str.len().gt(0).all()


def test_codebook_of_an_unknown_study_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("export_codebook", "nope")


def test_an_answer_on_a_page_outside_the_plan_is_a_clear_error(format2):
    """The answers table joins each answer to its page of the participant's plan: one that is not there names
    its page instead of giving a row without block or position."""
    Answer.objects.create(
        participant=format2[0], page="gone/page", question="gone/q", measure="rating", number=1.0, text=""
    )
    with pytest.raises(ValueError, match="'gone/page' is not in its participant's plan"):
        export_tables(SLUG)
