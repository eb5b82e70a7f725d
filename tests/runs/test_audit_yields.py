"""The audit's sources are chosen by what a task type yields (``BlockTask.yields``), asked of the registry, never
by the type's name: a throw-away type registered for the test that declares a learned metric is read by
``--metric-from`` (the check, the answers, the fit and the web form's list) with no other change, and one that
declares none is refused with an error that names the yield."""

import numpy as np
import pandas as pd
import pytest

from fairness.human_metric import pool_frame
from participation.simulate import simulate_participants
from runs.audit_parameters import AuditParameters
from runs.human_source_options import OPTIONS
from runs.human_sources import SourceErrors, check_sources, source_metric
from runs.run_views import human_source_choices
from studies.models import Study
from studies.services import study_load
from studies.synthetic_defendants import draw_defendants
from tasks import BLOCK_TASKS
from tasks.pair_comparable import PairComparable
from tasks.yields import Yield
from tests.studies.test_builder import build

SLUG = "people-pairs"


class Alike(PairComparable):
    """A new type whose answers are comparable pairs: it declares that they yield a learned metric."""

    name = "alike"
    kinds = ("alike",)
    yields = {Yield.METRIC: "comparable"}


class Unweighed(PairComparable):
    """The same pages and answers, declared to yield nothing."""

    name = "unweighed"
    kinds = ("unweighed",)
    yields = {}


@pytest.fixture
def pairs_study(researcher):
    """A study built from the comparable-pairs template, answered by simulated participants."""
    spec = build(draw_defendants(30, seed=5), "comparable", score_column="ai_score", per_participant=15, slug=SLUG)
    study_load(spec=spec, owner=researcher)
    simulate_participants(SLUG, n=12, seed=3, decline_rate=0)


def _retype(task: str) -> str:
    """The study's comparable-pairs block, now of the type ``task`` (the stored file changed in place); its key."""
    study = Study.objects.filter(slug=SLUG).order_by("-version").first()
    assert study is not None
    block = next(b for b in study.spec["blocks"] if b.get("task") == "pair_comparable")
    block["task"] = task
    study.save(update_fields=["spec"])
    return block["key"]


def _metric_choices(researcher) -> list[str]:
    return next(f for f in human_source_choices(researcher, {}, {}) if f["name"] == "metric_from")["choices"]


@pytest.mark.slow
@pytest.mark.django_db
def test_a_new_type_that_yields_a_metric_is_read_by_metric_from_with_no_other_change(
    pairs_study, researcher, monkeypatch
):
    """The same answers give the same metric whether their block is a pair_comparable one or of the new type."""
    parameters = AuditParameters(metric_from=SLUG)
    before = check_sources(audited_slug=SLUG, researcher=researcher, parameters=parameters)["metric_from"]
    subjects, _ = pool_frame(before.pool())
    expected = source_metric(before, subjects, n_resamples=2, seed=1).feature_weights
    assert "alike" not in OPTIONS["metric_from"].tasks
    monkeypatch.setitem(BLOCK_TASKS, "alike", Alike())
    assert OPTIONS["metric_from"].tasks == ("pair_comparable", "triplet", "alike")
    key = _retype("alike")
    source = check_sources(audited_slug=SLUG, researcher=researcher, parameters=parameters)["metric_from"]
    assert (source.block["task"], source.measure) == ("alike", "comparable")
    assert source.answers["participant_id"].nunique() == 12 and source.answers["value"].isin([0, 1]).all()
    assert source.label.startswith(f"{SLUG}:{key} (alike, 12 raters")
    weights = source_metric(source, subjects, n_resamples=2, seed=1).feature_weights
    assert len(weights) > 1 and np.isfinite(weights).all()
    pd.testing.assert_series_equal(weights, expected)
    assert [value for value, _ in _metric_choices(researcher)] == [f"{SLUG}:{key}"]


@pytest.mark.django_db
def test_a_type_that_yields_no_metric_is_refused_naming_the_yield(pairs_study, researcher, monkeypatch):
    monkeypatch.setitem(BLOCK_TASKS, "unweighed", Unweighed())
    key = _retype("unweighed")
    assert "unweighed" not in OPTIONS["metric_from"].tasks and _metric_choices(researcher) == []
    for reference, message in (
        (
            SLUG,
            f"--metric-from '{SLUG}': study '{SLUG}' has no block that yields a learned fair metric; its task blocks: "
            f"{key} (unweighed); --metric-from needs a block that yields a learned fair metric (pair_comparable, "
            "triplet)",
        ),
        (
            f"{SLUG}:{key}",
            f"--metric-from '{SLUG}:{key}': block '{key}' of study '{SLUG}' is of type unweighed, which does not "
            "yield a learned fair metric",
        ),
    ):
        with pytest.raises(SourceErrors) as caught:
            check_sources(audited_slug=SLUG, researcher=researcher, parameters=AuditParameters(metric_from=reference))
        assert caught.value.errors["metric_from"][0].startswith(message)
