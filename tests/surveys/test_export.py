"""The tidy export against the answers stored, and the simulator's generative model."""

import numpy as np
import pandas as pd
import pytest

from participation.simulate import simulate_participants
from research.export import COLUMNS, export_tables, neutralise_formulas, write_exports
from simulation.effort import GenerativeModel
from tests.surveys.helpers import shared_demo_study

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def simulated(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo study with 24 simulated participants, 30% of them inattentive, made once: the tests below only
    read it."""
    model = GenerativeModel(inattentive=0.3)
    with shared_demo_study(django_db_blocker, tmp_path_factory.mktemp("export"), n=24, seed=5, model=model) as shared:
        yield shared


@pytest.mark.slow
def test_tables_have_documented_columns_and_one_row_per_unit(simulated):
    tables = export_tables("effort-demo")
    completed = tables.participants[tables.participants["status"] == "completed"]
    assert len(tables.pairs) == 12 * len(completed)
    assert len(tables.disagreements) == 8 * len(completed)
    assert list(tables.pairs.columns) == list(COLUMNS["pairs"])
    assert list(tables.participants.columns) == list(COLUMNS["participants"])
    assert not tables.pairs.duplicated(["participant_id", "set", "comparison"]).any()
    assert set(tables.disagreements.columns) >= {"demo_race", "demo_sex", "model_label", "disagreement"}


@pytest.mark.slow
def test_derived_columns_follow_their_definitions(simulated):
    tables = export_tables("effort-demo")
    pairs = tables.pairs
    np.testing.assert_allclose(pairs["output_distance"], (pairs["k_score"] - pairs["fair_score"]).abs())
    assert ((pairs["overall_similar"] == 1) == (pairs["d_overall"] <= 3)).all()
    accepted = pairs[pairs["k_accepted"] == 1]
    np.testing.assert_allclose(accepted["k_score"], accepted["k_ai_score"])
    d = tables.disagreements
    assert (d["disagreement"] == 1 - d["agree"]).all()
    assert ((d["participant_label"] == d["model_label"]) == (d["agree"] == 1)).all()
    assert (tables.pages["seconds"] > 0).all()


@pytest.mark.slow
def test_exclusion_follows_the_attention_rule(simulated):
    participants = export_tables("effort-demo").participants
    done = participants[participants["status"] == "completed"]
    assert ((done["attention_failed"] >= 2) == (done["excluded"] == 1)).all()
    assert done["excluded"].sum() >= 1  # 30% inattentive participants guess at random


@pytest.mark.slow
def test_simulated_ratings_recover_the_generating_weights(demo_spec):
    from studies.services import study_load

    study_load(spec={**demo_spec, "slug": "recovery"})  # beside the shared demo study
    simulate_participants("recovery", n=60, seed=11)
    pairs = export_tables("recovery").pairs
    x = np.column_stack([np.ones(len(pairs)), pairs["d_aggr"], pairs["d_traj"]])
    coef, *_ = np.linalg.lstsq(x, pairs["d_overall"], rcond=None)
    assert coef[1] == pytest.approx(GenerativeModel.a1, abs=0.08)
    assert coef[2] == pytest.approx(GenerativeModel.a2, abs=0.08)


@pytest.mark.slow
def test_write_exports_in_both_formats(simulated, tmp_path):
    tables = export_tables("effort-demo")
    paths = write_exports(tables, tmp_path / "csv", "csv") + write_exports(tables, tmp_path / "json", "json")
    assert len(paths) == 12  # pairs, participants, disagreements, pages, answers, quality (no questionnaire)
    assert len(pd.read_csv(tmp_path / "csv" / "pairs.csv")) == len(tables.pairs)
    assert len(pd.read_json(tmp_path / "json" / "pairs.json")) == len(tables.pairs)


def test_formula_injection_is_neutralised():
    frame = pd.DataFrame({"rationale": ['=HYPERLINK("x")', "+1", "plain", "-cmd", "@sum"], "n": [1, 2, 3, 4, 5]})
    out = neutralise_formulas(frame)
    assert out["rationale"].tolist() == ['\'=HYPERLINK("x")', "'+1", "plain", "'-cmd", "'@sum"]
    assert out["n"].tolist() == [1, 2, 3, 4, 5]
