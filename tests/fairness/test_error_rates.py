"""Error rates against the truth (fairness.error_rates): a hand-worked case and Dressel & Farid (2018)."""

import numpy as np
import pandas as pd
import pytest

from fairness.datasets import load_dressel_farid, load_dressel_farid_defendants
from fairness.error_rates import ALL_RATERS, ALL_SUBJECTS, agree_predictions, error_rates, majority_labels
from tests.conftest import REFERENCE_DATA

DRESSEL = REFERENCE_DATA / "dressel_farid"

# Four subjects (outcome y, AI label, group) and three raters; r3 saw s1 and s2 only.
SUBJECTS = pd.DataFrame(
    {
        "subject": ["s1", "s2", "s3", "s4"],
        "outcome": [1, 0, 1, 0],
        "model_label": [1, 1, 1, 0],
        "group": ["A", "A", "B", "B"],
    }
)
PREDICTED = {"r1": [1, 1, 0, 0], "r2": [1, 0, 1, 0], "r3": [0, 0]}
GROUP = {"r1": "g1", "r2": "g2", "r3": "g1"}
ANSWERS = pd.DataFrame(
    [
        {"participant_id": r, "subject": f"s{i + 1}", "predicted": p, "rater_group": GROUP[r]}
        for r, labels in PREDICTED.items()
        for i, p in enumerate(labels)
    ]
)


def row(table, source, subject_group=ALL_SUBJECTS, rater_group=ALL_RATERS):
    found = table.query("source == @source and subject_group == @subject_group and rater_group == @rater_group")
    assert len(found) == 1
    return found.iloc[0]


def test_agree_predictions_take_the_ai_label_or_the_other():
    assert agree_predictions([1, 0, 1, 0], [1, 1, 0, 0]).tolist() == [1, 0, 0, 1]


def test_majority_tie_rules():
    yes, votes, ai = np.array([2.0, 1.0, 1.0, 0.0]), np.array([3.0, 2.0, 2.0, 0.0]), np.array([0, 1, 0, 1])
    assert majority_labels(yes, votes, ai, "negative")[:3].tolist() == [1, 0, 0]
    assert majority_labels(yes, votes, ai, "agree")[:3].tolist() == [1, 1, 0]
    assert np.isnan(majority_labels(yes, votes, ai, "agree")[3])
    with pytest.raises(ValueError, match="tie"):
        majority_labels(yes, votes, ai, "yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tie", "majority"),
    [
        # s1 votes 1,1,0 -> 1 (right); s2 1,0,0 -> 0 (right); s3 0,1: a tie; s4 0,0 -> 0 (right)
        ("negative", (3 / 4, 0.0, 1 / 2)),  # tie -> 0: s3 (y = 1) a false negative
        ("agree", (1.0, 0.0, 0.0)),  # tie -> the AI's label 1: right
    ],
)
def test_hand_worked_case(tie, majority):
    table = error_rates(ANSWERS, SUBJECTS, attributes=["group"], model="ai", tie=tie, n_resamples=0)
    # answers: 7 of 10 right; y = 0 answers: r1-s2 says 1 of 5; y = 1 answers: r1-s3, r3-s1 say 0 of 5
    participants = row(table, "participants")
    assert (participants.accuracy, participants.fpr, participants.fnr, participants.n) == (0.7, 0.2, 0.4, 10)
    assert tuple(row(table, "majority")[["accuracy", "fpr", "fnr"]]) == pytest.approx(majority)
    # the AI: s2 a false positive, the rest right
    model = row(table, "ai")
    assert (model.accuracy, model.fpr, model.fnr, model.n) == (0.75, 0.5, 0.0, 4)
    group_b = row(table, "participants", "B")  # r1: s3 wrong, s4 right; r2: both right
    assert (group_b.accuracy, group_b.fpr, group_b.fnr, group_b.n) == (0.75, 0.0, 0.5, 4)
    g2 = row(table, "participants", rater_group="g2")
    assert (g2.accuracy, g2.n, g2.n_raters) == (1.0, 4, 1)
    g1 = row(table, "participants", rater_group="g1")  # r1 2 of 4, r3 1 of 2
    assert (g1.accuracy, g1.fpr, g1.fnr) == (0.5, 1 / 3, 2 / 3)
    assert np.isnan(row(table, "ai").accuracy_low)


def test_bootstrap_intervals_resample_raters():
    table = error_rates(ANSWERS, SUBJECTS, n_resamples=500, seed=3)
    participants = row(table, "participants")
    assert participants.accuracy_low <= participants.accuracy_high
    assert 4 / 10 <= participants.accuracy_low and participants.accuracy_high <= 1.0  # raters' own: .5, 1, .5
    assert np.isnan(row(table, "participants", rater_group="g2").accuracy_low)  # one rater: no CI


@pytest.mark.parametrize(
    ("race_shown", "workers", "majority"),
    # Dressel & Farid (2018): mean worker accuracy 62.1% (test-vectors.md: .621 / .623), COMPAS 65.2%;
    # the majority of each defendant's 20 workers, a tie counted as "no", 67.0% / 66.5% (the paper's text)
    [(False, 0.621, 0.670), (True, 0.623, 0.665)],
)
def test_dressel_farid_accuracies(race_shown, workers, majority):
    defendants = load_dressel_farid_defendants(DRESSEL).rename(
        columns={"id": "subject", "two_year_recid": "outcome", "compas_label": "model_label"}
    )
    answers = load_dressel_farid(DRESSEL, race_shown=race_shown).rename(
        columns={"worker": "participant_id", "defendant": "subject", "prediction": "predicted"}
    )
    table = error_rates(answers, defendants, attributes=["race"], model="compas", n_resamples=0, rater_group=None)
    assert round(row(table, "participants").accuracy, 3) == workers
    assert round(row(table, "majority").accuracy, 3) == majority
    assert round(row(table, "compas").accuracy, 3) == 0.652
    # every worker answered 50 defendants: pooled accuracy = the mean of the workers' accuracies
    right = answers["predicted"] == answers["two_year_recid"]
    assert right.groupby(answers["participant_id"]).mean().mean() == pytest.approx(row(table, "participants").accuracy)
    compas_black = row(table, "compas", "Black")
    assert (compas_black.n, round(compas_black.accuracy, 3)) == (530, 0.649)
