import numpy as np
import pandas as pd
import pytest

from fairness.group import effort_aware_parity, effort_bins, parity_ratio, parity_table


def test_parity_ratio_by_hand_and_min_size():
    risk = [0.2] * 10 + [0.4] * 10 + [0.9] * 3
    groups = ["a"] * 10 + ["b"] * 10 + ["c"] * 3
    assert parity_ratio(risk, groups) == pytest.approx(0.5)  # c has 3 < 10 members
    assert parity_ratio(risk, groups, min_size=3) == pytest.approx(0.2 / 0.9)
    assert np.isnan(parity_ratio(risk[:10], groups[:10]))


def test_bins_of_width_point_one():
    assert effort_bins([0.0, 0.05, 0.1, 0.19, 0.95, 1.0]).tolist() == [0.0, 0.0, 0.1, 0.1, 0.9, 0.9]


def test_effort_aware_parity_matches_manual_groupby():
    rng = np.random.default_rng(0)
    n = 3000
    effort = rng.uniform(0, 1, n)
    group = rng.choice(["x", "y", "z"], n, p=[0.5, 0.4, 0.1])
    risk = np.clip(0.5 - 0.3 * effort + 0.1 * (group == "y") + rng.normal(0, 0.05, n), 0.01, 1)
    res = effort_aware_parity(effort, risk, group)
    frame = pd.DataFrame({"bin": np.floor(effort * 10) / 10, "g": group, "r": risk})
    for low, part in frame.groupby("bin"):
        means = part.groupby("g")["r"].agg(["mean", "size"])
        means = means[means["size"] >= 10]["mean"]
        expected = means.min() / means.max()
        assert res.by_bin.set_index("bin_low").loc[round(low, 10), "parity"] == pytest.approx(expected)
    overall = frame.groupby("g")["r"].mean()
    assert res.ratio() == pytest.approx(overall.min() / overall.max())


def test_parity_table_shape():
    rng = np.random.default_rng(1)
    e = rng.uniform(0, 1, 200)
    table = parity_table(
        e,
        {"m1": rng.uniform(0, 1, 200), "m2": rng.uniform(0, 1, 200)},
        {"sex": rng.choice(["F", "M"], 200), "race": rng.choice(["A", "B"], 200)},
    )
    assert list(table.index) == ["m1", "m2"] and list(table.columns) == ["sex", "race"]
    assert table.stack().between(0, 1).all()


def test_parity_refuses_nan_risk_scores():
    effort = np.linspace(0, 1, 40)
    risk = np.full(40, 0.3)
    risk[[3, 17]] = np.nan
    with pytest.raises(ValueError, match=r"risk scores contain 2 NaN value\(s\) \(first at position\(s\) \[3, 17\]\)"):
        effort_aware_parity(effort, risk, ["a", "b"] * 20)
