"""import_judgements: judgements collected elsewhere (a Qualtrics export in long form) stored as a completed
study whose analysis runs as for the platform's own; a second run changes nothing; bad files are named by row."""

from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from participation.models import Answer, Participant
from runs.design_analysis import study_analysis
from tasks import BLOCK_TASKS

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

    before = Answer.objects.count()
    out = StringIO()
    call_command("import_judgements", str(path), *AGREE, stdout=out)
    assert "already imported (30 participants, 290 answers); nothing changed" in out.getvalue()
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
    triplet = ["--task", "triplet", "--slug", "t", "--participant", "pid", "--item", "item", "--answer", "rating"]
    expected = "not supported yet" if "triplet" in BLOCK_TASKS else "choose one of agree, choose, pair_comparable, rate"
    with pytest.raises(CommandError, match=expected):
        call_command("import_judgements", str(path), *triplet)
