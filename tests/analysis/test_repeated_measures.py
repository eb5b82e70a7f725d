"""Participant-level inference, pingouin measures and the sample selection, against published values
and independent computations."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from analysis.agreement import likert_icc
from analysis.correlations import adjust_pvalues
from analysis.mixed_model import crossed_mixed_model
from analysis.repeated_measures import (
    bootstrap_pvalue,
    cluster_bootstrap_ols,
    participant_level_table,
    participant_slope_effect,
    repeated_measures_correlation,
    two_way_bootstrap_ols,
)
from analysis.sample import select_participants

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges, and their published ICCs (Table 4).
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
SHROUT_FLEISS_ICC = {
    "ICC(1,1)": 0.17,
    "ICC(A,1)": 0.29,
    "ICC(C,1)": 0.71,
    "ICC(1,k)": 0.44,
    "ICC(A,k)": 0.62,
    "ICC(C,k)": 0.91,
}


def test_icc_reproduces_shrout_and_fleiss():
    long = pd.DataFrame(
        [(f"t{t}", f"j{j}", float(SHROUT_FLEISS[t, j])) for t in range(6) for j in range(4)],
        columns=["stimulus", "participant_id", "d_traj"],
    ).assign(condition="c", d_aggr=lambda f: f["d_traj"], d_overall=lambda f: f["d_traj"])
    table = likert_icc(long)
    rows = table[table["measure"] == "trajectory d_E"].set_index("type")
    for kind, published in SHROUT_FLEISS_ICC.items():
        assert rows.loc[kind, "icc"] == pytest.approx(published, abs=0.005), kind
    assert (rows["n_targets"] == 6).all() and (rows["n_raters"] == 4).all()


def test_icc_uses_only_participants_who_rated_every_stimulus():
    long = pd.DataFrame(
        [(f"t{t}", f"j{j}", float(SHROUT_FLEISS[t, j])) for t in range(6) for j in range(4)],
        columns=["stimulus", "participant_id", "d_traj"],
    ).assign(condition="c", d_aggr=lambda f: f["d_traj"], d_overall=lambda f: f["d_traj"])
    partial = long[~((long["participant_id"] == "j3") & (long["stimulus"] == "t0"))]
    rows = likert_icc(partial)
    assert (rows["n_raters"] == 3).all()


def test_rm_corr_reproduces_bakdash_and_marusich():
    """Bakdash & Marusich (2017), Bland & Altman's (1995) pH / PaCO2 data: r_rm = -0.507,
    df = 38, p = 0.0008, 95% CI [-0.71, -0.23]."""
    import pingouin as pg  # here: pingouin loads matplotlib and xarray (each test process collects this module)

    res = repeated_measures_correlation(pg.read_dataset("rm_corr"), "pH", "PacO2", "Subject")
    assert res["r"] == pytest.approx(-0.507, abs=5e-4)
    assert res["dof"] == 38 and res["pvalue"] == pytest.approx(0.0008, abs=5e-5)
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((-0.71, -0.23), abs=0.005)


def test_rm_corr_equals_the_ancova_by_hand():
    """r_rm = sign(b) sqrt(SS_x / (SS_x + SS_res)) of the ANCOVA y ~ C(subject) + x (statsmodels)."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"participant_id": np.repeat(range(8), 5), "x": rng.normal(size=40)})
    frame["y"] = 0.5 * frame["x"] + np.repeat(rng.normal(0, 2, 8), 5) + rng.normal(size=40)
    fit = smf.ols("y ~ C(participant_id) + x", frame).fit()
    ss = anova_lm(fit, typ=2)
    expected = np.sign(fit.params["x"]) * np.sqrt(
        ss.loc["x", "sum_sq"] / (ss.loc["x", "sum_sq"] + ss.loc["Residual", "sum_sq"])
    )
    res = repeated_measures_correlation(frame, "x", "y")
    assert res["r"] == pytest.approx(expected, abs=1e-10) and res["dof"] == 40 - 8 - 1


