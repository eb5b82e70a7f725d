"""The contamination benchmark's clients (``bench/contamination.py``) on a small sample: every bot, fast or
paced, is flagged, the human-like clients are not, and excluding the flagged brings the headline
disagreement rate back to the human-like clients' own (the bots agree with every AI prediction)."""

import importlib.util

import pytest

from tests.conftest import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("contamination_bench", ROOT / "bench" / "contamination.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.django_db
def test_bots_are_flagged_humans_are_not_and_exclusion_restores_the_estimate(researcher, settings):
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 0  # every client from the test client's one address
    found = _bench().contamination(humans=16, bots=6, paced=6, seed=3, owner=researcher)
    assert found.n == {"human": 16, "bot": 6, "paced bot": 6}
    assert found.flagged["bot"] == found.flagged["paced bot"] == 1.0
    assert found.flagged["human"] == 0.0
    assert found.by_rule["paced bot"]["fast"] == 0.0 and found.by_rule["paced bot"]["hidden"] == 1.0
    assert found.by_rule["bot"]["fast"] == 1.0 and found.by_rule["bot"]["copy"] == 1.0
    assert found.everyone < found.without_flagged == pytest.approx(found.humans_only)
