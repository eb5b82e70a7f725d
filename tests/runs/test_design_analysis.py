"""Per-stakeholder-group analyses of format 2 studies on simulated answers from a stated model.

Model: 40 subjects (race A/B alternating, the AI's label 1 for every other pair of subjects); 60 raters,
half "judge", half "lay" (the questionnaire question ``role``). A rater of group g agrees with the AI with
probability sigmoid(0.5 + leniency_g), says "treat alike" with probability sigmoid(leniency_g), and rates a
subject round(3 + shift_g + N(0, 0.8)) clipped to 1..5; with every BTS follow-up a prediction uniform
in 20..80. With ``differ``: leniency judge +1.5, lay -1.0 and shift judge +1.0, lay -0.5; without: 0 for both.
"""

import numpy as np
import pandas as pd
import pytest

from analysis.bts import bts_scores, honesty_scores
from fairness.disagreement import disagreement_notions
from fairness.rater_groups import ALL
from fairness.task_blocks import rater_group_means
from runs.design_analysis import analyze_design
from runs.reports.design import design_results
from studies.format2 import check_by
from tasks import bts_positives

N_SUBJECTS, N_RATERS = 40, 60


def design_spec() -> dict:
    subjects = [
        {
            "id": f"s{i}",
            "features": {"age": 20 + i},
            "groups": {"race": "A" if i % 2 else "B"},
            "models": {"ai": {"score": (i % 10) / 10, "label": int(i % 4 < 2)}},
        }
        for i in range(N_SUBJECTS)
    ]
    return {
        "format": 2,
        "slug": "design",
        "title": "Design",
        "pools": [{"key": "people", "subjects": subjects, "display": {"profile": "Aged {age}"}}],
        "blocks": [
            {
                "key": "about",
                "type": "questionnaire",
                "questions": [
                    {"key": "role", "type": "single_choice", "text": "Role", "options": ["judge", "lay"]},
                    {"key": "age_band", "type": "single_choice", "text": "Age", "options": ["young", "old"]},
                ],
            },
            {"key": "judge", "type": "task", "task": "agree", "pool": "people", "model": "ai", "bts": {}},
            {
                "key": "score",
                "type": "task",
                "task": "rate",
                "pool": "people",
                "question": "Risk?",
                "scale": {"type": "likert", "labels": ["1", "2", "3", "4", "5"]},
                "bts": {},
            },
            {
                "key": "alike",
                "type": "task",
                "task": "pair_comparable",
                "pool": "people",
                "pairs": [{"a": f"s{i}", "b": f"s{i + 1}"} for i in range(0, N_SUBJECTS, 2)],
                "bts": {},
            },
        ],
    }


