"""fairness.task_blocks.in_group_gaps: rater group x subject group interaction (in-group bias) with a
rater-level permutation test; by hand, its level and power, and its CIs' coverage by simulation."""

import numpy as np
import pandas as pd
import pytest

from fairness.rater_groups import ALL
from fairness.task_blocks import Options, Tests, in_group_gaps, in_group_rates

SUBJECTS = pd.DataFrame({"subject": [f"s{i}" for i in range(20)], "group:race": ["A"] * 10 + ["B"] * 10})
OPTS = Options(n_resamples=400, n_permutations=400, seed=1)


def simulate(rng, *, raters=40, bias=0.0, noise=1.0):
    """Ratings of 20 subjects (10 per race) by raters of two groups A and B (half each): rater leniency
    N(0, 1), group A rates 0.3 higher overall, race B subjects 0.5 higher for everyone, and raters rate
    their own race's subjects ``bias`` lower (in-group bias), plus N(0, noise^2) per answer."""
    rater = np.repeat(np.arange(raters), len(SUBJECTS))
    subject = np.tile(np.arange(len(SUBJECTS)), raters)
    rater_race = np.where(np.arange(raters) % 2 == 0, "A", "B")[rater]
    subject_race = SUBJECTS["group:race"].to_numpy()[subject]
    rating = (
        rng.normal(0, 1, raters)[rater]
        + 0.3 * (rater_race == "A")
        + 0.5 * (subject_race == "B")
        - bias * (rater_race == subject_race)
        + rng.normal(0, noise, rater.size)
    )
    return pd.DataFrame(
        {
            "participant_id": rater,
            "rater_group": rater_race,
            "subject": SUBJECTS["subject"].to_numpy()[subject],
            "rating": rating,
        }
    )


def gaps_and_tests(frame: pd.DataFrame, value: str = "rating") -> tuple[pd.DataFrame, list[dict]]:
    """The in-group table and the test rows it adds to a block's tests table."""
    tests = Tests()
    table = in_group_gaps(frame, SUBJECTS, value, OPTS, tests)
    return table, tests.rows


def test_gaps_by_hand():
    """Two raters per group; rater 1 (A) rates A subjects 2 and B subjects 1: gap -1 ... by hand."""
    rows = [
        (1, "A", "s0", 2.0), (1, "A", "s10", 1.0),
        (2, "A", "s1", 4.0), (2, "A", "s11", 1.0),
        (3, "B", "s0", 1.0), (3, "B", "s10", 3.0), (3, "B", "s12", 5.0),
        (4, "B", "s2", 2.0), (4, "B", "s13", 2.0),
        (5, "B", "s3", 2.0),  # answered only race A subjects: no gap
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["participant_id", "rater_group", "subject", "rating"])
    table, tests = gaps_and_tests(frame)
    gaps = table.set_index("rater_group")["gap"]
    # gap = mean on race A subjects - mean on the rest: rater 1: 1, rater 2: 3, rater 3: 1 - 4 = -3, rater 4: 0
    assert gaps["A"] == pytest.approx(2.0) and gaps["B"] == pytest.approx(-1.5)
    assert gaps[ALL] == pytest.approx(0.25)
    assert table.set_index("rater_group")["n_raters"].to_dict() == {ALL: 4, "A": 2, "B": 2}
    assert tests[0]["measure"] == "in-group: rating" and tests[0]["difference"] == pytest.approx(3.5)
    assert (tests[0]["subject_attribute"], tests[0]["subject_group"]) == ("race", "A")
    # 4 raters, 2 per group: 6 assignments, of which those splitting {1, 2} from {3, 4} give the largest
    # spread (2 of 6), so p = (1 + about B/3) / (1 + B).
    assert tests[0]["pvalue"] == pytest.approx(1 / 3, abs=0.06)


