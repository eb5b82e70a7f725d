import pytest

from tests.participation.format2_helpers import example_spec


@pytest.fixture
def format2_study(db, researcher):
    """The format 2 example study, loaded, with the real assignment: its seed is the first for which the
    first ticket goes to condition "shown", the condition with every block (rate is only there), so the
    first participant's drawn plan (sampled, stratified, randomised) shows every task type."""
    from participation.assignment import condition_for
    from studies import services

    spec = example_spec()
    spec["seed"] = next(seed for seed in range(100) if condition_for({**spec, "seed": seed}, 0) == "shown")
    return services.study_load(spec=spec, owner=researcher).study
