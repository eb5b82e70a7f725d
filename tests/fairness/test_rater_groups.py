import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from fairness.datasets import load_dressel_farid, load_dressel_farid_workers
from fairness.disagreement import disagreement_notions
from fairness.rater_groups import notions_by_rater_group, rater_group_difference_test
from tests.conftest import REFERENCE_DATA

DRESSEL = REFERENCE_DATA / "dressel_farid"
COLUMNS = {"rater": "worker", "subject_group": "race", "model_label": "compas_label"}


@pytest.fixture(scope="module", params=[False, True], ids=["no_race", "race"])
def dressel(request):
    if not DRESSEL.exists():
        pytest.skip("reference data not present")
    answers = load_dressel_farid(DRESSEL, race_shown=request.param)
    workers = load_dressel_farid_workers(DRESSEL, race_shown=request.param)
    return request.param, answers.merge(workers, on="worker", how="left", suffixes=("", "_worker"), validate="m:1")


def test_dressel_farid_workers_all_have_demographics(dressel):
    _, answers = dressel
    assert answers["gender"].notna().all() and answers["worker"].nunique() == 400
    assert set(answers.groupby("worker")["block"].nunique()) == {1}


def test_dressel_farid_by_worker_gender(dressel):
    """Overall values are the platform's pooled ones (test-vectors.md: DR .357 / .352); each rater
    group's DR is its own answers' mean, and the answer-weighted mean of the groups' DR is the overall."""
    race_shown, answers = dressel
    result = notions_by_rater_group(answers, rater_group="gender", n_resamples=200, **COLUMNS)
    assert result.overall.overall_dr == pytest.approx(0.352 if race_shown else 0.357, abs=5e-4)
    pooled = disagreement_notions(answers["race"], answers["compas_label"], answers["disagreement"])
    for name, notion in pooled.notions.items():
        assert result.overall.notions[name].value == pytest.approx(notion.value), name
    direct = answers.groupby("gender")["disagreement"].mean()
    for group, notions in result.by_group.items():
        assert notions.overall_dr == pytest.approx(direct[group])
    weighted = sum(result.value(g) * result.n_answers[g] for g in result.by_group) / len(answers)
    assert weighted == pytest.approx(result.overall.overall_dr)
    assert result.n_raters["male"] + result.n_raters["female"] >= 398
    frame = result.frame()
    dr = frame[(frame.statistic == "DR") & (frame.rater_group == "female")].iloc[0]
    assert dr.ci_low < dr.value < dr.ci_high


def test_difference_and_ratio_by_hand():
    answers = pd.DataFrame(
        {
            "participant": ["p1"] * 4 + ["p2"] * 4,
            "role": ["judge"] * 4 + ["lay"] * 4,
            "group": ["a", "b", "a", "b"] * 2,
            "model_label": [0, 0, 1, 1] * 2,
            "disagreement": [1, 0, 0, 0, 1, 1, 1, 0],
        }
    )
    result = notions_by_rater_group(answers, rater_group="role")
    assert result.value("judge") == 0.25 and result.value("lay") == 0.75
    assert result.difference() == 0.5 and result.ratio() == pytest.approx(1 / 3)
    test = rater_group_difference_test(answers, rater_group="role", n_permutations=50)
    assert test.statistic == 0.5 and test.by_group == {"judge": 0.25, "lay": 0.75}


def _simulated(rng, n_raters=40, per_rater=30, effect=0.0, style_sd=1.0):
    """Raters with their own response style (a random logit intercept); group B's raters disagree
    more by ``effect`` on the logit scale."""
    groups = np.repeat(["A", "B"], n_raters // 2)
    logit = -0.6 + rng.normal(0, style_sd, n_raters) + effect * (groups == "B")
    p = 1 / (1 + np.exp(-logit))
    rater = np.repeat(np.arange(n_raters), per_rater)
    return pd.DataFrame(
        {
            "participant": rater,
            "role": groups[rater],
            "group": rng.choice(["x", "y"], rater.size),
            "model_label": rng.integers(0, 2, rater.size),
            "disagreement": (rng.random(rater.size) < p[rater]).astype(int),
        }
    )


def _naive_pvalue(answers):
    """Two-proportion z-test treating every answer as independent (what the design forbids)."""
    a, b = (answers.loc[answers.role == r, "disagreement"] for r in ("A", "B"))
    pooled = answers["disagreement"].mean()
    se = np.sqrt(pooled * (1 - pooled) * (1 / len(a) + 1 / len(b)))
    return 2 * norm.sf(abs(a.mean() - b.mean()) / se)


@pytest.mark.slow
def test_permutation_test_holds_its_size_when_answers_cluster_by_rater():
    """Under H0 with rater response styles the naive answer-level test over-rejects; permuting
    raters keeps the size at 5% (binomial 3-sigma tolerance over 200 replications)."""
    rng = np.random.default_rng(11)
    reps = 200
    permuted = naive = 0
    for i in range(reps):
        answers = _simulated(rng)
        permuted += rater_group_difference_test(answers, rater_group="role", n_permutations=199, seed=i).pvalue <= 0.05
        naive += _naive_pvalue(answers) <= 0.05
    tolerance = 3 * np.sqrt(0.05 * 0.95 / reps)
    assert permuted / reps <= 0.05 + tolerance
    assert naive / reps > 0.2


def test_permutation_test_finds_a_real_difference():
    answers = _simulated(np.random.default_rng(3), n_raters=60, effect=1.5, style_sd=0.3)
    result = rater_group_difference_test(answers, rater_group="role", n_permutations=999)
    assert result.pvalue < 0.01 and result.by_group["B"] > result.by_group["A"]
    ca = rater_group_difference_test(answers, rater_group="role", statistic="CA", n_permutations=99)
    # the permutation path (per-rater count matrix) gives the observed statistic the per-group notions give
    notions = notions_by_rater_group(answers, rater_group="role")
    assert ca.statistic == pytest.approx(notions.difference("CA"), abs=1e-12)
    assert ca.by_group == pytest.approx({g: notions.value(g, "CA") for g in ("A", "B")}, abs=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns="role"), "'role'"),
        (lambda f: f.assign(role="A"), "at least two rater groups"),
        (lambda f: f.assign(disagreement=f.disagreement.where(f.index != 3)), "missing values in 'disagreement'"),
        (lambda f: f.assign(role=np.where(f.index == 0, "B", f.role)), "belongs to several rater groups"),
    ],
)
def test_bad_input_is_named(change, message):
    answers = change(_simulated(np.random.default_rng(0), n_raters=4, per_rater=5))
    with pytest.raises(ValueError, match=message):
        notions_by_rater_group(answers, rater_group="role")


def test_unknown_statistic_is_refused():
    with pytest.raises(ValueError, match="statistic must be one of DR, CA"):
        rater_group_difference_test(_simulated(np.random.default_rng(0)), rater_group="role", statistic="XX")