def test_gaps_are_each_raters_mean_inside_minus_outside():
    """Against pandas' pivot table of every rater's means (the subject's race A or not), on simulated ratings
    with missing values: a rater whose race A ratings are all missing, or who rated one side only, has no gap."""
    frame = simulate(np.random.default_rng(5), raters=12)
    frame.loc[frame.sample(frac=0.2, random_state=1).index, "rating"] = np.nan
    frame.loc[(frame["participant_id"] == 3) & frame["subject"].isin(SUBJECTS["subject"][:10]), "rating"] = np.nan
    frame = frame[~((frame["participant_id"] == 4) & frame["subject"].isin(SUBJECTS["subject"][10:]))]
    race = frame["subject"].map(SUBJECTS.set_index("subject")["group:race"])
    means = frame.assign(inside=race == "A").pivot_table(index="participant_id", columns="inside", values="rating")
    gaps = (means[True] - means[False]).dropna()
    groups = frame.groupby("participant_id")["rater_group"].first()[gaps.index]
    table = gaps_and_tests(frame)[0].set_index("rater_group")
    assert 3 not in gaps.index and 4 not in gaps.index and table.loc[ALL, "n_raters"] == 10
    assert table.loc[ALL, "gap"] == pytest.approx(gaps.mean(), rel=1e-12)
    for group in ("A", "B"):
        assert table.loc[group, "gap"] == pytest.approx(gaps[groups == group].mean(), rel=1e-12)


@pytest.mark.slow
def test_level_of_the_rater_level_test():
    """200 null data sets (rater and subject-group main effects, no interaction; 40 raters x 20 subjects):
    the permutation test rejects at 5% in 2-8% of them."""
    rng = np.random.default_rng(2)
    pvalues = [gaps_and_tests(simulate(rng))[1][0]["pvalue"] for _ in range(200)]
    assert 0.02 <= np.mean(np.array(pvalues) <= 0.05) <= 0.08


@pytest.mark.slow
def test_finds_in_group_bias_and_its_intervals_cover():
    """In-group bias 0.5: group A's gap (race A - race B) is -0.5 - 0.5 = -1.0, group B's +0.5 - 0.5 = 0;
    over 200 studies the 95% CIs of each group's gap cover the truth in >= 93% and the test finds it."""
    rng = np.random.default_rng(3)
    truth = {"A": -1.0, "B": 0.0, ALL: -0.5}
    covered, found, estimates = {g: 0 for g in truth}, 0, []
    for _ in range(200):
        table, tests = gaps_and_tests(simulate(rng, bias=0.5))
        rows = table.set_index("rater_group")
        for group, value in truth.items():
            covered[group] += rows.loc[group, "ci_low"] <= value <= rows.loc[group, "ci_high"]
        found += tests[0]["pvalue"] <= 0.05
        estimates.append(rows.loc["A", "gap"] - rows.loc["B", "gap"])
    assert min(covered.values()) / 200 >= 0.93, covered
    assert found / 200 >= 0.8
    assert np.mean(estimates) == pytest.approx(-1.0, abs=0.05)


def test_rates_by_hand():
    """The figure's cells on the by-hand data: each rater's mean per subject race, averaged per rater group."""
    rows = [
        (1, "A", "s0", 2.0), (1, "A", "s1", 4.0), (1, "A", "s10", 1.0),
        (2, "A", "s11", 5.0),
        (3, "B", "s0", 1.0), (3, "B", "s10", 3.0), (3, "B", "s12", 5.0),
        (4, "B", "s2", 2.0), (4, "B", None, 9.0),  # a subject without a race counts nowhere
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["participant_id", "rater_group", "subject", "rating"])
    table = in_group_rates(frame, SUBJECTS, "rating").set_index(["subject_group", "rater_group"])
    # race A subjects: rater 1 (2 + 4) / 2 = 3, rater 3: 1, rater 4: 2; race B: rater 1: 1, 2: 5, 3: (3 + 5) / 2 = 4
    expected = {("A", "A"): (3.0, 1), ("A", "B"): (1.5, 2), ("A", ALL): (2.0, 3)}
    expected |= {("B", "A"): (3.0, 2), ("B", "B"): (4.0, 1), ("B", ALL): (10 / 3, 3)}
    for cell, (mean, n) in expected.items():
        assert table.loc[cell, "mean"] == pytest.approx(mean) and table.loc[cell, "n_raters"] == n, cell
    assert np.isnan(table.loc[("A", "A"), "ci_low"])  # one rater: no interval
    low, high = table.loc[("A", "B"), ["ci_low", "ci_high"]]  # raters' means 1 and 2: 1.5 -/+ t_1 0.5
    assert (low, high) == pytest.approx((1.5 - 12.7062 * 0.5, 1.5 + 12.7062 * 0.5), abs=1e-3)
    assert set(table["measure"]) == {"rating"} and set(table["subject_attribute"]) == {"race"}


