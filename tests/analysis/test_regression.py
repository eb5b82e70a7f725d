import numpy as np
import pandas as pd
import pytest
from statsmodels.datasets import longley as longley_data

from analysis.regression import distance_regression, fit_ols, moderation_regression

# NIST StRD Longley certified values, ../shared/test-vectors.md
CERTIFIED = {
    "Intercept": -3482258.63459582,
    "GNPDEFL": 15.0618722713733,
    "GNP": -0.0358191792925910,
    "UNEMP": -2.02022980381683,
    "ARMED": -1.03322686717359,
    "POP": -0.0511041056535807,
    "YEAR": 1829.15146461355,
}


@pytest.fixture
def longley():
    return longley_data.load_pandas().data


def test_longley_certified_coefficients_and_wald(longley):
    res = fit_ols(longley, "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", terms=("GNPDEFL", "GNP"))
    for name, value in CERTIFIED.items():
        assert res.params[name] == pytest.approx(value, rel=1e-7)
    assert res.rsquared == pytest.approx(0.995479004577296, rel=1e-9)
    assert res.wald_joint.f == pytest.approx(0.8032, abs=5e-5)
    assert res.wald_joint.pvalue_f == pytest.approx(0.4776, abs=5e-5)
    assert res.wald_joint.df == (2, 9)
    assert res.wald_joint.chi2 == pytest.approx(2 * 0.8032, abs=2e-4)


def simulated_pairs(seed=0, n_people=150, per=12, a1=0.32, a2=0.61):
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(n_people), per)
    d_traj = rng.integers(1, 7, size=pid.size).astype(float)
    d_aggr = rng.integers(1, 7, size=pid.size).astype(float)
    person = rng.normal(0, 0.3, size=n_people)[pid]
    d = 0.35 + a1 * d_aggr + a2 * d_traj + person + rng.normal(0, 0.5, size=pid.size)
    cond = np.where(pid % 2 == 0, "arrests", "income")
    return pd.DataFrame(
        {
            "participant_id": pid,
            "d_traj": d_traj,
            "d_aggr": d_aggr,
            "d_overall": d,
            "output_distance": 0.01 * d_aggr + 0.05 * d_traj + rng.normal(0, 0.05, size=pid.size),
            "condition": cond,
        }
    )


def test_recovers_weights_and_clustered_se_exceed_plain_with_person_effects():
    pairs = simulated_pairs()
    plain = distance_regression(pairs, "d_overall")
    clustered = distance_regression(pairs, "d_overall", cluster="participant_id")
    assert plain.params["d_aggr"] == pytest.approx(0.32, abs=0.04)
    assert plain.params["d_traj"] == pytest.approx(0.61, abs=0.04)
    np.testing.assert_allclose(plain.params, clustered.params)
    assert clustered.cov_type == "cluster" and plain.cov_type == "nonrobust"
    assert clustered.bse["Intercept"] > plain.bse["Intercept"]
    assert clustered.wald_equal.pvalue_chi2 < 1e-6 and plain.wald_joint.pvalue_chi2 < 1e-10


def test_moderation_interactions_are_zero_when_conditions_share_weights():
    res = moderation_regression(simulated_pairs(seed=1), "d_overall", moderator_level="arrests")
    assert set(res.params.index) >= {"C", "d_aggr:C", "d_traj:C"}
    assert abs(res.params["d_traj:C"]) < 4 * res.bse["d_traj:C"]
    assert "OLS Regression Results" in res.summary()
