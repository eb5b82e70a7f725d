"""fairness.individual.lipschitz_violations: the share of subject pairs whose scores differ by more than L
times their distance under a metric learned from people, checked by hand, against scipy's Mahalanobis
distances over all pairs (more than one block of rows), and by properties (L large or 0, order, draws)."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist

from fairness.individual import BLOCK, lipschitz_violations


@dataclass
class Metric:
    """A learned metric as lipschitz_violations sees it: M over the columns as given (no scaling)."""

    matrix: np.ndarray
    draws: list = field(default_factory=list)

    def scaled(self, subjects: pd.DataFrame) -> np.ndarray:
        return subjects.to_numpy(dtype=float)


def test_a_hand_worked_case():
    subjects = pd.DataFrame({"x": [0.0, 1.0, 3.0]}, index=["a", "b", "c"])
    scores = pd.Series({"c": 2.5, "a": 0.0, "b": 2.0})  # any order: matched by id
    # pairs: a-b |2 - 0| = 2 > 1 (excess 1); a-c 2.5 <= 3; b-c 0.5 <= 2
    result = lipschitz_violations(scores, subjects, Metric(np.eye(1)))
    assert result.statistic == pytest.approx(1 / 3) and result.n_pairs == 3 and result.confidence_interval is None
    assert result.worst.to_dict("records") == [
        {"id_i": "a", "id_j": "b", "score_difference": 2.0, "distance": 1.0, "excess": pytest.approx(1.0)}
    ]
    # M = 4 doubles every distance: a-b is at distance 2, no longer a violation
    assert lipschitz_violations(scores, subjects, Metric(4 * np.eye(1))).statistic == 0


@pytest.mark.parametrize("rank", [3, 1])
def test_equals_scipy_mahalanobis_over_all_pairs(rank):
    rng = np.random.default_rng(rank)
    n = BLOCK + 60  # two blocks of rows
    subjects = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x", "y", "z"])
    scores = pd.Series(rng.normal(scale=2, size=n))
    root = rng.normal(size=(rank, 3))
    matrix = root.T @ root  # positive semi-definite, singular when rank < 3
    distance = pdist(subjects.to_numpy(), "mahalanobis", VI=matrix)
    difference = pdist(scores.to_numpy()[:, None], "cityblock")
    for L in (0.5, 1.0, 2.0):
        result = lipschitz_violations(scores, subjects, Metric(matrix), L=L, k=5)
        assert result.statistic == pytest.approx(((difference - L * distance) > 1e-12).mean(), abs=1e-12)
        assert result.worst["excess"].iloc[0] == pytest.approx((difference - L * distance).max())
        assert np.allclose(result.worst["distance"], (result.worst["score_difference"] - result.worst["excess"]) / L)


def test_properties():
    rng = np.random.default_rng(7)
    subjects = pd.DataFrame(rng.normal(size=(40, 2)), columns=["x", "y"])
    scores = pd.Series(rng.integers(0, 3, size=40).astype(float))  # many ties
    metric = Metric(np.diag([1.0, 0.5]))
    assert lipschitz_violations(scores, subjects, metric, L=1e9).statistic == 0
    ties = pdist(scores.to_numpy()[:, None]) == 0
    assert lipschitz_violations(scores, subjects, metric, L=0).statistic == pytest.approx(1 - ties.mean())
    order = rng.permutation(40)
    shuffled = lipschitz_violations(scores.iloc[order], subjects.iloc[order], metric)
    assert shuffled.statistic == lipschitz_violations(scores, subjects, metric).statistic
    # the interval is over the metric's draws: identical draws give a point, farther metrics fewer violations
    fixed = lipschitz_violations(scores, subjects, Metric(metric.matrix, [metric.matrix] * 4))
    assert fixed.confidence_interval == (fixed.statistic, fixed.statistic)
    spread = lipschitz_violations(
        scores, subjects, Metric(metric.matrix, [metric.matrix * c for c in (0.25, 1, 4, 16)])
    )
    assert list(spread.draws) == sorted(spread.draws, reverse=True)
    assert spread.confidence_interval[0] <= spread.statistic <= spread.confidence_interval[1]


def test_bad_input_is_refused_with_a_reason():
    subjects = pd.DataFrame({"x": [0.0, 1.0]}, index=["a", "b"])
    metric = Metric(np.eye(1))
    with pytest.raises(ValueError, match="no score for 1 subject"):
        lipschitz_violations(pd.Series({"a": 1.0}), subjects, metric)
    with pytest.raises(ValueError, match="L must be"):
        lipschitz_violations(pd.Series({"a": 1.0, "b": 0.0}), subjects, metric, L=-1)
    with pytest.raises(ValueError, match="at least two subjects"):
        lipschitz_violations(pd.Series({"a": 1.0}), subjects.iloc[:1], metric)
    with pytest.raises(ValueError, match="finite"):
        lipschitz_violations(pd.Series({"a": np.nan, "b": 0.0}), subjects, metric)


def test_a_metric_learned_from_people_audits_scores_end_to_end():
    """fit_metric's HumanMetric is a LearnedMetric: scores s_i = c d(x_i, x_0) under the learned metric are
    c-Lipschitz (triangle inequality), so with L = 1 they violate nothing for c <= 1 and some pairs for c = 3;
    the interval runs over the metric's bootstrap refits."""
    from fairness.human_metric import fit_metric
    from tests.fairness.test_human_metric import FEATURES, judgements, pool

    subjects = pool(60)
    metric = fit_metric(judgements("comparable", subjects, 30, 10, np.random.default_rng(1)), subjects, FEATURES)
    assert len(metric.draws) == metric.n_resamples > 0
    origin = subjects.index[0]
    apart = {i: metric.distance(subjects.loc[i], subjects.loc[origin]) for i in subjects.index}
    for c, violating in ((0.9, False), (3.0, True)):
        scores = pd.Series({i: c * d for i, d in apart.items()})
        result = lipschitz_violations(scores, subjects[FEATURES], metric)
        assert (result.statistic > 0) == violating and result.n_pairs == 60 * 59 // 2
        low, high = result.confidence_interval
        assert 0 <= low <= high <= 1