@pytest.mark.slow
def test_rates_intervals_cover():
    """In-group bias 0.5 (simulate): the true cell means are 0.3 - 0.5 = -0.2 (A raters, race A), 0.3 + 0.5 = 0.8
    (A, B), 0 (B, A), 0.5 - 0.5 = 0 (B, B); over 200 studies each 95% CI covers its cell in >= 93%."""
    rng = np.random.default_rng(4)
    truth = {("A", "A"): -0.2, ("B", "A"): 0.8, ("A", "B"): 0.0, ("B", "B"): 0.0}  # (subject race, rater group)
    covered = dict.fromkeys(truth, 0)
    for _ in range(200):
        table = in_group_rates(simulate(rng, bias=0.5), SUBJECTS, "rating").set_index(["subject_group", "rater_group"])
        for cell, value in truth.items():
            covered[cell] += table.loc[cell, "ci_low"] <= value <= table.loc[cell, "ci_high"]
    assert min(covered.values()) / 200 >= 0.93, covered


def test_rates_over_stimulus_blocks_by_hand():
    """Raters nested in stimulus blocks (raters 1-2 answer s0, s1, s10; raters 3-4 s2, s3, s11): the
    generalising interval is the t interval over the blocks' means of the raters' means; with every rater in
    a block of its own, or one block, there is none."""
    rows = [
        (1, "A", "s0", 1.0), (1, "A", "s1", 3.0), (1, "A", "s10", 0.0),
        (2, "A", "s0", 4.0), (2, "A", "s1", 4.0), (2, "A", "s10", 0.0),
        (3, "B", "s2", 6.0), (3, "B", "s3", 8.0), (3, "B", "s11", 0.0),
        (4, "B", "s2", 5.0), (4, "B", "s3", 5.0), (4, "B", "s11", 0.0),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["participant_id", "rater_group", "subject", "rating"])
    table = in_group_rates(frame, SUBJECTS, "rating").set_index(["subject_group", "rater_group"])
    # race A subjects: raters' means 2, 4 (block 1: 3) and 7, 5 (block 2: 6); over blocks 4.5 -/+ t_1 * 1.5
    row = table.loc[("A", ALL)]
    assert row["n_blocks"] == 2 and row["mean"] == pytest.approx(4.5)
    assert (row["ci_blocks_low"], row["ci_blocks_high"]) == pytest.approx(
        (4.5 - 12.7062 * 1.5, 4.5 + 12.7062 * 1.5), abs=1e-3
    )
    sd = np.std([2, 4, 7, 5], ddof=1) / 2  # over raters: 4.5 -/+ t_3 sd / sqrt(4)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((4.5 - 3.18245 * sd, 4.5 + 3.18245 * sd), abs=1e-3)
    assert np.isnan(table.loc[("A", "A"), "ci_blocks_low"])  # rater group A: one block
    alone = frame[frame["participant_id"].isin([1, 3])]  # two blocks of one rater each: blocks are not a unit
    assert in_group_rates(alone, SUBJECTS, "rating")["ci_blocks_low"].isna().all()
