"""``audit_models --subjects FILE.parquet --engine dask``: the Parquet file read as a Dask DataFrame on a cluster
(the suite's shared one, named by DASK_SCHEDULER_ADDRESS; ``fairness.distributed``'s tests start a local one) gives
the numbers of the default single-machine path on the same file."""

import json

import pandas as pd
import pytest
from rest_framework.test import APIClient

from tests.runs.audit_inputs import queued_audits_resampled
from tests.runs.test_audit_sampling import answered_subjects, subjects_file  # noqa: F401 - the answered effort demo and its subjects
from tests.runs.test_tabular_audit import _answered, compas_audit, run  # noqa: F401 - the study and subjects fixture

pytestmark = pytest.mark.slow  # audits on the suite's shared Dask cluster (tests/conftest.py): 5 CPU-seconds and more


@pytest.mark.django_db
def test_the_dask_engine_gives_the_default_paths_numbers(compas_audit, tmp_path, dask_scheduler):  # noqa: F811
    parquet = tmp_path / "subjects.parquet"
    pd.read_csv(compas_audit).to_parquet(parquet)
    options = {"groups": ["race", "sex"], "outcome_column": "two_year_recid"}
    single = json.loads((run(parquet, tmp_path, "single", **options) / "results.json").read_text())
    on_dask = json.loads((run(parquet, tmp_path, "dask", engine="dask", **options) / "results.json").read_text())
    metrics = pd.DataFrame(single["group_metrics"])
    assert {"selection_rate", "false_positive_rate", "false_negative_rate"} <= set(metrics["metric"])
    assert on_dask["group_metrics"] == single["group_metrics"]


@pytest.mark.django_db(transaction=True)
def test_the_api_asks_for_the_exact_eaif_on_dask(answered_subjects, researcher, dask_scheduler):  # noqa: F811
    """``exact_eaif`` (the API's and the form's option): the job computes EaIF on the server's Dask cluster
    (DASK_SCHEDULER_ADDRESS), and the values are the single-machine exact ones."""
    from tests.conftest import run_jobs

    client = APIClient()
    client.force_authenticate(researcher)
    results = {}
    for exact_eaif in (False, True):
        with answered_subjects.open("rb") as fh:
            response = client.post(
                "/api/studies/effort-demo/audits/",
                {"subjects": fh, "condition": "arrests", "exact_eaif": exact_eaif, "groups": ["race"]},
                format="multipart",
            )
        assert response.status_code == 202, response.content
        queued_audits_resampled(2)  # EaIF's values are compared: neither the bootstrap nor the groups touch them
        run_jobs()
        job = client.get(response["Location"]).json()
        assert job["status"] == "succeeded", job["error"]
        results[exact_eaif] = pd.DataFrame(job["result"]["results"]["eaif"]).set_index(["model", "weights"])
    single, on_dask = results[False], results[True]
    assert set(single["method"]) == {"exact"}
    assert set(on_dask.xs("equal", level="weights")["method"]) == {"exact, on Dask"}
    pd.testing.assert_series_equal(on_dask["eaif"], single["eaif"], rtol=1e-12)
