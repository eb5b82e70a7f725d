import numpy as np
import pandas as pd
import pytest

from fairness.datasets import load_dressel_farid
from fairness.disagreement import disagreement_notions, majority
from tests.conftest import REFERENCE_DATA

DRESSEL = REFERENCE_DATA / "dressel_farid"


def direct_notions(groups, yhat, ytilde):
    """The notions computed from the critic labels themselves (no disagreement algebra)."""
    frame = pd.DataFrame({"m": groups, "yhat": yhat, "yt": ytilde})
    out = {}

    def gap(values):  # values: DataFrame index m, columns k
        return float((values.max(axis=0) - values.min(axis=0)).max())

    labels = sorted(frame["yhat"].unique())
    c = pd.DataFrame({k: frame[frame.yhat == k].groupby("m").apply(lambda d, k=k: (d.yt == k).mean()) for k in labels})
    out["CA"] = gap(c)
    acc = frame.groupby("m").apply(lambda d: (d.yhat == d.yt).mean())
    out["AE"] = float(acc.max() - acc.min())
    eo = pd.DataFrame({k: frame[frame.yt == k].groupby("m").apply(lambda d, k=k: (d.yhat == k).mean()) for k in labels})
    out["EO"] = gap(eo)
    pe = pd.DataFrame({k: frame[frame.yt != k].groupby("m").apply(lambda d, k=k: (d.yhat == k).mean()) for k in labels})
    out["PE"] = gap(pe)
    out["OMR"] = gap(1 - eo)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_notions_equal_those_from_critic_labels(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    groups = rng.choice(["a", "b", "c"], n)
    yhat = rng.integers(0, 2, n)
    s = (rng.random(n) < np.where(groups == "b", 0.4, 0.25)).astype(int)
    ytilde = np.where(s == 1, 1 - yhat, yhat)
    result = disagreement_notions(groups, yhat, s)
    expected = direct_notions(groups, yhat, ytilde)
    for name, value in expected.items():
        notion = result.notions[name]
        assert notion.exact and notion.value == pytest.approx(value, abs=1e-12), name


def test_multiclass_bounds_contain_the_truth():
    rng = np.random.default_rng(5)
    n = 3000
    groups = rng.choice(["a", "b"], n)
    yhat = rng.integers(0, 3, n)
    ytilde = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), yhat)
    s = (ytilde != yhat).astype(int)
    result = disagreement_notions(groups, yhat, s)
    truth = direct_notions(groups, yhat, ytilde)
    for name in ("CA", "AE"):
        assert result.notions[name].exact and result.notions[name].value == pytest.approx(truth[name])
    for name in ("EO", "PE", "OMR"):
        notion = result.notions[name]
        assert notion.lower - 1e-12 <= truth[name] <= notion.upper + 1e-12, name
        assert notion.poster_estimate is not None


def test_majority_tie_counts_as_agreement():
    records = pd.DataFrame({"subject": [1, 1, 2, 2, 2], "disagreement": [1, 0, 1, 1, 0], "group": ["x"] * 5})
    out = majority(records).set_index("subject")
    assert out.loc[1, "disagreement"] == 0 and out.loc[2, "disagreement"] == 1
    assert out.loc[2, "disagreement_rate"] == pytest.approx(2 / 3)


def test_bootstrap_ci_brackets_the_estimate():
    rng = np.random.default_rng(3)
    n = 600
    groups = rng.choice(["a", "b"], n)
    yhat = rng.integers(0, 2, n)
    s = (rng.random(n) < np.where(groups == "a", 0.2, 0.4)).astype(int)
    res = disagreement_notions(groups, yhat, s, subjects=np.arange(n) // 3, n_resamples=500, seed=1)
    for notion in res.notions.values():
        assert notion.ci[0] <= notion.value <= notion.ci[1]


@pytest.fixture(scope="module", params=[False, True], ids=["no_race", "race"])
def dressel(request):
    if not DRESSEL.exists():
        pytest.skip("reference data not present")
    return request.param, load_dressel_farid(DRESSEL, race_shown=request.param)


def test_dressel_farid_anchors(dressel):
    """../shared/test-vectors.md: DR .357 (no race) / .352 (race) over 20,000 answers; mean worker
    accuracy .621 / .623 (paper: 62.1%); COMPAS accuracy .652 on the 1,000 defendants."""
    race_shown, answers = dressel
    assert len(answers) == 20_000 and answers["defendant"].nunique() == 1000 and answers["worker"].nunique() == 400
    assert answers["disagreement"].mean() == pytest.approx(0.352 if race_shown else 0.357, abs=5e-4)
    accuracy = (answers["prediction"] == answers["two_year_recid"]).groupby(answers["worker"]).mean().mean()
    assert accuracy == pytest.approx(0.623 if race_shown else 0.621, abs=5e-4)
    compas = answers.drop_duplicates("defendant")
    assert (compas["compas_label"] == compas["two_year_recid"]).mean() == pytest.approx(0.652, abs=5e-4)
    pooled = disagreement_notions(answers["race"], answers["compas_label"], answers["disagreement"])
    assert pooled.overall_dr == pytest.approx(answers["disagreement"].mean())
    majority_rows = majority(answers, subject="defendant")
    assert len(majority_rows) == 1000
    by_subject = disagreement_notions(
        majority_rows["race"], majority_rows["compas_label"], majority_rows["disagreement"]
    )
    assert all(v.exact for v in by_subject.notions.values())
