import numpy as np
import pandas as pd
import pytest

from analysis.bts import (
    BonusRule,
    binarise,
    bts_scores,
    bulk_bonus_csv,
    participant_bts,
    robust_bts_scores,
    top_bonus,
)

# ../shared/test-vectors.md, "Bayesian Truth Serum" (source: chkgk/otree_bayesian_truth_serum tests)
ANSWERS = [1, 2, 3]  # options 2, 3, 4 as 0-based indices
PREDICTIONS = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.3, 0.1, 0.1], [0.5, 0.2, 0.2, 0.1]]
EXPECTED = [(0.3757, -0.1446, 0.2310), (0.6067, -0.8378, -0.2310), (0.7419, -0.7419, 0.0)]


@pytest.mark.parametrize("respondent", [0, 1, 2])
def test_published_vector(respondent):
    scores = bts_scores(ANSWERS, PREDICTIONS, alpha=1.0)
    row = scores.iloc[respondent]
    assert (row["information"], row["prediction"], row["total"]) == pytest.approx(EXPECTED[respondent], abs=5e-5)


def test_zero_sum_at_alpha_one():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, m = rng.integers(3, 40), rng.integers(2, 7)
        answers = rng.integers(0, m, size=n)
        preds = rng.dirichlet(np.ones(m), size=n)
        assert bts_scores(answers, preds, alpha=1.0)["total"].sum() == pytest.approx(0, abs=1e-9)


def test_invariant_to_relabelling_options():
    rng = np.random.default_rng(4)
    answers = rng.integers(0, 5, size=30)
    preds = rng.dirichlet(np.ones(5), size=30)
    perm = rng.permutation(5)
    inverse = np.argsort(perm)
    a = bts_scores(answers, preds)
    b = bts_scores(inverse[answers], preds[:, perm])
    pd.testing.assert_frame_equal(a, b)


def test_percentages_and_extreme_predictions():
    scores = bts_scores([0, 1, 1], [[100, 0], [50, 50], [0, 100]])
    assert np.isfinite(scores.to_numpy()).all()
    with pytest.raises(ValueError, match="sum to 1"):
        bts_scores([0, 1], [[0.5, 0.6], [0.5, 0.5]])


def test_binarised_likert():
    answers, preds = binarise([1, 3, 4, 6], [70, 50, 20, 0], similar_max=3)
    assert answers.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(preds, [[0.7, 0.3], [0.5, 0.5], [0.2, 0.8], [0.0, 1.0]])


def test_robust_bts_rewards_accurate_predictions_and_is_bounded():
    answers = [1, 0, 1, 1, 0, 1]
    scores = robust_bts_scores(answers, [0.6] * 6)
    assert ((scores["total"] >= 0) & (scores["total"] <= 2)).all()
    # quadratic rule by hand for respondent 0: reference 1 (y=.6), peer 2 (x=1), delta=.4 -> shadow 1.0
    assert scores.loc[0, "information"] == pytest.approx(2 * 1.0 - 1.0)
    assert scores.loc[0, "prediction"] == pytest.approx(2 * 0.6 - 0.36)


def test_participant_totals_and_prolific_bonus_list():
    pairs = pd.DataFrame(
        {
            "participant_id": ["a", "b", "c", "d"] * 2,
            "condition": "x",
            "set": "s",
            "comparison": ["A"] * 4 + ["B"] * 4,
            "d_overall": [1, 2, 5, 6, 2, 2, 6, 5],
            "prediction_similar": [60, 40, 30, 50, 70, 55, 20, 45],
        }
    )
    assert participant_bts(pairs, similar_max=3).empty  # 4 respondents per question, fewer than MIN_RESPONDENTS
    totals = participant_bts(pairs, similar_max=3, min_respondents=4)
    assert totals["total"].sum() == pytest.approx(0, abs=1e-9)
    assert set(totals["n_questions"]) == {2}
    bonus = top_bonus(totals, score_column="total", rule=BonusRule(amount=5.0, top_fraction=0.25))
    assert len(bonus) == 1 and bonus["participant_id"].iloc[0] == totals["participant_id"].iloc[0]
    assert bulk_bonus_csv(bonus) == f"{bonus['participant_id'].iloc[0]},5.00\n"


def test_bonus_rule_fraction_must_be_in_zero_one():
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            BonusRule(amount=5.0, top_fraction=bad)
    assert BonusRule(amount=5.0, top_fraction=1.0).target(7) == 7
    assert BonusRule(amount=5.0, top_fraction=0.1).target(148) == 15


def test_top_bonus_breaks_ties_by_secondary_columns():
    scores = pd.DataFrame({"participant_id": list("abcdef"), "score": [3, 3, 3, 3, 1, 1], "second": [1, 5, 2, 5, 9, 9]})
    rule = BonusRule(amount=5.0, top_fraction=0.2)  # target 2
    assert set(top_bonus(scores, score_column="score", rule=rule)["participant_id"]) == set("abcd")
    assert set(top_bonus(scores, score_column="score", rule=rule, tie_columns=["second"])["participant_id"]) == {
        "b",
        "d",
    }


def test_rationale_detail_tie_breakers():
    """Two participants with the same mean distinct words per rationale are told apart by the
    distinct words over all rationales, then by characters."""
    from analysis.bts import rationale_detail

    pairs = pd.DataFrame(
        {
            "participant_id": ["p", "p", "q", "q", "r", "r", "t", "t"],
            "rationale": [
                "same trend",
                "same trend",
                "same trend",
                "lower total",
                "same trend",
                "same trends",
                "longer trends",
                "longer trends",
            ],
        }
    )
    detail = rationale_detail(pairs).set_index("participant_id")
    assert (detail["rationale_words"] == 2).all()
    assert detail.loc["q", "rationale_vocabulary"] == 4 and detail.loc["p", "rationale_vocabulary"] == 2
    assert detail.loc["r", "rationale_vocabulary"] == 3
    # t and p tie on words (2) and vocabulary (2): the longer rationales (26 vs 20 characters) rank first
    assert detail.loc["t", "rationale_vocabulary"] == 2
    assert list(rationale_detail(pairs)["participant_id"]) == ["q", "r", "t", "p"]
