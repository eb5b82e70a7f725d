"""Rater and subject groups compared (issue 23, points 5-7): the minimum group size, the size-weighted
between-group statistic W, pairwise tests with Holm's adjustment, binned subject groups, and the rater-level
verdict of differential parity between rater groups.

References outside the project: Pearson's chi-square (scipy ``chi2_contingency``) for W on 0/1 answers,
Holm's step-down adjustment worked by hand, the one-sample t-test (scipy ``ttest_1samp``) for the jackknife
t-test when every rater rated every subject, and simulations whose truth is "no difference".
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.correlations import adjust_pvalues
from fairness.rater_group_parity import RULE_JACKKNIFE, RULE_PERMUTATION, parity_by_rater_group
from fairness.rater_groups import OTHER, TOO_FEW, apply_min_group_size, holm
from fairness.task_blocks import rater_group_means, subject_groups, two_largest


def _answers(sizes: dict[str, int], rng: np.random.Generator, n_answers: int = 20, shift=None) -> pd.DataFrame:
    """0/1 answers of raters with their own propensity ~ Beta(2, 2) (+ ``shift[group]`` on the logit)."""
    raters, values = [], []
    for group, size in sizes.items():
        for r in range(size):
            p = rng.beta(2, 2)
            if shift and group in shift:
                p = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + shift[group])))
            values.append((rng.random(n_answers) < p).astype(float))
            raters.append((f"{group}{r}", group))
    participant, group = (np.repeat(column, n_answers) for column in zip(*raters, strict=True))
    return pd.DataFrame({"participant_id": participant, "rater_group": group, "value": np.concatenate(values)})


def test_weighted_statistic_of_a_rate_is_pearsons_chi_square_over_n():
    """N W / (p (1 - p)) = Pearson's chi-square of the groups x {0, 1} table (scipy, no continuity correction)."""
    frame = _answers({"a": 12, "b": 5, "c": 30}, np.random.default_rng(1), shift={"b": 1.0})
    _, test = rater_group_means(frame, "value", n_resamples=0, n_permutations=99, seed=0)
    table = pd.crosstab(frame["rater_group"], frame["value"]).to_numpy()
    chi2 = stats.chi2_contingency(table, correction=False).statistic
    p = frame["value"].mean()
    assert len(frame) * test.weighted_statistic / (p * (1 - p)) == pytest.approx(chi2, rel=1e-9)
    means = frame.groupby("rater_group")["value"].mean()
    assert test.statistic == pytest.approx(means.max() - means.min())
    assert [(r["group_a"], r["group_b"]) for r in test.pairwise_rows()] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert test.pairwise_rows()[0]["difference"] == pytest.approx(means["b"] - means["a"])


def test_holm_by_hand_and_as_statsmodels():
    """p = (.01, .04, .03): sorted .01 x 3 = .03, .03 x 2 = .06, .04 x 1 -> max(.06, .04) = .06; and
    statsmodels' ``multipletests(method="holm")`` on random p-values with ties and NaN."""
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm([0.2, float("nan")])[1]) and holm([0.2, float("nan")])[0] == pytest.approx(0.2)
    p = np.random.default_rng(0).uniform(0, 0.3, 12).round(2)
    p[[2, 7]] = np.nan
    assert holm(p) == pytest.approx(adjust_pvalues(p, method="holm").tolist(), nan_ok=True)


def test_groups_below_the_minimum_are_too_few_or_pooled():
    groups = pd.Series(["a"] * 12 + ["b"] * 3 + ["c"] + [None] * 2, index=[f"p{i}" for i in range(18)])
    kept, table = apply_min_group_size(groups, 10)
    assert kept.notna().sum() == 12 and set(kept.dropna()) == {"a"}
    assert table.set_index("rater_group")["status"].to_dict() == {"a": "compared", "b": TOO_FEW, "c": TOO_FEW}
    pooled, table = apply_min_group_size(groups, 4, pool_small=True)
    assert (pooled == OTHER).sum() == 4
    assert table.set_index("rater_group")["status"].to_dict() == {
        "a": "compared",
        "b": f"pooled into {OTHER}",
        "c": f"pooled into {OTHER}",
        OTHER: "compared",
    }
    _, table = apply_min_group_size(groups, 5, pool_small=True)
    assert table.set_index("rater_group").loc[OTHER, "status"] == TOO_FEW  # still below the minimum
    with pytest.raises(ValueError, match="at least 1"):
        apply_min_group_size(groups, 0)


