"""The worst pairs by a sampled search (``fairness.individual.worst_pairs_sampled``): every listed pair is real
with its exact violation; with many more draws than pairs it finds the exact search's list; its miss probability
is (1 - 1/N)^m and its 95% statement holds over seeds; the audit uses it above its exact limit, for every model."""

import math

import numpy as np
import pandas as pd
import pytest

from fairness.individual import worst_pairs, worst_pairs_sampled
from fairness.model_audit import audit, read_subjects
from tests.fairness.test_model_audit import table


def population(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    e, s = rng.gamma(2.0, 0.1, n), rng.gamma(2.0, 0.1, n)
    return e, s, np.clip(0.6 * e + 0.4 * s + rng.normal(0, 0.1, n), 0, 1)


def test_many_draws_find_the_exact_list_and_each_pair_is_real():
    e, s, r = population(60)
    exact = worst_pairs(e, s, r, alpha=0.6, k=10)
    found = worst_pairs_sampled(e, s, r, alpha=0.6, k=10, n_pairs=200_000, seed=3)
    assert found.miss_probability == pytest.approx((1 - 1 / 1770) ** 200_000, rel=1e-9)  # N = 60 * 59 / 2
    pd.testing.assert_frame_equal(found.pairs, exact)
    few = worst_pairs_sampled(e, s, r, alpha=0.6, k=10, n_pairs=300, seed=4).pairs
    assert len(few) == 10 and not few.duplicated(["id_i", "id_j"]).any()
    for row in few.itertuples():  # the violation D - d of each listed pair, computed here
        i, j = row.id_i, row.id_j
        d = math.sqrt(0.6 * (e[i] - e[j]) ** 2 + 0.4 * (s[i] - s[j]) ** 2)
        assert row.violation == pytest.approx(abs(r[i] - r[j]) - d, abs=1e-15)


@pytest.mark.parametrize("k", [1, 40])
def test_numba_and_numpy_find_the_same_pairs_ties_included(k):
    """The compiled search (chunks cut into parallel runs) lists exactly the NumPy search's pairs and numbers,
    over three chunks (2.5e6 pairs), on a population whose violations tie often (values on a coarse grid)."""
    pytest.importorskip("numba")
    e, s, r = (np.round(v * 4) / 4 for v in population(300, seed=2))
    found = {
        backend: worst_pairs_sampled(e, s, r, alpha=0.5, k=k, n_pairs=2_500_000, seed=5, backend=backend)
        for backend in ("numba", "numpy")
    }
    pd.testing.assert_frame_equal(found["numba"].pairs, found["numpy"].pairs, check_exact=True)
    assert found["numba"].miss_probability == found["numpy"].miss_probability
    assert len(found["numba"].pairs) == k and found["numba"].pairs["violation"].duplicated().any() == (k > 1)


def test_the_worst_drawn_pair_is_in_the_stated_top_share_at_least_95_percent_of_the_time():
    """(1 - q)^m <= 0.05: over 300 seeds the worst drawn pair ranks among the worst q N pairs in at least 95% of
    runs up to the binomial noise (sd 1.3%)."""
    e, s, r = population(200, seed=1)
    n_pairs = 500
    everything = worst_pairs(e, s, r, alpha=0.6, k=200 * 199 // 2)["violation"].to_numpy()
    top_share = worst_pairs_sampled(e, s, r, alpha=0.6, k=1, n_pairs=n_pairs).top_share
    assert top_share == pytest.approx(1 - 0.05 ** (1 / n_pairs))
    threshold = everything[math.floor(top_share * 200 * 199 / 2) - 1]
    hits = [
        worst_pairs_sampled(e, s, r, alpha=0.6, k=1, n_pairs=n_pairs, seed=seed).pairs["violation"].iloc[0] >= threshold
        for seed in range(300)
    ]
    assert np.mean(hits) >= 0.92


def test_the_audit_lists_the_worst_pairs_of_every_model_and_says_how_they_were_searched():
    subjects = read_subjects(table(120))
    exact = audit(subjects, desirable=False, scale=1.0, n_resamples=10)
    assert set(exact.worst) == {"a", "b"} and exact.settings["worst_pairs"] == {"search": "exact over all pairs"}
    sampled = audit(subjects, desirable=False, scale=1.0, n_resamples=10, exact_limit=100)
    search = sampled.settings["worst_pairs"]
    assert set(sampled.worst) == {"a", "b"} and search["search"] == "sampled" and search["n_pairs"] == 2_000_000
    assert search["miss_probability"] == pytest.approx((1 - 1 / 7140) ** 2_000_000, rel=1e-9)
    assert "worse pairs may be missed" in search["statement"]
