import pytest

from tests.participation.format2_helpers import example_spec, simple_plan


def _condition_rows(study, spec: dict) -> None:
    """Until study_load writes format 2 versions: only the Condition rows consent assigns."""
    from surveys.models import Condition

    for position, cond in enumerate(spec["conditions"]):
        Condition.objects.create(
            study=study, key=cond["key"], label=cond["label"], feature="", unit="", desirable=False, position=position
        )


@pytest.fixture
def format2_study(db, researcher, monkeypatch):
    """The format 2 example study, loaded; consent builds the simple plan of every block and item."""
    from studies import services

    # every participant gets the plan of condition "shown", which has every block (rate is only there)
    monkeypatch.setattr(
        "participation.services.plan_for", lambda spec, key, seed, **_: simple_plan(spec, "shown", seed)
    )
    if "feature" not in example_spec()["conditions"][0]:
        monkeypatch.setattr(services, "_create_study_rows", _condition_rows)
    return services.study_load(spec=example_spec(), owner=researcher).study
