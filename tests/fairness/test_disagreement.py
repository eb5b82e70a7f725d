import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness.datasets import load_dressel_farid
from fairness.disagreement import disagreement_notions, majority
from tests.conftest import REFERENCE_DATA

DRESSEL = REFERENCE_DATA / "dressel_farid"


def direct_notions(groups, yhat, ytilde, labels=None):
    """The notions computed from the critic labels themselves (no disagreement algebra), in plain
    Python: f_{m,k} is a share among group m's records meeting a condition, undefined when none do;
    the gap is max_k (max_m f - min_m f) over the defined cells."""
    records = list(zip(groups, yhat, ytilde, strict=True))
    labels = sorted(set(yhat) | set(ytilde)) if labels is None else labels
    group_levels = sorted(set(groups), key=str)

    def share(m, condition, event):
        kept = [(yh, yt) for g, yh, yt in records if g == m and condition(yh, yt)]
        return sum(event(yh, yt) for yh, yt in kept) / len(kept) if kept else None

    def gap(condition, event):
        gaps = []
        for k in labels:
            values = [
                share(m, lambda yh, yt, k=k: condition(yh, yt, k), lambda yh, yt, k=k: event(yh, yt, k))
                for m in group_levels
            ]
            values = [v for v in values if v is not None]
            if values:
                gaps.append(max(values) - min(values))
        return max(gaps)

    accuracy = [share(m, lambda yh, yt: True, lambda yh, yt: yh == yt) for m in group_levels]
    return {
        "CA": gap(lambda yh, yt, k: yh == k, lambda yh, yt, k: yt == k),
        "AE": max(accuracy) - min(accuracy),
        "EO": gap(lambda yh, yt, k: yt == k, lambda yh, yt, k: yh == k),
        "PE": gap(lambda yh, yt, k: yt != k, lambda yh, yt, k: yh == k),
        "OMR": gap(lambda yh, yt, k: yt == k, lambda yh, yt, k: yh != k),
    }


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


def test_group_without_one_model_label_by_hand():
    """Group B never gets model label 0, but its one disagreeing critic holds label 0. EO_{.,0}:
    A's critics hold 0 on 3 records, the model gave 0 on 2 of them (2/3); B's on 1, the model gave 1
    (0). EO_{.,1} is 1 in both groups. So EO = OMR = 2/3, and PE = 2/3 because binary labels make
    PE_{m,1} = 1 - EO_{m,0}. (The old mask on the model's label gave EO = OMR = 0.)"""
    result = disagreement_notions(["A", "A", "A", "A", "B", "B"], [0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 0, 1])
    for name in ("EO", "PE", "OMR"):
        assert result.notions[name].value == pytest.approx(2 / 3), name


def test_one_member_group_by_hand():
    """B has one member, model label 1, whose critic disagrees (holds 0). EO_{.,0}: A's critic holding
    0 got model label 0 (1), B's got 1 (0): EO = OMR = 1; PE_{.,1} = P(yhat = 1 | ytilde = 0) is 0 in A
    and 1 in B: PE = 1. (The old mask gave EO = OMR = 0.)"""
    result = disagreement_notions(["A", "A", "B"], [0, 1, 1], [0, 0, 1])
    assert [result.notions[n].value for n in ("EO", "PE", "OMR")] == [1.0, 1.0, 1.0]


small_records = st.lists(
    st.tuples(st.sampled_from("ABC"), st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=12
).filter(lambda rows: len({g for g, _, _ in rows}) >= 2)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(small_records)
def test_binary_notions_on_small_and_degenerate_groups(rows):
    """Every grouping, including one-member groups and labels the model (or the critics) never give:
    the notions equal those from the critic labels, and EO = PE = OMR."""
    groups, yhat, s = (list(column) for column in zip(*rows, strict=True))
    ytilde = [1 - y if d else y for y, d in zip(yhat, s, strict=True)]
    result = disagreement_notions(groups, yhat, s, labels=[0, 1])
    expected = direct_notions(groups, yhat, ytilde, labels=[0, 1])
    for name, value in expected.items():
        assert result.notions[name].exact and result.notions[name].value == pytest.approx(value, abs=1e-12), name
    assert result.EO.value == pytest.approx(result.PE.value) == pytest.approx(result.OMR.value)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, 2), st.integers(0, 2)), min_size=2, max_size=12).filter(
        lambda rows: len({g for g, _, _ in rows}) >= 2
    )
)
def test_multiclass_bounds_contain_the_truth_on_small_groups(rows):
    groups, yhat, ytilde = (list(column) for column in zip(*rows, strict=True))
    s = [int(a != b) for a, b in zip(yhat, ytilde, strict=True)]
    result = disagreement_notions(groups, yhat, s, labels=[0, 1, 2])
    truth = direct_notions(groups, yhat, ytilde, labels=[0, 1, 2])
    for name in ("EO", "PE", "OMR"):
        notion = result.notions[name]
        assert notion.lower - 1e-12 <= truth[name] <= notion.upper + 1e-12, name


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


def test_dressel_farid_equal_opportunity_by_defendant_race():
    """Race hidden, all 400 workers, one record per answer: EO = PE = OMR = .8598 by defendant race
    (from the critic labels, which are the other label whenever a worker disagrees; the old mask
    on the model's label gave EO = OMR = .6058)."""
    if not DRESSEL.exists():
        pytest.skip("reference data not present")
    answers = load_dressel_farid(DRESSEL, race_shown=False)
    result = disagreement_notions(answers["race"], answers["compas_label"], answers["disagreement"])
    ytilde = np.where(answers["disagreement"] == 1, 1 - answers["compas_label"], answers["compas_label"])
    expected = direct_notions(answers["race"].tolist(), answers["compas_label"].tolist(), ytilde.tolist())
    for name in ("EO", "PE", "OMR"):
        assert result.notions[name].value == pytest.approx(0.8598, abs=5e-5), name
        assert result.notions[name].value == pytest.approx(expected[name], abs=1e-12), name


def test_dressel_farid_gaps_quoted_in_the_docs():
    """The numbers the docs quote (docs/explanation/science.md, fairness-audits.md), as a report prints
    them: race hidden, every answer, subject groups of at least 10 defendants (the analysis's default
    minimum: Asian 7 and Native American 1 left out) EO = PE = OMR = .290 and AE = .0069 with its interval
    reaching 0 and no evidence of an AE gap; White vs Black alone EO = .197. (.8598 over every group is the
    gap between Hispanic defendants and the one Native American defendant.)"""
    answers = load_dressel_farid(DRESSEL, race_shown=False)
    sizes = answers.groupby("race")["defendant"].nunique()
    assert sizes.to_dict() == {"Asian": 7, "Black": 530, "Hispanic": 85, "Native American": 1, "White": 377}
    kept = answers[answers["race"].isin(sizes[sizes >= 10].index)]
    result = disagreement_notions(
        kept["race"],
        kept["compas_label"],
        kept["disagreement"],
        subjects=kept["worker"],
        items=kept["defendant"],
        n_resamples=300,
        n_permutations=199,
    )
    for name in ("EO", "PE", "OMR"):
        assert round(result.notions[name].value, 3) == 0.290, name
    assert round(result.notions["AE"].value, 4) == 0.0069
    assert result.notions["AE"].ci[0] == 0.0 and result.notions["AE"].pvalue > 0.5
    assert result.notions["EO"].ci[0] > 0.2 and result.notions["EO"].pvalue < 0.01
    pair = answers[answers["race"].isin(["White", "Black"])]
    assert round(disagreement_notions(pair["race"], pair["compas_label"], pair["disagreement"]).EO.value, 3) == 0.197
