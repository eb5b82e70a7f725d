"""A simulated participant (``participation.simulate``, the design check's ``StudySimulation``) builds one form per
page, the one that validates its answers: the task types' ``simulate`` answer the page's fields (how sure, the BTS
prediction) from the block without building the page's form (``tasks.fields.follow_ups``)."""

import json

import numpy as np
import pytest

from runs.design_check import StudySimulation
from studies.builder import build_study
from studies.services import stored_file
from tasks.choose import Choose
from tasks.pair_distance import PairDistance
from tasks.triplet import Triplet
from tests.conftest import DEMO_FILE
from tests.studies.test_builder_features import FEATURES, compas_csv
from tests.tasks.test_choose import choice_spec


def triplet_spec(tmp_path) -> dict:
    """The builder's triplet study of 24 COMPAS defendants, asking how sure and the BTS prediction."""
    spec = build_study("triplet", compas_csv(tmp_path, n=24), "id", score_column="ai_score", feature_columns=FEATURES)
    block = next(b for b in spec["blocks"] if b.get("task") == "triplet")
    block |= {"strength": True, "bts": {}, "model": "ai"}
    return spec


CASES = {
    "choose": (Choose, lambda tmp_path: choice_spec(), {"choice", "strength", "prediction", "ai_choice"}),
    "pair_distance": (PairDistance, lambda tmp_path: json.loads(DEMO_FILE.read_text()), {"overall", "prediction"}),
    "triplet": (Triplet, triplet_spec, {"closer", "strength", "prediction", "ai_closer"}),
}


@pytest.mark.parametrize("task", CASES)
def test_a_simulated_page_builds_one_form(task, tmp_path, monkeypatch):
    kind, spec, measures = CASES[task]
    built, simulated = [], []
    form, simulate = kind.form, kind.simulate
    monkeypatch.setattr(kind, "form", lambda self, *args, **kw: built.append(1) or form(self, *args, **kw))
    monkeypatch.setattr(kind, "simulate", lambda self, *args: simulated.append(1) or simulate(self, *args))
    run = StudySimulation(stored_file(spec(tmp_path))[0], np.random.default_rng(1))
    run.grow(4)
    assert simulated and len(built) == len(simulated)
    assert measures <= {row["measure"] for row in run.rows if row["task"] == task}  # every follow-up answered
