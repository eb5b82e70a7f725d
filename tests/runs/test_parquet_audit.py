"""``audit_models --subjects FILE.parquet --engine dask``: the Parquet file read as a Dask DataFrame on a local
cluster the audit starts and stops gives the numbers of the default single-machine path on the same file."""

import json

import pandas as pd
import pytest

from tests.runs.test_tabular_audit import compas_audit, run  # noqa: F401 - the study and subjects fixture

pytestmark = pytest.mark.serial  # starts worker processes of its own


@pytest.mark.django_db
def test_the_dask_engine_gives_the_default_paths_numbers(compas_audit, tmp_path):  # noqa: F811
    parquet = tmp_path / "subjects.parquet"
    pd.read_csv(compas_audit).to_parquet(parquet)
    options = {"groups": ["race", "sex"], "outcome_column": "two_year_recid"}
    single = json.loads((run(parquet, tmp_path, "single", **options) / "results.json").read_text())
    on_dask = json.loads((run(parquet, tmp_path, "dask", engine="dask", **options) / "results.json").read_text())
    metrics = pd.DataFrame(single["group_metrics"])
    assert {"selection_rate", "false_positive_rate", "false_negative_rate"} <= set(metrics["metric"])
    assert on_dask["group_metrics"] == single["group_metrics"]