def test_two_stage_effect_by_hand():
    """Two participants' exact weights: per-participant OLS recovers them; t and d from the
    differences computed directly."""
    rng = np.random.default_rng(5)
    rows, diffs = [], []
    for pid in range(6):
        a1, a2 = 0.3, 0.5 + 0.05 * pid
        diffs.append(a2 - a1)
        x = rng.integers(1, 8, size=(12, 2)).astype(float)
        rows.append(
            pd.DataFrame(
                {
                    "participant_id": pid,
                    "d_aggr": x[:, 0],
                    "d_traj": x[:, 1],
                    "d_overall": 1 + a1 * x[:, 0] + a2 * x[:, 1],
                }
            )
        )
    constant = pd.DataFrame({"participant_id": 99, "d_aggr": 4.0, "d_traj": np.arange(12.0), "d_overall": 1.0})
    res = participant_slope_effect(pd.concat([*rows, constant]), "d_overall")
    assert res["participants_skipped"] == 1 and res["n_participants"] == 6  # singular design left out
    diffs = np.array(diffs)
    assert res["mean_difference"] == pytest.approx(diffs.mean())
    assert res["statistic"] == pytest.approx(diffs.mean() / (diffs.std(ddof=1) / np.sqrt(6)))
    assert res["cohen_d"] == pytest.approx(diffs.mean() / diffs.std(ddof=1))
    se = np.sqrt(1 / 6 + res["cohen_d"] ** 2 / 12)  # Hedges & Olkin, one sample
    assert res["cohen_d_ci_high"] - res["cohen_d_ci_low"] == pytest.approx(2 * 2.5706 * se, rel=1e-3)  # t(5) 97.5%


def test_cluster_bootstrap_matches_explicit_resampling():
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"g": np.repeat(range(10), 4), "x": rng.normal(size=40)})
    frame["y"] = 2 * frame["x"] + rng.normal(size=40)
    x = np.column_stack([np.ones(40), frame["x"]])
    betas = cluster_bootstrap_ols(x, frame["y"], frame["g"], n_resamples=5, seed=3)
    draws = np.random.default_rng(3).integers(0, 10, size=(5, 10))
    for b in range(5):
        rows = pd.concat([frame[frame["g"] == g] for g in draws[b]])
        explicit = np.linalg.lstsq(np.column_stack([np.ones(len(rows)), rows["x"]]), rows["y"], rcond=None)[0]
        np.testing.assert_allclose(betas[b], explicit, rtol=1e-10)


