"""import_judgements: judgements collected elsewhere (a Qualtrics export in long form) stored as a completed
study whose analysis runs as for the platform's own; a second run changes nothing; bad files are named by row."""

from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from participation.models import Answer, Participant
from runs.design_analysis import study_analysis

RACES = ["Black", "White"]


def agree_export(tmp_path, n=30):
    """n participants (half of each race) each judge 8 defendants (4 per race); the AI labels everyone 1;
    participants agree less with the AI about their own race's defendants (in-group leniency)."""
    rng = np.random.default_rng(0)
    rows = []
    for p in range(n):
        race = RACES[p % 2]
        for d in range(8):
            own = RACES[d % 2] == race
            rows.append(
                {
                    "ResponseId": f"R_{p:03d}",
                    "Q_race": race,
                    "Q_age": "30-49" if p % 3 else "",
                    "defendant": f"D{d}",
                    "def_race": RACES[d % 2],
                    "priors": d,
                    "ai": 1,
                    "agree": int(rng.uniform() < (0.3 if own else 0.8)),
                }
            )
    path = tmp_path / "qualtrics.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


AGREE = [
    "--task", "agree", "--slug", "elsewhere", "--participant", "ResponseId", "--item", "defendant",
    "--answer", "agree", "--questionnaire", "Q_race", "Q_age", "--group", "def_race", "--feature", "priors",
    "--model-label", "ai",
]  # fmt: skip


@pytest.mark.django_db
def test_agree_judgements_are_analysed_with_their_in_group_test(tmp_path):
    path = agree_export(tmp_path)
    out = StringIO()
    call_command("import_judgements", str(path), *AGREE, stdout=out)
    assert "imported 30 completed participants and 290 answers" in out.getvalue()  # 240 + 30 race + 20 age
    study = Participant.objects.get(external_id="R_001").study
    assert study.spec["pools"][0]["subjects"][1] == {
        "id": "D1", "groups": {"def_race": "White"}, "features": {"priors": 1.0}, "models": {"model": {"label": 1}}
    }  # fmt: skip
    person = Participant.objects.get(external_id="R_001")
    assert person.answers.get(question="questionnaire/q_race").text == "White"
    assert person.answers.get(question="questionnaire/q_age").text == "30-49"
    left_empty = Participant.objects.get(external_id="R_003").answers  # age left empty in the export
    assert not left_empty.filter(question="questionnaire/q_age").exists()
    result = study_analysis(
        "elsewhere", study.spec, by=["q_race"], n_resamples=200, n_permutations=200, min_subject_group=1
    )  # a handful of defendants per race: below the default minimum subject group
    block = result.blocks[0]
    gaps = block.tables["in_group"].query("measure == 'disagreement'").set_index("rater_group")["gap"]
    frame = pd.read_csv(path)
    own = frame.assign(s=1 - frame["agree"]).pivot_table(index=["ResponseId", "Q_race"], columns="def_race", values="s")
    expected = (own["Black"] - own["White"]).groupby(level="Q_race").mean()
    assert gaps["Black"] == pytest.approx(expected["Black"]) and gaps["White"] == pytest.approx(expected["White"])
    test = block.tables["tests"].query("measure == 'in-group: disagreement'").iloc[0]
    assert test["pvalue"] < 0.01  # 0.5 in-group difference in agreement, 15 raters per group

    assert_second_run_changes_nothing(path, AGREE, "30 participants, 290 answers")


def assert_second_run_changes_nothing(path, arguments: list[str], counts: str) -> None:
    before = Answer.objects.count()
    out = StringIO()
    call_command("import_judgements", str(path), *arguments, stdout=out)
    assert f"already imported ({counts}); nothing changed" in out.getvalue()
    assert Answer.objects.count() == before


@pytest.mark.django_db
def test_choose_judgements_keep_one_orientation_per_pair(tmp_path):
    rows = [
        ("p1", "A", "B", "A"), ("p1", "B", "C", "C"), ("p1", "A", "C", "Equally"),
        ("p2", "B", "A", "A"), ("p2", "C", "B", "B"), ("p2", "C", "A", "C"),
    ]  # fmt: skip
    path = tmp_path / "choices.csv"
    pd.DataFrame(rows, columns=["pid", "left", "right", "chosen"]).to_csv(path, index=False)
    call_command(
        "import_judgements", str(path), "--task", "choose", "--slug", "choices", "--participant", "pid",
        "--a", "left", "--b", "right", "--answer", "chosen", "--decision", "get the loan", stdout=StringIO(),
    )  # fmt: skip
    study = Participant.objects.get(external_id="p2").study
    block = study.spec["blocks"][0]
    assert block["pairs"] == [{"a": "A", "b": "B"}, {"a": "B", "b": "C"}, {"a": "A", "b": "C"}]
    assert block["allow_equal"] is True and block["decision"] == "get the loan"
    stored = dict(
        Participant.objects.get(external_id="p2").answers.values_list("subject_key", "number")
    )  # p2 saw B-A and chose A: pair A~B, a chosen = 1; C-B chose B: pair B~C, 1; C-A chose C: pair A~C, 0
    assert stored == {"A~B": 1.0, "B~C": 1.0, "A~C": 0.0}
    assert Participant.objects.get(external_id="p1").answers.get(subject_key="A~C").number == 0.5


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change, arguments, message",
    [
        (lambda f: f, ["--item", "nope"], "no column 'nope'"),
        (
            lambda f: f.assign(agree=f["agree"].astype(object).where(f.index != 3, "yes")),
            [],
            ":row 5: 'agree' must be one of 0, 1, got 'yes'",
        ),
        (lambda f: pd.concat([f, f.iloc[[0]]], ignore_index=True), [], "participant 'R_000' judged 'D0' twice"),
        (lambda f: f, ["--model-label", ""], "an agree import needs --model-label"),
    ],
)  # fmt: skip
def test_bad_files_are_refused_naming_the_row(tmp_path, change, arguments, message):
    path = agree_export(tmp_path, n=4)
    change(pd.read_csv(path)).to_csv(path, index=False)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("import_judgements", str(path), *AGREE, *arguments, stdout=StringIO())
    assert not Participant.objects.exists()


