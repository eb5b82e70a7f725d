"""The derived ``model_comparisons`` export table: one row per "which model is fairer?" answer with the two
models, the choice, how sure and the differences the trade-off weights are fitted on, recomputed here from the
pool's true outcomes and labels; empty (with its header) and not offered for a study without tradeoff blocks."""

import io

import pandas as pd
import pytest

from participation.models import Answer
from participation.simulate import simulate_participants
from research.codebook import codebook_of
from research.export import export_tables, write_exports
from research.tables import COLUMNS, study_tables
from tests.research.test_export_answers import SLUG, format2  # noqa: F401  (the fixture)
from tests.tasks.test_tradeoff import tradeoff_spec

pytestmark = pytest.mark.django_db

TRADEOFF = "tradeoff-models"


@pytest.fixture
def tradeoff_study(researcher):
    from studies.services import study_load

    spec = study_load(spec=tradeoff_spec(), owner=researcher).study.spec
    simulate_participants(TRADEOFF, n=5, seed=4, decline_rate=0)
    return spec


def expected_differences(pool: dict, comparison: dict, group: str) -> pd.Series:
    """x_a - x_b of (accuracy, FPR gap, FNR gap, selection-rate gap) from the pool's rows with pandas: per model,
    the rates by group on the comparison's subjects, each gap max - min over the groups."""
    rows = pd.DataFrame(
        [
            {
                "group": s["groups"][group],
                "outcome": s["outcome"],
                **{m: s["models"][m]["label"] for m in (comparison["a"], comparison["b"])},
            }
            for s in pool["subjects"]
            if s["id"] in set(comparison["subjects"])
        ]
    )

    def features(model: str) -> pd.Series:
        by_group = rows.groupby("group").apply(
            lambda g: pd.Series(
                {
                    "fpr": g.loc[g["outcome"] == 0, model].mean(),
                    "fnr": 1 - g.loc[g["outcome"] == 1, model].mean(),
                    "selection": g[model].mean(),
                }
            ),
            include_groups=False,
        )
        gaps = by_group.max() - by_group.min()
        return pd.Series(
            {
                "accuracy": (rows[model] == rows["outcome"]).mean(),
                "fpr_gap": gaps["fpr"],
                "fnr_gap": gaps["fnr"],
                "selection_rate_gap": gaps["selection"],
            }
        )

    return features(comparison["a"]) - features(comparison["b"])


def test_one_row_per_choice_with_the_differences_recomputed_from_the_pool(tradeoff_study):
    block = tradeoff_study["blocks"][-1]
    pool = tradeoff_study["pools"][0]
    table = export_tables(TRADEOFF).model_comparisons
    assert list(table.columns) == list(COLUMNS["model_comparisons"])
    stored = Answer.objects.filter(set_key=block["key"])
    choices = {(str(a.participant.pseudonym), a.subject_key): a for a in stored.filter(measure="fairer")}
    sure = {(str(a.participant.pseudonym), a.subject_key): a.number for a in stored.filter(measure="strength")}
    assert len(table) == len(choices) == 5 * len(block["comparisons"])
    comparisons = {c["key"]: c for c in block["comparisons"]}
    for row in table.itertuples(index=False):
        comparison = comparisons[row.comparison]
        answer = choices[(row.participant_id, row.comparison)]
        assert (row.block, row.model_a, row.model_b) == (block["key"], comparison["a"], comparison["b"])
        assert row.n_subjects == len(comparison["subjects"])
        assert row.fairer == answer.number and row.chosen == answer.text
        assert row.chosen == (row.model_a if row.fairer == 1 else row.model_b)
        assert row.strength == sure[(row.participant_id, row.comparison)]
        expected = expected_differences(pool, comparison, block["group"])
        got = pd.Series({f: getattr(row, f) for f in expected.index})
        pd.testing.assert_series_equal(got, expected, check_names=False, rtol=0, atol=1e-12)
        assert row.seconds >= 0 and row.excluded in (0, 1)
    assert table[["accuracy", "fpr_gap", "fnr_gap", "selection_rate_gap"]].abs().sum().gt(0).all()


def test_the_table_gives_the_reports_trade_off_weights(tradeoff_study):
    """The table holds what the weights are fitted on: ``tradeoff_weights`` on its rows (excluded participants
    left out) gives the analysis's weights of all participants."""
    from analysis.tradeoff import tradeoff_weights
    from runs.design_analysis import study_analysis

    table = export_tables(TRADEOFF).model_comparisons
    mine = tradeoff_weights(table[table["excluded"] == 0], chose="fairer", rater="participant_id").table
    result = study_analysis(TRADEOFF, tradeoff_study, by=[], n_resamples=20, n_permutations=20)
    report = next(b for b in result.blocks if b.task == "tradeoff").tables["tradeoff_weights"]
    report = report[report["rater_group"] == "all participants"]
    columns = ["feature", "weight", "ci_low", "ci_high", "standard_error", "n_raters", "n_choices"]
    pd.testing.assert_frame_equal(mine[columns].reset_index(drop=True), report[columns].reset_index(drop=True))


def test_export_codebook_and_api_offer_the_table(tradeoff_study, researcher, tmp_path):
    from rest_framework.test import APIClient

    tables = export_tables(TRADEOFF)
    assert "model_comparisons" in tables.present and "model_comparisons" in study_tables(TRADEOFF)
    write_exports(tables, tmp_path, "csv")
    written = pd.read_csv(tmp_path / "model_comparisons.csv")
    assert list(written.columns) == list(COLUMNS["model_comparisons"]) and len(written) == len(tables.model_comparisons)
    codebook = codebook_of(TRADEOFF)
    assert codebook.loc[codebook["table"] == "model_comparisons", "column"].tolist() == list(
        COLUMNS["model_comparisons"]
    )
    api = APIClient()
    api.force_authenticate(researcher)
    assert "model_comparisons" in api.get(f"/api/studies/{TRADEOFF}/export/").json()["tables"]
    response = api.get(f"/api/studies/{TRADEOFF}/export/model_comparisons/?format=csv")
    assert response.status_code == 200
    served = pd.read_csv(io.StringIO(response.content.decode()))
    pd.testing.assert_frame_equal(served, written)
    parquet = api.get(f"/api/studies/{TRADEOFF}/export/model_comparisons/?format=parquet")
    typed = pd.read_parquet(io.BytesIO(parquet.content))
    assert str(typed["strength"].dtype) == "Int64" and typed["fpr_gap"].tolist() == written["fpr_gap"].tolist()


def test_a_study_without_tradeoff_blocks_has_an_empty_table_with_its_header(format2, tmp_path):  # noqa: F811
    tables = export_tables(SLUG)
    assert tables.model_comparisons.empty and list(tables.model_comparisons.columns) == list(
        COLUMNS["model_comparisons"]
    )
    assert "model_comparisons" not in tables.present and "model_comparisons" not in study_tables(SLUG)
    written = {path.name for path in write_exports(tables, tmp_path, "csv")}
    assert "model_comparisons.csv" not in written and "answers.csv" in written
