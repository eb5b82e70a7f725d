import pytest

from tests.participation.format2_helpers import example_spec, simple_plan


@pytest.fixture
def format2_study(db, researcher, monkeypatch):
    """The format 2 example study, loaded; consent gives every participant the simple plan of every block
    and item of condition "shown" (the sampled plans of ``participation.assignment`` are tested there)."""
    from studies import services

    # every participant gets the plan of condition "shown", which has every block (rate is only there)
    monkeypatch.setattr(
        "participation.services.plan_for", lambda spec, key, seed, **_: simple_plan(spec, "shown", seed)
    )
    return services.study_load(spec=example_spec(), owner=researcher).study