def test_two_way_bootstrap_matches_explicit_pigeonhole_resampling():
    """Owen's (2007) pigeonhole resample built literally: every drawn participant's ratings of every
    drawn stimulus (a participant or stimulus drawn twice appears twice), then OLS by least squares."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"p": np.repeat(range(7), 5), "s": np.tile(range(5), 7), "x": rng.normal(size=35)})
    frame["y"] = 1 + 2 * frame["x"] + rng.normal(size=35)
    x = np.column_stack([np.ones(35), frame["x"]])
    betas = two_way_bootstrap_ols(x, frame["y"], frame["p"], frame["s"], n_resamples=6, seed=4)
    draws = np.random.default_rng(4)
    people, stimuli = draws.integers(0, 7, size=(6, 7)), draws.integers(0, 5, size=(6, 5))
    for b in range(6):
        rows = pd.concat([frame[(frame["p"] == p) & (frame["s"] == s)] for p in people[b] for s in stimuli[b]])
        explicit = np.linalg.lstsq(np.column_stack([np.ones(len(rows)), rows["x"]]), rows["y"], rcond=None)[0]
        np.testing.assert_allclose(betas[b], explicit, rtol=1e-10)


def test_two_way_bootstrap_sees_stimulus_variance_that_participant_resampling_misses():
    """Stimulus effects shared by every participant: only the two-way bootstrap sees their variance."""
    rng = np.random.default_rng(9)
    n_p, n_s = 40, 8
    frame = pd.DataFrame({"p": np.repeat(range(n_p), n_s), "s": np.tile(range(n_s), n_p)})
    frame["x"] = rng.normal(size=len(frame))
    slope_by_stimulus = rng.normal(0, 1.0, n_s)  # each stimulus its own slope: big stimulus variance
    frame["y"] = (1 + slope_by_stimulus[frame["s"]]) * frame["x"] + rng.normal(0, 0.3, len(frame))
    x = np.column_stack([np.ones(len(frame)), frame["x"]])
    two = two_way_bootstrap_ols(x, frame["y"], frame["p"], frame["s"], n_resamples=400, seed=1)[:, 1]
    one = cluster_bootstrap_ols(x, frame["y"], frame["p"], n_resamples=400, seed=1)[:, 1]
    assert two.std() > 3 * one.std()
    # the slope's spread over stimuli / sqrt(8) is what the two-way SE estimates (pigeonhole: a bit more)
    assert two.std() == pytest.approx(slope_by_stimulus.std() / np.sqrt(n_s), rel=0.5)


def test_stratified_cluster_bootstrap_keeps_each_stratum_size():
    frame = pd.DataFrame({"g": np.repeat(range(6), 2), "s": np.repeat(["a", "a", "b", "b", "b", "b"], 2)})
    x = np.column_stack([np.ones(12), (frame["s"] == "b").astype(float)])
    y = np.where(frame["s"] == "b", 1.0, 0.0) + np.arange(12) * 0.01
    betas = cluster_bootstrap_ols(x, y, frame["g"], strata=frame["s"], n_resamples=200, seed=1)
    assert not np.isnan(betas).any()  # never a resample without one of the strata


def test_bootstrap_pvalue_is_centred():
    dist = np.random.default_rng(0).normal(1.0, 1.0, 9999)
    assert bootstrap_pvalue(dist, 1.0) == pytest.approx(2 * 0.1587, abs=0.01)  # |z| >= 1
    assert bootstrap_pvalue(dist, 1.0, null=1.0) == pytest.approx(1.0)


def test_family_adjustment_is_holm_over_the_family_only():
    rows = [
        {"pvalue": 0.01, "in_family": True},
        {"pvalue": 0.04, "in_family": True},
        {"pvalue": 0.03, "in_family": True},
        {"pvalue": 0.001, "in_family": False},
    ]
    table = participant_level_table(rows)
    np.testing.assert_allclose(table["pvalue_holm"][:3], [0.03, 0.06, 0.06])
    assert np.isnan(table["pvalue_holm"][3]) and list(table["family"]) == ["headline"] * 3 + [""]
    np.testing.assert_allclose(adjust_pvalues([0.01, np.nan], method="bonferroni"), [0.01, np.nan])


def _crossed(seed: int, var_stimulus: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n, j = 40, 12
    pid, sid = np.repeat(np.arange(n), j), np.tile(np.arange(j), n)
    d_aggr = rng.integers(1, 8, j)[sid] + rng.normal(0, 1, pid.size)
    d_traj = rng.integers(1, 8, j)[sid] + rng.normal(0, 1, pid.size)
    d = 0.3 * d_aggr + 0.6 * d_traj + rng.normal(0, 0.7, n)[pid] + rng.normal(0, var_stimulus**0.5, j)[sid]
    return pd.DataFrame(
        {
            "participant_id": pid,
            "stimulus": sid,
            "d_aggr": d_aggr,
            "d_traj": d_traj,
            "d_overall": d + rng.normal(0, 0.5, pid.size),
        }
    )


def test_mixed_model_recovers_weights_and_variance_components():
    """Simulated crossed data (participant SD 0.7, stimulus SD 1, residual SD 0.5; a1 = .3, a2 = .6)."""
    frame = _crossed(8, var_stimulus=1.0)
    fit = crossed_mixed_model(frame, "d_overall ~ d_aggr + d_traj")
    assert fit.converged and fit.n_participants == 40 and fit.n_stimuli == 12 and fit.note == ""
    assert fit.contrast.confidence_interval[0] <= 0.3 <= fit.contrast.confidence_interval[1]
    assert fit.contrast.estimate == pytest.approx(fit.params["d_traj"] - fit.params["d_aggr"])
    for term, truth in (("d_aggr", 0.3), ("d_traj", 0.6)):
        assert fit.conf_int.loc[term].iloc[0] <= truth <= fit.conf_int.loc[term].iloc[1]
    assert fit.variance_components["participant"] == pytest.approx(0.49, rel=0.5)
    assert fit.variance_components["residual"] == pytest.approx(0.25, rel=0.2)
    assert fit.variance_components["stimulus"] > 0.1


def test_mixed_model_gives_a_note_instead_of_crashing():
    frame = _crossed(8, var_stimulus=0.0).head(24)  # two participants only
    fit = crossed_mixed_model(frame, "d_overall ~ d_aggr + d_traj")
    assert not fit.converged and "at least 3 participants" in fit.note and fit.contrast is None
    constant = _crossed(9, 0.0).assign(d_traj=1.0)  # singular fixed-effects design
    fit = crossed_mixed_model(constant, "d_overall ~ d_aggr + d_traj")
    assert not fit.converged and fit.note


def test_sample_keeps_completed_non_excluded_and_counts_the_rest():
    pairs = pd.DataFrame({"participant_id": ["a", "a", "b", "c", "d"], "excluded": [0, 0, 1, 0, 0]})
    participants = pd.DataFrame(
        {
            "participant_id": ["a", "b", "c", "d", "e"],
            "status": ["completed", "completed", "active", "completed", "withdrawn"],
            "excluded": [0, 1, 0, 0, 0],
        }
    )
    sample = select_participants(pairs, participants)
    assert set(sample.pairs["participant_id"]) == {"a", "d"} and sample.included == 2
    assert sample.dropped == {
        "excluded (failed the attention checks)": 1,
        "not completed (active)": 1,
        "not completed (withdrawn)": 1,
    }
    assert "dropped 3" in sample.sentence()
    wider = select_participants(pairs, participants, include_incomplete=True)
    assert set(wider.pairs["participant_id"]) == {"a", "c", "d"}
    assert wider.dropped == {"excluded (failed the attention checks)": 1}
    with pytest.raises(ValueError, match="not in the participants table"):
        select_participants(pairs, participants[participants["participant_id"] != "a"])
