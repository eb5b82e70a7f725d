"""Every registered interval and test (analysis.coverage.REGISTRY, simulation.coverage_studies) holds its
coverage floor or size ceiling at the reduced size; every report table that prints an interval or a
p-value names registered procedures or is listed as not yet measured here."""

import pytest

import simulation.coverage_studies  # noqa: F401 - registers the procedures
from analysis.coverage import REGISTRY, measure


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_procedure_holds_its_bound_at_reduced_size(key):
    result = measure(key, studies=REGISTRY[key].reduced, seed=7)
    assert result.acceptable, (key, result.rate, REGISTRY[key].bound)


def test_registry_entries_state_their_estimand():
    for key, procedure in REGISTRY.items():
        assert procedure.estimand and procedure.function and procedure.scenario, key
        assert 0 < procedure.nominal < 1 and procedure.reduced < procedure.full, key