@pytest.mark.slow
def test_weighted_test_and_holm_keep_their_level_with_unequal_groups():
    """300 null data sets (raters with their own propensities, groups of 40, 15, 12, 3 and 1 raters; the
    two tiny groups are below the minimum and excluded): the W test rejects in about 5% (binomial 99% range
    up to 26 of 300) and Holm's pairwise p-values find any difference in at most about 5% (family-wise)."""
    rng = np.random.default_rng(11)
    weighted = spread = family = 0
    for _ in range(300):
        frame = _answers({"a": 40, "b": 15, "c": 12, "d": 3, "e": 1}, rng)
        per_rater = frame.groupby("participant_id")["rater_group"].first()
        kept, _ = apply_min_group_size(per_rater, 10)
        frame = frame.assign(rater_group=frame["participant_id"].map(kept))
        _, test = rater_group_means(frame, "value", n_resamples=0, n_permutations=199, seed=int(rng.integers(1e6)))
        assert set(test.by_group) == {"a", "b", "c"}
        weighted += test.weighted_pvalue < 0.05
        spread += test.pvalue < 0.05
        family += min(p.pvalue_holm for p in test.pairwise) < 0.05
    assert weighted <= 26 and spread <= 26 and family <= 26, (weighted, spread, family)


def test_weighted_test_finds_a_difference_between_large_groups():
    frame = _answers({"a": 40, "b": 40, "c": 2}, np.random.default_rng(5), shift={"b": 1.2})
    _, test = rater_group_means(frame, "value", n_resamples=0, n_permutations=199, seed=1)
    assert test.weighted_pvalue < 0.01
    pairs = {p.groups: p for p in test.pairwise}
    assert pairs[("a", "b")].pvalue_holm < 0.05 and pairs[("a", "b")].pvalue_holm >= pairs[("a", "b")].pvalue


# Subject groups --------------------------------------------------------------------------------------


def _subjects(ages, races) -> pd.DataFrame:
    return pd.DataFrame(
        {"subject": [f"s{i}" for i in range(len(ages))], "group:age": list(ages), "group:race": list(races)}
    )


def test_numeric_subject_groups_are_binned_at_quartiles_or_given_cuts():
    ages = list(range(20, 80))  # 60 values: quartiles 34.75, 49.5, 64.25
    races = ["A"] * 30 + ["B"] * 22 + ["C"] * 8
    subjects, table = subject_groups(_subjects(ages, races))
    age = table.query("subject_attribute == 'age'").set_index("subject_group")
    assert age["n_subjects"].to_dict() == {"< 34.75": 15, "34.75 to < 49.5": 15, "49.5 to < 64.25": 15, ">= 64.25": 15}
    assert age.loc["34.75 to < 49.5", "lower"] == 34.75 and age.loc["34.75 to < 49.5", "upper"] == 49.5
    assert subjects.loc[subjects["group:age"] == "< 34.75", "group:age"].size == 15
    race = table.query("subject_attribute == 'race'").set_index("subject_group")
    assert race.loc["C", "status"] == TOO_FEW and subjects["group:race"].isna().sum() == 8
    assert two_largest(subjects["group:race"]) == ["A", "B"]
    given, table = subject_groups(_subjects(ages, races), bins={"age": [25, 45]}, min_size=1)
    assert table.query("subject_attribute == 'age'")["n_subjects"].tolist() == [5, 20, 35]  # < 25, 25-44, >= 45
    assert given["group:race"].notna().all()
    with pytest.raises(ValueError, match="not numeric"):
        subject_groups(_subjects(ages, races), bins={"race": [1]})


def test_a_numeric_column_with_few_values_stays_one_group_per_value():
    subjects, table = subject_groups(_subjects([0, 1] * 20, ["A"] * 40))
    assert set(subjects["group:age"]) == {"0", "1"} and table["lower"].isna().all()


# Differential parity between rater groups: the rater-level verdict -------------------------------------


