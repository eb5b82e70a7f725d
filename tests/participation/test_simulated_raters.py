"""The simulated raters' generative model: rater groups with a planted difference are told apart by the
per-group analyses (fairness.rater_groups, scipy's Welch test), and without one they are not (size ~5%)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_ind

from fairness.rater_groups import notions_by_rater_group, rater_group_difference_test
from simulation.raters import (
    agree_logit,
    bts_prediction,
    check_group_effects,
    default_group_effects,
    draw_binary,
    draw_rater,
    parse_group_effect,
)
from tasks.rate import Rate

SPEC = {
    "blocks": [
        {
            "key": "about",
            "type": "questionnaire",
            "questions": [
                {"key": "role", "type": "single_choice", "text": "Role", "options": ["judge", "lay"]},
                {"key": "age", "type": "number", "text": "Age", "min": 18, "max": 99, "integer": True},
            ],
        }
    ]
}
LIKERT = {"type": "likert", "labels": [str(i) for i in range(1, 8)], "positive_from": 5}


class _RateIndex:
    """The two lookups ``Rate.simulate`` makes, over a pool of AI scores."""

    def __init__(self, scores, scale=LIKERT):
        self.scores, self.scale = scores, scale

    def block(self, page):
        return {"scale": self.scale, "model": "ai", "pool": "people"}

    def model_output(self, pool, item, model):
        return {"score": self.scores[item]}


def _rate(rater, score, rng, scale=LIKERT) -> float:
    return float(Rate().simulate({"item": 0}, _RateIndex([score], scale), rater, rng)["rating"])


def _pool(rng, n=100) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pool of ``n`` subjects as arrays: AI score, subject group, AI label (score above 1/2)."""
    scores = rng.uniform(0, 1, n)
    return scores, rng.choice(["a", "b"], n), (scores > 0.5) * 1


def _agree_answers(rng, effects, n_raters=60, per_rater=30):
    """Each rater answers ``per_rater`` subjects of the pool drawn without replacement (numpy, not pandas'
    ``sample`` per rater: the size test below draws 6,000 raters)."""
    (scores, groups, labels), rows = _pool(rng), []
    for i in range(n_raters):
        rater = draw_rater(SPEC, effects, rng)
        for item in rng.choice(len(scores), per_rater, replace=False):
            agree, _ = draw_binary(agree_logit(scores[item]), rater, rng)
            rows.append((i, rater.group["role"], groups[item], labels[item], 1 - agree))
    return pd.DataFrame(rows, columns=["participant", "role", "group", "model_label", "disagreement"])


def _ratings(rng, effects, n_raters=40, per_rater=20):
    (scores, _, _), rows = _pool(rng), []
    for _ in range(n_raters):
        rater = draw_rater(SPEC, effects, rng)
        items = scores[rng.choice(len(scores), per_rater, replace=False)]
        rows.append((rater.group["role"], np.mean([_rate(rater, s, rng) for s in items])))
    return pd.DataFrame(rows, columns=["role", "mean_rating"])


def _welch(frame):
    judge, lay = (frame.loc[frame.role == r, "mean_rating"] for r in ("judge", "lay"))
    return ttest_ind(judge, lay, equal_var=False)


def test_planted_leniency_is_found_by_the_disagreement_analyses():
    effects = default_group_effects(SPEC)
    assert effects == {"role": {"judge": {"leniency": 1.0, "scale_shift": -1.0}}}
    answers = _agree_answers(np.random.default_rng(1), effects)
    test = rater_group_difference_test(answers, rater_group="role", n_permutations=999)
    assert test.pvalue < 0.05 and test.by_group["judge"] < test.by_group["lay"]  # judges agree more
    notions = notions_by_rater_group(answers, rater_group="role", n_resamples=500)
    assert notions.dr_ci["judge"][1] < notions.dr_ci["lay"][0]  # disjoint CIs: the difference's excludes 0


def test_planted_scale_shift_is_found_in_ratings():
    frame = _ratings(np.random.default_rng(2), default_group_effects(SPEC))
    result = _welch(frame)
    assert result.pvalue < 0.05 and result.confidence_interval().high < 0  # judges rate lower


@pytest.mark.slow
def test_without_a_planted_difference_the_analyses_reject_at_about_five_percent():
    rng, reps = np.random.default_rng(3), 100
    agree = rate = 0
    for i in range(reps):
        answers = _agree_answers(rng, {}, n_raters=30, per_rater=20)
        agree += rater_group_difference_test(answers, rater_group="role", n_permutations=199, seed=i).pvalue <= 0.05
        rate += _welch(_ratings(rng, {}, n_raters=30, per_rater=10)).pvalue <= 0.05
    tolerance = 3 * np.sqrt(0.05 * 0.95 / reps)
    assert agree / reps <= 0.05 + tolerance and rate / reps <= 0.05 + tolerance


def test_answer_draws_follow_their_formulas():
    rng = np.random.default_rng(4)
    rater = draw_rater(SPEC, {"role": {"judge": {"noise": 0.0}, "lay": {"noise": 0.0}}}, rng)
    assert agree_logit(1.0) - agree_logit(0.5) == pytest.approx(1.0)  # AGREE_CONFIDENCE per unit of confidence
    assert agree_logit(None) == agree_logit(0.25) == pytest.approx(1.0)
    assert draw_binary(0.0, rater, rng)[1] == pytest.approx(1 / (1 + np.exp(-rater.leniency)))
    assert all(1 <= _rate(rater, r, rng) <= 7 for r in np.linspace(0, 1, 11))
    number = {"type": "number", "min": 0, "max": 10, "step": 0.5}
    assert all(_rate(rater, r, rng, number) % 0.5 == 0 for r in np.linspace(0, 1, 11))
    yes = [int(bts_prediction(0.5, rater, rng, own=True)) for _ in range(200)]
    no = [int(bts_prediction(0.5, rater, rng, own=False)) for _ in range(200)]
    assert np.mean(yes) - np.mean(no) == pytest.approx(20, abs=2)  # +/- PROJECTION: false consensus
    assert min(yes + no) >= 0 and max(yes + no) <= 100


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("role=judge", "expected QUESTION=OPTION:FIELD=VALUE"),
        ("role=judge:mood=1", "'mood' is not one of leniency"),
        ("role=judge:leniency=high", "'high' is not a number"),
    ],
)
def test_bad_group_effect_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_group_effect(text)


def test_group_effect_must_name_a_question_and_option():
    assert parse_group_effect("role=judge:leniency=0.8,noise=1") == ("role", "judge", {"leniency": 0.8, "noise": 1})
    with pytest.raises(ValueError, match="no single-choice question with that key"):
        check_group_effects(SPEC, {"age": {"30": {"leniency": 1}}})
    with pytest.raises(ValueError, match=r"role='clerk': not one of \['judge', 'lay'\]"):
        check_group_effects(SPEC, {"role": {"clerk": {"leniency": 1}}})