@pytest.mark.django_db
def test_rating_outside_the_scale_and_triplet(tmp_path):
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"pid": ["p1", "p1"], "item": ["a", "b"], "rating": [3, 9]}).to_csv(path, index=False)
    rate = ["--task", "rate", "--slug", "rates", "--participant", "pid", "--item", "item", "--answer", "rating"]
    with pytest.raises(CommandError, match=r":row 3: 'rating' = 9 is outside \[1, 7\]"):
        call_command("import_judgements", str(path), *rate, "--scale-min", "1", "--scale-max", "7")
    call_command("import_judgements", str(path), *rate, stdout=StringIO())
    assert Participant.objects.get(external_id="p1").study.spec["blocks"][0]["scale"] == {
        "type": "number", "min": 3.0, "max": 9.0
    }  # fmt: skip


TRIPLET = [
    "--task", "triplet", "--slug", "triplets", "--participant", "pid", "--anchor", "ref", "--b", "left",
    "--c", "right", "--answer", "closer", "--feature", "age",
]  # fmt: skip


@pytest.mark.django_db
def test_triplet_judgements_keep_one_orientation_per_triplet(tmp_path):
    """(A, B, C) and (A, C, B) are one triplet, stored as first seen; the answer names the subject judged more
    similar and becomes closer = 1 for the stored b; a second run changes nothing."""
    rows = [
        ("p1", "A", "B", "C", "B", 30), ("p1", "B", "A", "C", "C", 40),
        ("p2", "A", "C", "B", "B", 50), ("p2", "B", "C", "A", "A", 40),
    ]  # fmt: skip
    path = tmp_path / "triplets.csv"
    pd.DataFrame(rows, columns=["pid", "ref", "left", "right", "closer", "age"]).to_csv(path, index=False)
    out = StringIO()
    call_command("import_judgements", str(path), *TRIPLET, stdout=out)
    assert "imported 2 completed participants and 4 answers" in out.getvalue()
    study = Participant.objects.get(external_id="p2").study
    block = study.spec["blocks"][0]
    assert block["task"] == "triplet"
    assert block["triplets"] == [{"anchor": "A", "b": "B", "c": "C"}, {"anchor": "B", "b": "A", "c": "C"}]
    assert [s["features"]["age"] for s in study.spec["pools"][0]["subjects"]] == [30.0, 40.0, 50.0]  # A, B, C
    stored = {
        (p, key): (number, text)
        for p, key, number, text in Answer.objects.values_list(
            "participant__external_id", "subject_key", "number", "text"
        )
    }  # p2 saw A: C or B and chose B = the stored b: 1; B: C or A chose A = the stored b: 1
    assert stored == {
        ("p1", "A~B~C"): (1.0, "B"), ("p1", "B~A~C"): (0.0, "C"),
        ("p2", "A~B~C"): (1.0, "B"), ("p2", "B~A~C"): (1.0, "A"),
    }  # fmt: skip
    assert set(Answer.objects.values_list("question", flat=True)) == {
        "judgements/A~B~C/closer", "judgements/B~A~C/closer"
    }  # fmt: skip
    assert_second_run_changes_nothing(path, TRIPLET, "2 participants, 4 answers")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "rows, arguments, message",
    [
        (
            [("p1", "A", "B", "C", "D")],
            [],
            ":row 2: 'closer' must name the subject more similar to the anchor, one of ('B', 'C'), got 'D'",
        ),
        ([("p1", "A", "A", "C", "C")], [], ":row 2: anchor and b are one subject ('A')"),
        ([("p1", "A", "B", "C", "B")], ["--c", ""], "a triplet import needs --c"),
    ],
)  # fmt: skip
def test_bad_triplet_files_are_refused_naming_the_row(tmp_path, rows, arguments, message):
    path = tmp_path / "triplets.csv"
    pd.DataFrame(rows, columns=["pid", "ref", "left", "right", "closer"]).to_csv(path, index=False)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("import_judgements", str(path), *TRIPLET[:-2], *arguments, stdout=StringIO())
    assert not Participant.objects.exists()