def _ratings(rng, n_raters=(15, 15), n_subjects=40, heterogeneity=0.0, planted=0.0) -> pd.DataFrame:
    """Every rater rates every subject: AI score + rater bias + (rater's own A-effect + planted for the
    second group) x A + N(0, 0.1^2); rater A-effects ~ N(0, heterogeneity^2)."""
    a = np.arange(n_subjects) % 2
    ai = rng.random(n_subjects)
    raters, values = [], []
    for g, size in enumerate(n_raters):
        for r in range(size):
            effect = rng.normal(0, heterogeneity) + planted * g if heterogeneity else planted * g
            values.append(ai + rng.normal(0, 0.1) + effect * a + rng.normal(0, 0.1, n_subjects))
            raters.append((f"g{g}r{r}", f"g{g}"))
    rater, role = (np.repeat(column, n_subjects) for column in zip(*raters, strict=True))
    subjects = np.tile(np.arange(n_subjects), len(raters))
    return pd.DataFrame(
        {"rater": rater, "role": role, "subject": subjects, "sensitive": a[subjects], "value": np.concatenate(values)}
    ).assign(ai=ai[subjects])


def test_jackknife_t_is_the_one_sample_t_test_of_the_raters_gaps():
    """When every rater rated every subject the group's gap is the mean of the raters' own gaps and the
    jackknife t-test is scipy's one-sample t-test of those gaps (two-sided)."""
    ratings = _ratings(np.random.default_rng(2), heterogeneity=0.05)
    result = parity_by_rater_group(ratings, "role", ai="ai", n_resamples=20, n_permutations=99)
    group = ratings[ratings["role"] == "g0"].assign(delta=lambda f: f["value"] - f["ai"])
    per_rater = group.pivot_table(index="rater", columns="sensitive", values="delta", aggfunc="mean")
    own = per_rater[1] - per_rater[0]
    g0 = result.by_group["g0"]
    assert g0.gap == pytest.approx(own.mean())
    assert g0.pvalue == pytest.approx(stats.ttest_1samp(own, 0).pvalue, rel=1e-9)
    assert g0.rule == RULE_JACKKNIFE and result.between_groups[("g0", "g1")].rule == RULE_PERMUTATION
    frame = result.frame()
    assert {"pvalue", "dpt_pvalue", "rule", "verdict"} <= set(frame.columns)


def test_rater_level_verdict_finds_a_planted_gap_between_groups():
    ratings = _ratings(np.random.default_rng(4), heterogeneity=0.05, planted=0.15)
    result = parity_by_rater_group(ratings, "role", n_resamples=20, n_permutations=199, favourable="higher")
    between = result.between_groups[("g0", "g1")]
    assert between.gap == pytest.approx(-0.15, abs=0.05) and between.pvalue < 0.01
    assert between.direction == "lower" and between.verdict.startswith(
        "Rater group g0 gave sensitive = 1 lower values than rater group g1"
    )


@pytest.mark.slow
def test_rater_level_verdict_keeps_its_level_where_the_papers_rule_does_not():
    """200 data sets with no difference between the groups nor from the AI, with and without raters who
    differ in their own A-effect (SD .05): the rater-level verdicts say "evidence" in about 5% (binomial 99%
    range up to 19 of 200); the paper's rule (Welch, one-sided in the observed direction) says it far more
    often with heterogeneous raters."""
    rng = np.random.default_rng(9)
    for heterogeneity in (0.0, 0.05):
        between = against_ai = paper = 0
        for _ in range(200):
            ratings = _ratings(rng, n_raters=(12, 20), n_subjects=30, heterogeneity=heterogeneity)
            result = parity_by_rater_group(
                ratings, "role", ai="ai", n_resamples=10, n_permutations=199, seed=int(rng.integers(1e6))
            )
            pair = result.between_groups[("g0", "g1")]
            between += pair.direction is not None
            against_ai += result.by_group["g0"].direction is not None
            paper += pair.result.direction is not None
        assert between <= 19 and against_ai <= 19, (heterogeneity, between, against_ai)
        if heterogeneity:
            assert paper >= 40, paper  # the reason for the change: the paper's rule overstates evidence here