def test_the_audits_L_changes_the_share_as_it_must():
    """``fairness.human_audit.lipschitz_table`` (the audit's ``--lipschitz L``) by hand on three subjects, and the
    share and its interval non-increasing in L on random data (a larger L tolerates larger score differences)."""
    from fairness.human_audit import lipschitz_table

    subjects = pd.DataFrame({"x": [0.0, 1.0, 3.0]}, index=["a", "b", "c"])
    scores = pd.DataFrame({"m": [0.0, 2.0, 2.5]}, index=["a", "b", "c"])
    # |s_i - s_j| vs d: a-b 2 vs 1, a-c 2.5 vs 3, b-c 0.5 vs 2; a pair violates when the difference > L d
    by_hand = {0.1: 3 / 3, 0.25: 2 / 3, 0.5: 2 / 3, 0.9: 1 / 3, 1.0: 1 / 3, 2.0: 0.0, 5.0: 0.0}  # 0.25: b-c a tie
    for L, share in by_hand.items():
        table, _ = lipschitz_table(scores, subjects, Metric(np.eye(1)), L=L)
        assert table.loc[0, "statistic"] == pytest.approx(share) and table.loc[0, "L"] == L, L
    rng = np.random.default_rng(3)
    subjects = pd.DataFrame(rng.normal(size=(60, 2)), columns=["x", "y"])
    scores = pd.DataFrame({"m": rng.uniform(size=60), "n": rng.uniform(size=60) * 3})
    draws = [np.diag(rng.uniform(0.2, 2, size=2)) for _ in range(30)]
    tables = [lipschitz_table(scores, subjects, Metric(np.eye(2), draws), L=L)[0] for L in np.geomspace(0.01, 50, 25)]
    for column in ("statistic", "ci_low", "ci_high"):
        values = np.array([t[column].to_numpy() for t in tables])  # L x models
        assert (np.diff(values, axis=0) <= 1e-12).all(), column
    assert tables[0]["statistic"].gt(0.9).all() and tables[-1]["statistic"].eq(0).all()