def simulate(differ: bool, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    leniency = {"judge": 1.5, "lay": -1.0} if differ else {"judge": 0.0, "lay": 0.0}
    shift = {"judge": 1.0, "lay": -0.5} if differ else {"judge": 0.0, "lay": 0.0}
    rows, people = [], []
    spec = design_spec()
    pairs = [f"{p['a']}~{p['b']}" for p in spec["blocks"][3]["pairs"]]
    for r in range(N_RATERS):
        pid, role = f"p{r}", ("judge" if r % 2 else "lay")
        people.append({"participant_id": pid, "role": role, "age_band": "young" if r % 3 else "old"})

        def add(block, task, subject, measure, value, pid=pid):
            rows.append(
                {
                    "participant_id": pid,
                    "condition": "main",
                    "block": block,
                    "task": task,
                    "subject": subject,
                    "measure": measure,
                    "value": float(value),
                    "text": "",
                    "excluded": 0,
                }
            )

        for i in range(N_SUBJECTS):
            subject = f"s{i}"
            add("judge", "agree", subject, "agree", rng.random() < 1 / (1 + np.exp(-(0.5 + leniency[role]))))
            add("judge", "agree", subject, "prediction", rng.integers(20, 81))
            rating = int(np.clip(round(3 + shift[role] + rng.normal(0, 0.8)), 1, 5))
            add("score", "rate", subject, "rating", rating)
            add("score", "rate", subject, "prediction", rng.integers(20, 81))
        for pair in pairs:
            add("alike", "pair_comparable", pair, "comparable", rng.random() < 1 / (1 + np.exp(-leniency[role])))
            add("alike", "pair_comparable", pair, "prediction", rng.integers(20, 81))
    return pd.DataFrame(rows), pd.DataFrame(people)


def run(differ: bool, by=("role",)):
    answers, questionnaire = simulate(differ)
    return analyze_design(design_spec(), answers, questionnaire, by=by, n_resamples=300, n_permutations=300)


def tables(result, block: str) -> dict[str, pd.DataFrame]:
    return next(b for b in result.blocks if b.block == block).tables


@pytest.fixture(scope="module")
def differing():
    return run(True)


@pytest.fixture(scope="module")
def equal():
    answers, questionnaire = simulate(False, seed=1)
    return analyze_design(design_spec(), answers, questionnaire, by=("role",), n_resamples=300, n_permutations=300)


def _row(frame, group):
    return frame[frame["rater_group"] == group].iloc[0]


@pytest.mark.slow  # with the other tests of `differing` (2 CPU-s, built by the first)
def test_finds_known_rater_group_differences(differing):
    agree = tables(differing, "judge")
    dr = agree["disagreement_rate"]
    assert _row(dr, "lay")["mean"] > _row(dr, "judge")["mean"]  # lay raters are less lenient: disagree more
    assert _row(dr, "lay")["ci_low"] > _row(dr, "judge")["ci_high"]
    tests = agree["tests"].set_index("measure")
    assert tests.loc["DR", "pvalue"] < 0.05
    rate = tables(differing, "score")
    overall = rate["ratings"].query("subject_attribute == ''")
    assert _row(overall, "judge")["ci_low"] > _row(overall, "lay")["ci_high"]
    assert rate["tests"].query("subject_attribute == ''")["pvalue"].iloc[0] < 0.05
    comparable = tables(differing, "alike")
    assert _row(comparable["shares"], "judge")["mean"] > _row(comparable["shares"], "lay")["mean"]
    assert comparable["tests"]["pvalue"].iloc[0] < 0.05


def test_finds_no_difference_when_there_is_none(equal):
    assert tables(equal, "judge")["tests"].set_index("measure").loc["DR", "pvalue"] > 0.05
    assert tables(equal, "score")["tests"].query("subject_attribute == ''")["pvalue"].iloc[0] > 0.05
    assert tables(equal, "alike")["tests"]["pvalue"].iloc[0] > 0.05


@pytest.mark.slow  # with the other tests of `differing` (2 CPU-s, built by the first)
def test_overall_values_equal_the_direct_computation(differing):
    answers, _ = simulate(True)
    agree = answers[answers["measure"] == "agree"]
    assert _row(tables(differing, "judge")["disagreement_rate"], ALL)["mean"] == pytest.approx(
        1 - agree["value"].mean()
    )
    subjects = {s["id"]: s for s in design_spec()["pools"][0]["subjects"]}
    direct = disagreement_notions(
        agree["subject"].map(lambda s: subjects[s]["groups"]["race"]),
        agree["subject"].map(lambda s: subjects[s]["models"]["ai"]["label"]),
        (1 - agree["value"]).astype(int),
    )
    notions = (
        tables(differing, "judge")["notions"]
        .query("rater_group == @ALL and subject_groups == 'all'")
        .set_index("statistic")
    )
    for name, notion in direct.notions.items():
        assert notions.loc[name, "value"] == pytest.approx(notion.value)
    rating = answers[answers["measure"] == "rating"]
    overall = tables(differing, "score")["ratings"].query("subject_attribute == '' and rater_group == @ALL")
    assert overall["mean"].iloc[0] == pytest.approx(rating["value"].mean())


@pytest.mark.slow
def test_all_participants_rows_include_raters_without_a_group():
    """Three raters left the ``role`` question blank: the ALL rows are still every rater's answers (DR and
    the notions equal the direct computation on all 60 raters), the group rows and tests leave them out."""
    answers, questionnaire = simulate(True)
    blank = ["p0", "p1", "p2"]
    questionnaire.loc[questionnaire["participant_id"].isin(blank), "role"] = ""
    result = analyze_design(design_spec(), answers, questionnaire, by=("role",), n_resamples=50, n_permutations=50)
    assert result.n_without_group == 3 and result.rater_groups["n_participants"].sum() == N_RATERS - 3
    agree = answers[answers["measure"] == "agree"]
    rates = tables(result, "judge")["disagreement_rate"]
    assert _row(rates, ALL)["mean"] == pytest.approx(1 - agree["value"].mean())
    assert _row(rates, ALL)["n_raters"] == N_RATERS
    assert _row(rates, "judge")["n_raters"] + _row(rates, "lay")["n_raters"] == N_RATERS - 3
    subjects = {s["id"]: s for s in design_spec()["pools"][0]["subjects"]}
    direct = disagreement_notions(
        agree["subject"].map(lambda s: subjects[s]["groups"]["race"]),
        agree["subject"].map(lambda s: subjects[s]["models"]["ai"]["label"]),
        (1 - agree["value"]).astype(int),
    )
    notions = (
        tables(result, "judge")["notions"]
        .query("rater_group == @ALL and subject_groups == 'all'")
        .set_index("statistic")
    )
    assert (notions["n_raters"] == N_RATERS).all()
    for name, notion in direct.notions.items():
        assert notions.loc[name, "value"] == pytest.approx(notion.value), name
    shares = tables(result, "alike")["shares"]
    assert _row(shares, ALL)["n_raters"] == N_RATERS
    assert set(tables(result, "judge")["tests"]["pvalue"].dropna()) and len(result.honesty) == N_RATERS


@pytest.mark.slow  # with the other tests of `differing` (2 CPU-s, built by the first)
def test_combined_rater_groups(differing):
    result = run(True, by=("role", "age_band"))
    assert result.rater_group == "role / age_band"
    assert set(result.rater_groups["rater_group"]) == {"judge / young", "judge / old", "lay / young", "lay / old"}
    assert result.rater_groups["n_participants"].sum() == N_RATERS


def test_honesty_is_bts_per_question():
    answers, _ = simulate(True)
    spec = design_spec()
    scores = honesty_scores(answers, bts_positives(spec))
    assert len(scores) == N_RATERS and (scores["n_questions"] == 2 * N_SUBJECTS + N_SUBJECTS // 2).all()
    # one question by hand: the agree block's subject s3, option 0 = "Yes, I agree"
    question = answers[(answers["block"] == "judge") & (answers["subject"] == "s3")]
    task = question[question["measure"] == "agree"].set_index("participant_id")["value"]
    prediction = question[question["measure"] == "prediction"].set_index("participant_id")["value"].loc[task.index]
    p = prediction.to_numpy() / 100
    direct = bts_scores((task.to_numpy() != 1).astype(int), np.column_stack([p, 1 - p]))
    assert direct["total"].sum() == pytest.approx(0, abs=1e-9)  # Prelec: zero-sum with alpha = 1
    only = honesty_scores(question, bts_positives({**spec, "blocks": [spec["blocks"][1]]}))
    assert only.set_index("participant_id").loc[task.index, "total"].to_numpy() == pytest.approx(direct["total"])


def test_honesty_scores_equal_prelec_worked_by_hand():
    """Three raters answer one agree question (yes, yes, no) and predict 70%, 60%, 20% "yes". Prelec (2004),
    alpha = 1, worked by hand: x = (2/3, 1/3), geometric means of the predictions y = (.4380, .4579);
    information log(x_k / y_k), prediction sum_k x_k log(y_rk / x_k)."""
    spec = design_spec()
    rows = [
        (rater, measure, value)
        for rater, agree, predicted in (("r1", 1, 70), ("r2", 1, 60), ("r3", 0, 20))
        for measure, value in (("agree", agree), ("prediction", predicted))
    ]
    answers = pd.DataFrame(rows, columns=["participant_id", "measure", "value"]).assign(block="judge", subject="s1")
    scores = honesty_scores(answers, bts_positives({**spec, "blocks": [spec["blocks"][1]]}), min_respondents=3)
    scores = scores.set_index("participant_id")
    assert scores.loc[["r1", "r2", "r3"], "information"].to_numpy() == pytest.approx(
        [0.4202, 0.4202, -0.3175], abs=1e-4
    )
    assert scores.loc[["r1", "r2", "r3"], "prediction"].to_numpy() == pytest.approx(
        [-0.0026, -0.0095, -0.5108], abs=1e-4
    )
    assert scores.loc[["r1", "r2", "r3"], "total"].to_numpy() == pytest.approx([0.4176, 0.4107, -0.8283], abs=1e-4)


def test_honesty_leaves_out_questions_with_fewer_than_min_respondents():
    """Subject s1 answered by 9 raters, s2 by 10: with the default floor (10) only s2 is scored, s1 is
    named in attrs with its 9 respondents; s2's scores are those of bts_scores on its 10 answers."""
    spec = design_spec()
    rows = [
        (f"r{r}", subject, measure, value)
        for subject, raters in (("s1", 9), ("s2", 10))
        for r in range(raters)
        for measure, value in (("agree", r % 2), ("prediction", 30 + 5 * r))
    ]
    answers = pd.DataFrame(rows, columns=["participant_id", "subject", "measure", "value"]).assign(block="judge")
    scores = honesty_scores(answers, bts_positives({**spec, "blocks": [spec["blocks"][1]]}))
    assert scores.attrs == {"left_out": {"judge/s1": 9}, "min_respondents": 10}
    assert len(scores) == 10 and (scores["n_questions"] == 1).all()
    p = np.array([30 + 5 * r for r in range(10)]) / 100
    direct = bts_scores([1 - r % 2 for r in range(10)], np.column_stack([p, 1 - p]))
    by_id = scores.set_index("participant_id").loc[[f"r{r}" for r in range(10)], "total"]
    assert by_id.to_numpy() == pytest.approx(direct["total"].to_numpy())
    assert (
        honesty_scores(answers, bts_positives({**spec, "blocks": [spec["blocks"][1]]}), min_respondents=9).attrs[
            "left_out"
        ]
        == {}
    )


def test_bad_by_is_refused_with_the_questions_named():
    with pytest.raises(ValueError, match="'gender' is not a questionnaire question.*role, age_band"):
        check_by(design_spec(), ["gender"])
    assert check_by(design_spec(), []) == ()  # no question: one rater group (fairness.task_blocks.ONE_GROUP)


@pytest.mark.slow
def test_permutation_test_keeps_its_level_under_no_difference():
    """100 datasets without a difference (raters with their own random propensity, 20 yes/no answers
    each): the test rejects at .05 about 5% of the time (binomial 95% range up to 10 of 100)."""
    rng = np.random.default_rng(3)
    rejections = 0
    for _ in range(100):
        propensity = rng.beta(2, 2, size=N_RATERS)
        frame = pd.DataFrame(
            {
                "participant_id": np.repeat(np.arange(N_RATERS), 20),
                "rater_group": np.repeat(np.arange(N_RATERS) % 2, 20),
                "value": (rng.random(N_RATERS * 20) < np.repeat(propensity, 20)).astype(float),
            }
        )
        _, test = rater_group_means(frame, "value", n_resamples=0, n_permutations=199, seed=int(rng.integers(1000)))
        rejections += test.pvalue < 0.05
    assert rejections <= 10


def test_likert_alpha_per_rater_group_finds_the_known_weights():
    """pair_distance: d = round(alpha_g d_E + (1 - alpha_g) d_S + N(0, 0.5)) in 1..7, alpha judge 0.8, lay 0.2."""
    rng = np.random.default_rng(5)
    spec = design_spec()
    spec["blocks"] = [
        spec["blocks"][0],
        {
            "key": "dist",
            "type": "task",
            "task": "pair_distance",
            "pool": "people",
            "pairs": [],
            "measures": ["trajectory", "aggregate", "overall"],
        },
    ]
    rows, people = [], []
    for r in range(40):
        role = "judge" if r % 2 else "lay"
        weight = 0.8 if role == "judge" else 0.2
        people.append({"participant_id": f"p{r}", "role": role, "age_band": "young"})
        for i in range(16):
            traj, aggr = rng.integers(1, 8), rng.integers(1, 8)
            overall = np.clip(round(weight * traj + (1 - weight) * aggr + rng.normal(0, 0.5)), 1, 7)
            for measure, value in (("trajectory", traj), ("aggregate", aggr), ("overall", overall)):
                rows.append(
                    {
                        "participant_id": f"p{r}",
                        "condition": "main",
                        "block": "dist",
                        "task": "pair_distance",
                        "subject": f"s{i}~s{i + 1}",
                        "measure": measure,
                        "value": float(value),
                        "excluded": 0,
                    }
                )
    result = analyze_design(
        spec, pd.DataFrame(rows), pd.DataFrame(people), by=["role"], n_resamples=300, n_permutations=300
    )
    block = result.blocks[0].tables
    alpha = block["alpha"].set_index("rater_group")
    assert alpha.loc["judge", "ci_low"] < 0.8 < alpha.loc["judge", "ci_high"]
    assert alpha.loc["lay", "ci_low"] < 0.2 < alpha.loc["lay", "ci_high"]
    assert block["tests"]["pvalue"].iloc[0] < 0.05
    # the rated pairs are the stimuli: both CIs reported, the participants' one chosen unless generalising
    assert alpha["estimand"].str.startswith("for these 16 stimulus pairs").all()
    assert (alpha["ci_low"] == alpha["ci_participants_low"]).all() and alpha["ci_stimuli_low"].notna().all()
    general = (
        analyze_design(
            spec,
            pd.DataFrame(rows),
            pd.DataFrame(people),
            by=["role"],
            n_resamples=300,
            n_permutations=300,
            generalise="stimuli",
        )
        .blocks[0]
        .tables["alpha"]
        .set_index("rater_group")
    )
    assert (general["ci_low"] == general["ci_stimuli_low"]).all()
    assert general["ci_stimuli_low"].tolist() == alpha["ci_stimuli_low"].tolist()
    assert general["estimand"].str.startswith("for a population of stimulus pairs like these 16").all()


def _planted_parity(judge_bias_for_a: float, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ratings (1-5) = round(1 + 4 * AI score + noise), judges adding ``judge_bias_for_a`` for race A subjects."""
    rng = np.random.default_rng(seed)
    score = {f"s{i}": (i % 10) / 10 for i in range(N_SUBJECTS)}
    rows, people = [], []
    for r in range(N_RATERS):
        pid, role = f"p{r}", ("judge" if r % 2 else "lay")
        people.append({"participant_id": pid, "role": role, "age_band": "young"})
        for i in range(N_SUBJECTS):
            bias = judge_bias_for_a if role == "judge" and i % 2 else 0.0
            rating = int(np.clip(round(1 + 4 * score[f"s{i}"] + bias + rng.normal(0, 0.7)), 1, 5))
            rows.append(
                {
                    "participant_id": pid,
                    "condition": "main",
                    "block": "score",
                    "task": "rate",
                    "subject": f"s{i}",
                    "measure": "rating",
                    "value": float(rating),
                    "text": "",
                    "excluded": 0,
                }
            )
    return pd.DataFrame(rows).sample(frac=1, random_state=0), pd.DataFrame(people)  # rows in no order


def test_rating_block_has_differential_parity_between_rater_groups_and_against_the_ai():
    answers, questionnaire = _planted_parity(1.0)
    spec = design_spec()
    spec["blocks"][2]["model"] = "ai"  # the rate block compares with the AI's scores
    result = analyze_design(spec, answers, questionnaire, by=("role",), n_resamples=300, n_permutations=300)
    parity = tables(result, "score")["parity"].set_index(["R0", "R1"])
    assert set(parity["subject_attribute"]) == {"race"} and set(parity["subject_group"]) == {"A"}
    # the gap computed directly: per subject each group's mean rating on [0, 1], minus the other decision maker
    ratings = answers.assign(role=answers["participant_id"].map(questionnaire.set_index("participant_id")["role"]))
    unit = ratings.assign(v=(ratings["value"] - 1) / 4).pivot_table(index="subject", columns="role", values="v")
    unit["ai"] = [(int(s[1:]) % 10) / 10 for s in unit.index]
    is_a = np.array([int(s[1:]) % 2 == 1 for s in unit.index])

    def gap(r0, r1):
        delta = unit[r0] - unit[r1]
        return delta[is_a].mean() - delta[~is_a].mean()

    judge_lay = parity.loc[("rater group judge", "rater group lay")]
    assert judge_lay["gap"] == pytest.approx(gap("judge", "lay"))
    assert judge_lay["gap"] == pytest.approx(0.25, abs=0.06)  # the planted +1 on a 4-point span
    assert judge_lay["DPT"] > 0 and judge_lay["pvalue"] < 0.01
    assert judge_lay["gap_ci_low"] < judge_lay["gap"] < judge_lay["gap_ci_high"] and judge_lay["gap_ci_low"] > 0
    lay_ai = parity.loc[("rater group lay", "the AI")]
    assert lay_ai["gap"] == pytest.approx(gap("lay", "ai")) and lay_ai["pvalue"] > 0.05
    assert parity.loc[("rater group judge", "the AI"), "pvalue"] < 0.01
    assert "higher ratings" in parity.loc[("rater group judge", "rater group lay"), "verdict"]


def test_rating_parity_finds_nothing_when_nothing_is_planted():
    answers, questionnaire = _planted_parity(0.0)
    result = analyze_design(design_spec(), answers, questionnaire, by=("role",), n_resamples=300, n_permutations=300)
    parity = tables(result, "score")["parity"]
    assert set(parity["R1"]) == {"rater group lay"}  # no model named: the rater groups only
    assert (parity["pvalue"] > 0.05).all(), parity[["R0", "R1", "gap", "pvalue"]]
    assert any("names no model" in note for note in next(b for b in result.blocks if b.block == "score").notes)


@pytest.mark.slow  # with the other tests of `differing` (2 CPU-s, built by the first)
def test_groups_too_small_to_compare_are_warned_about(differing):
    """Each rater group holds fewer than the 64 per group of a medium difference (Cohen's table)."""
    counts = dict(zip(differing.rater_groups["rater_group"], differing.rater_groups["n_participants"], strict=True))
    assert all(n < 64 for n in counts.values())
    assert [w.split(":")[0] for w in differing.warnings] == [f"Rater group {g}" for g in counts]
    assert design_results(differing)["warnings"] == list(differing.warnings)


@pytest.mark.parametrize(
    ("favourable", "participants", "fpr", "fnr"),
    [("lower", 7 / 12, 1 / 3, 1 / 2), (None, 7 / 12, 1 / 3, 1 / 2), ("higher", 5 / 12, 2 / 3, 1 / 2)],
)
@pytest.mark.parametrize("stored", ["outcome", "feature"])
def test_rate_error_rates_worked_by_hand(favourable, participants, fpr, fnr, stored):
    """4 subjects (outcome 1, 0, 1, 0; the AI's labels 1, 1, 0, 0), 3 raters on a 1-5 scale (threshold: the
    default positive_from 3). Ratings s0: 4 2 5, s1: 3 1 2, s2: 1 2 4, s3: 5 1 1, i.e. with favourable 'lower'
    predictions 110 / 100 / 001 / 100: raters right 7 of 12, FPR 2 of 6, FNR 3 of 6; majority 1 0 0 0
    (accuracy 3/4, FPR 0, FNR 1/2); the AI 2/4, FPR 1/2, FNR 1/2. With 'higher' a rating below 3 predicts
    the event: every rater prediction flips (accuracy 5/12, FPR 4/6, FNR 3/6; majority 0 1 1 1). The outcome
    is the subject's ``outcome`` (as the builder writes it) or, in older files, one of its features."""
    spec = design_spec()
    spec["pools"][0]["outcome_column"] = "reoffended"
    subjects = spec["pools"][0]["subjects"] = spec["pools"][0]["subjects"][:4]
    for subject, outcome, label in zip(subjects, (1, 0, 1, 0), (1, 1, 0, 0), strict=True):
        if stored == "outcome":
            subject["outcome"] = outcome
        else:
            subject["features"]["reoffended"] = outcome
        subject["models"]["ai"]["label"] = label
    block = spec["blocks"][2] | {"model": "ai"}
    if favourable:
        block["scale"] = block["scale"] | {"favourable": favourable}
    spec["blocks"] = [spec["blocks"][0], block]
    ratings = {"s0": (4, 2, 5), "s1": (3, 1, 2), "s2": (1, 2, 4), "s3": (5, 1, 1)}
    rows = [
        {
            "participant_id": f"p{r}",
            "condition": "main",
            "block": "score",
            "task": "rate",
            "subject": s,
            "measure": "rating",
            "value": float(values[r]),
            "text": "",
            "excluded": 0,
        }
        for s, values in ratings.items()
        for r in range(3)
    ]
    people = pd.DataFrame([{"participant_id": f"p{r}", "role": "judge", "age_band": "old"} for r in range(3)])
    result = analyze_design(
        spec, pd.DataFrame(rows), people, by=("role",), n_resamples=50, n_permutations=9, min_group_size=1
    )  # three raters: a group below the default minimum would be "too few to compare"
    rates = tables(result, "score")["rate_error_rates"]
    rates = rates[(rates["rater_group"] == ALL) & (rates["subject_attribute"] == "")].set_index("source")
    assert rates.loc["participants", ["accuracy", "fpr", "fnr"]].tolist() == pytest.approx([participants, fpr, fnr])
    assert rates.loc["participants", "n"] == 12
    majority = [3 / 4, 0, 1 / 2] if favourable != "higher" else [1 / 4, 1, 1 / 2]
    assert rates.loc["majority", ["accuracy", "fpr", "fnr"]].tolist() == pytest.approx(majority)
    assert rates.loc["ai", ["accuracy", "fpr", "fnr"]].tolist() == pytest.approx([1 / 2, 1 / 2, 1 / 2])


@pytest.mark.slow  # with the other tests of `differing` (2 CPU-s, built by the first)
def test_rate_blocks_without_an_outcome_have_no_error_rates(differing):
    assert "rate_error_rates" not in tables(differing, "score")


@pytest.mark.slow
def test_report_shows_small_groups_weighted_tests_bins_and_the_parity_rule(tmp_path):
    """Issue 23: a one-rater group is "too few to compare" (sample sentence, rater-group table), the tests
    table has W, the pairs their Holm p, the numeric subject column its bins, the notions the two largest
    subject groups, and the parity section its verdict rule, in report.html and results.json."""
    import json

    from fairness.rater_group_parity import RULE_JACKKNIFE, RULE_PERMUTATION
    from runs.reports.design import write_design_report

    answers, questionnaire = simulate(True)
    questionnaire.loc[questionnaire["participant_id"] == "p0", "role"] = "observer"
    spec = design_spec()
    for i, subject in enumerate(spec["pools"][0]["subjects"]):
        subject["groups"]["age"] = 20 + i  # 40 values: quartiles 29.75, 39.5, 49.25
    spec["blocks"][2]["model"] = "ai"
    result = analyze_design(spec, answers, questionnaire, by=("role",), n_resamples=30, n_permutations=30)
    html = write_design_report(result, tmp_path, title="Design").read_text()
    for text in ("too few to compare", "W (size-weighted)", "p (Holm)", "29.75 to &lt; 39.5", "Bin from", "A vs B"):
        assert text in html, text
    for figure in ("Block judge: disagreement rate by rater group", "Block score: mean ratings by rater group"):
        assert f'"text": "{figure}' in html, figure  # issue 21, part 6: DR and ratings drawn with their CIs
    assert RULE_PERMUTATION.split(":")[0] in html and "1 participant is in rater groups with fewer than 10" in html
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["group_options"]["min_group_size"] == 10
    assert results["parity_rules"] == {"between rater groups": RULE_PERMUTATION, "against the AI": RULE_JACKKNIFE}
    assert {"rater_group": "observer", "n_participants": 1, "status": "too few to compare"} in results["rater_groups"]
    judge = next(b for b in results["blocks"] if b["block"] == "judge")["tables"]
    assert {"weighted", "weighted_pvalue"} <= set(judge["tests"][0]) and "pvalue_holm" in judge["pairwise"][0]
    notion_tests = [(r["measure"], r["subject_attribute"], r["subject_group"]) for r in judge["tests"]]
    over_all = {(m, a) for m, a, g in notion_tests if a and not g}
    two_largest = {(m, a) for m, a, g in notion_tests if a and " vs " in str(g)}
    assert over_all and two_largest == over_all  # each notion's permutation tests for the two largest groups too
    assert [g["n_subjects"] for g in judge["subject_groups"] if g["subject_attribute"] == "age"] == [10, 10, 10, 10]
    parity = next(b for b in results["blocks"] if b["block"] == "score")["tables"]["parity"]
    assert {r["rule"] for r in parity} == {RULE_PERMUTATION, RULE_JACKKNIFE}
    assert "observer" not in {r["rater_group"] for r in judge["disagreement_rate"]}
