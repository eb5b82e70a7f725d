"""analysis.sensitivity: estimates with all participants and without the flagged ones, matched row by
row, and the conclusion-change rule on hand-made tables."""

import numpy as np
import pandas as pd

from analysis.sensitivity import COLUMNS, Sensitivity, compare_estimates, sensitivity_of


def test_rows_are_matched_by_their_keys_and_each_rule_fires():
    all_ = pd.DataFrame(
        {
            "rater_group": ["all", "nurse", "judge", "clerk"],
            "mean": [0.40, 0.30, 0.50, 0.20],
            "ci_low": [0.35, 0.20, 0.40, 0.10],
            "ci_high": [0.45, 0.40, 0.60, 0.30],
        }
    )
    without = pd.DataFrame({"rater_group": ["judge", "all", "nurse"], "mean": [0.55, 0.44, 0.45]})
    table = compare_estimates(all_, without, estimate="mean", prefix="b1 disagreement_rate")
    assert list(table.columns) == COLUMNS
    rows = table.set_index("estimate")
    assert rows.loc["b1 disagreement_rate: rater_group=all", "without_flagged"] == 0.44
    assert not rows.loc["b1 disagreement_rate: rater_group=all", "conclusion_changes"]  # 0.44 in [0.35, 0.45]
    assert not rows.loc["b1 disagreement_rate: rater_group=judge", "conclusion_changes"]
    nurse = rows.loc["b1 disagreement_rate: rater_group=nurse"]
    assert nurse["conclusion_changes"] and nurse["reason"] == "outside the 95% CI with all participants"
    clerk = rows.loc["b1 disagreement_rate: rater_group=clerk"]  # too few without the flagged
    assert np.isnan(clerk["without_flagged"]) and clerk["reason"] == "estimated in one analysis only"


def test_significance_and_verdict_changes_and_the_estimates_own_ci():
    all_ = pd.DataFrame(
        {
            "subject_attribute": ["race", "sex"],
            "R0": ["nurse", "nurse"],
            "R1": ["AI", "AI"],
            "gap": [0.10, 0.05],
            "gap_ci_low": [0.0, -0.2],
            "gap_ci_high": [0.2, 0.3],
            "pvalue": [0.03, 0.40],
            "verdict": ["favours", "no difference"],
        }
    )
    without = all_.assign(gap=[0.12, 0.06], pvalue=[0.07, 0.30], verdict=["no difference", "favours"])
    table = compare_estimates(all_, without, estimate="gap", prefix="r parity")
    assert table["reason"].tolist() == ["significance at .05 changes", "verdict changes"]
    assert table["estimate"][0] == "r parity: subject_attribute=race, R0=nurse, R1=AI"


def test_identical_analyses_change_nothing_and_the_sentence_counts():
    frame = pd.DataFrame({"condition": ["c1"], "alpha": [0.6], "ci_low": [0.5], "ci_high": [0.7]})
    table = compare_estimates(frame, frame, estimate="alpha", prefix="alpha")
    assert table["all"].tolist() == table["without_flagged"].tolist() == [0.6]
    assert not table["conclusion_changes"].any()
    assert Sensitivity(table, 0).sentence().startswith("No participant was flagged")
    changed = sensitivity_of([table.assign(conclusion_changes=True), table.iloc[0:0]], 2)
    assert len(changed.table) == 1
    assert changed.sentence() == (
        "Without the 2 participants flagged for answer quality, 1 of 1 headline estimate changes its conclusion."
    )
