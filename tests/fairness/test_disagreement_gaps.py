"""The disagreement notions' gap intervals and the signed differences (fairness.disagreement.gap_interval);
their coverage and the "no gap" test's size are measured by the registry (analysis.coverage,
simulation.coverage_studies; tests/analysis/test_coverage_registry.py)."""

import numpy as np
import pytest

from fairness.disagreement import disagreement_notions, gap_interval
from simulation.coverage_studies import DIFFERENT, disagreement_records


def test_no_gap_test_finds_a_real_gap():
    rng = np.random.default_rng(8)
    found = 0
    for study in range(40):
        g, k, s = disagreement_records(rng, *DIFFERENT, 1500)
        found += (
            disagreement_notions(g, k, s, labels=(0, 1), n_permutations=199, seed=study).notions["AE"].pvalue < 0.05
        )
    assert found >= 30  # AE's true gap is .07 (DR_m .24, .30, .31)


def test_gap_interval_reaches_zero_and_projects_the_pairs():
    point = np.array([[0.30], [0.32], [0.31]])
    resampled = point + np.random.default_rng(0).normal(0, 0.02, (500, 3, 1))
    (low, high), rows = gap_interval(point, resampled, 0.95)
    assert low == 0.0  # every pair's interval holds 0
    assert high == pytest.approx(max(max(abs(r[4]), abs(r[5])) for r in rows))
    assert [(r[1], r[2]) for r in rows] == [(0, 1), (0, 2), (1, 2)]
    assert rows[0][3] == pytest.approx(-0.02)


def test_signed_differences_table():
    rng = np.random.default_rng(3)
    g, k, s = disagreement_records(rng, *DIFFERENT, 300)
    notions = disagreement_notions(g, k, s, labels=(0, 1), n_resamples=200)
    table = notions.differences
    assert set(table["notion"]) == {"CA", "AE", "EO", "PE", "OMR"}
    ae = table[table["notion"] == "AE"]
    assert len(ae) == 3 and ae["label"].isna().all()  # AE does not depend on the label
    assert (table["ci_low"] <= table["difference"]).all() and (table["difference"] <= table["ci_high"]).all()
    rates = notions.dr_by_group
    assert ae.iloc[0]["difference"] == pytest.approx(rates["g0"] - rates["g1"])
