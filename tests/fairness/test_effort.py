import numpy as np
import pytest

from fairness.effort import (
    accelerations,
    aggregate,
    average_acceleration,
    cumulative,
    effort,
    inertia_from_groups,
    poverty_inertia_table,
    velocities,
)


def test_paper_worked_income_example():
    """Effort-aware fairness paper, Section 'Effort': yearly 60k, 90k, 100k -> X = 60, 150, 250;
    V = 90, 100; A_0 = 10 (positive effort despite slowing yearly growth)."""
    series = np.array([[60.0, 90.0, 100.0]])
    assert cumulative(series).tolist() == [[60.0, 150.0, 250.0]]
    assert velocities(series).tolist() == [[90.0, 100.0]]
    assert accelerations(series).tolist() == [[10.0]]
    assert effort(series, [1.0], desirable=True)[0] > 0.5


def test_average_acceleration_telescopes_to_yearly_change():
    rng = np.random.default_rng(0)
    series = rng.uniform(0, 10, size=(50, 6))
    expected = (series[:, -1] - series[:, 1]) / (series.shape[1] - 2)
    np.testing.assert_allclose(average_acceleration(series), expected)


def test_desirable_and_undesirable_efforts_sum_to_inertia():
    rng = np.random.default_rng(1)
    series = rng.uniform(0, 5, size=(20, 4))
    m = rng.uniform(0, 1, size=20)
    np.testing.assert_allclose(effort(series, m, desirable=True) + effort(series, m, desirable=False), m)


def test_aggregate_matches_eq11():
    series = np.array([[5.0, 5.0, 5.0, 5.0]])  # X_3 = 20 ($200k in $10k units)
    assert aggregate(series, scale=20.0)[0] == pytest.approx(2 / (1 + np.exp(-1)) - 1)
    assert aggregate(np.zeros((1, 4)), scale=1.0)[0] == 0.0


def test_poverty_inertia_scaled_by_maximum():
    table = poverty_inertia_table()
    assert table["Black"] == 1.0
    assert table["White"] == pytest.approx(0.13 / 0.39)
    with pytest.raises(KeyError, match="Martian"):
        inertia_from_groups(["White", "Martian"])


@pytest.mark.parametrize("bad", [np.ones((3, 2)), np.array([[1.0, np.nan, 2.0]])])
def test_rejects_short_or_missing_series(bad):
    with pytest.raises(ValueError):
        effort(bad, np.ones(bad.shape[0]), desirable=True)
