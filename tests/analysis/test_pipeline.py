"""Proof that the pipeline recovers the truth (issue: 150 simulated participants, a1 = .32, a2 = .61)."""

import json

import pytest

from analysis.pipeline import alpha_from, run_pipeline, stars
from surveys.export import export_tables
from surveys.services import study_load
from surveys.simulate import simulate_participants
from surveys.simulation import GenerativeModel
from tests.conftest import DEMO_FILE


def test_paper_normalisation():
    """0.6114 / (0.6114 + 0.3182) = 0.6577 (paper, 'Computing EaIF')."""
    assert alpha_from(0.3182, 0.6114) == pytest.approx(0.6577, abs=5e-5)
    assert alpha_from(0.3580, 0.5454) == pytest.approx(0.6037, abs=5e-5)  # CLUE, Table 7's 0.6037


def test_stars():
    assert [stars(p) for p in (0.0001, 0.005, 0.03, 0.2)] == ["***", "**", "*", ""]


@pytest.fixture
def study_export(db):
    study_load(spec=json.loads(DEMO_FILE.read_text()))
    simulate_participants("effort-demo", n=150, seed=1, model=GenerativeModel(a1=0.32, a2=0.61))
    return export_tables("effort-demo")


def test_pipeline_intervals_contain_the_generating_weights(study_export):
    result = run_pipeline(study_export.pairs, study_export.participants, seed=1, n_resamples=1000)
    assert result.exclusions["excluded"] >= 0 and result.exclusions["included"] > 100
    t5 = result.table5
    for cond in ("arrests", "income"):
        rows = t5[(t5["model"] == cond) & (t5["outcome"] == "d") & (t5["se"] == "clustered")].set_index("term")
        assert rows.loc["d_aggr", "ci_low"] <= 0.32 <= rows.loc["d_aggr", "ci_high"]
        assert rows.loc["d_traj", "ci_low"] <= 0.61 <= rows.loc["d_traj", "ci_high"]
    for cal in result.calibrations:
        assert cal.ci[0] <= 0.61 / 0.93 <= cal.ci[1]
    # trajectory beats aggregate, as in the paper
    t3 = result.table3
    assert (t3["statistic"] > 0).all() and (t3["pvalue_bonferroni"] < 0.05).all()
    assert (result.table4["ci_low"] > 0).all()
    assert set(result.table2["coefficient"]) == {
        "r_aggr_input",
        "r_traj_input",
        "r_aggr_traj",
        "r_aggr_output",
        "r_traj_output",
    }
    assert (result.factor_shares["trajectory"] > result.factor_shares["aggregate"]).all()
