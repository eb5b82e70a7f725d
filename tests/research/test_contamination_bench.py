"""The contamination benchmark's clients (``bench/contamination.py``) on a small sample: every bot style but
the mimic is flagged by a server-measured rule, the careful typer and the forger that the rules over the
browser's signals and the 2 s floor passed are caught by the page's load, the straight answers and the
duplicated texts (the forger by its impossible clock too), the farm by its burst; the simulated people are
not flagged, and excluding the flagged brings the headline disagreement rate back to the people's own."""

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
def test_bot_styles_are_flagged_people_are_not_and_exclusion_restores_the_estimate(researcher, settings):
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 0
    bench = _bench()
    # Two clients of each bot style (every rule's verdict on a bot is certain, not a rate), five of the farm:
    # the burst rule counts five arrivals from one range within ten minutes (research.quality's burst_size).
    per_style = {kind: 5 if kind == "farm" else 2 for kind in bench.BOTS}
    found = bench.contamination(humans=12, per_style=per_style, seed=3, owner=researcher)
    assert found.n == {"human": 12} | per_style
    assert found.flagged["human"] == 0.0
    for kind in ("fast", "paced", "filler", "careful typer", "forger", "farm"):
        assert found.server_flagged[kind] == 1.0, kind
    for rule in ("hurried", "straightline", "duplicate_text"):
        assert found.by_rule["careful typer"][rule] == 1.0 and found.by_rule["careful typer"]["fast"] == 0.0
    assert found.by_rule["forger"]["clock"] == 1.0 and found.by_rule["forger"]["hurried"] == 1.0
    assert found.by_rule["farm"]["burst"] == 1.0 and found.by_rule["careful typer"]["burst"] == 0.0
    assert found.uncaught() == ["mimic"]
    assert found.everyone < found.without_flagged
    assert found.without_flagged == pytest.approx(found.humans_only, abs=0.03)  # the mimics stay in
