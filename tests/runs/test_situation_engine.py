"""Situation testing's ``engine`` in the API and the background job: "dask" runs the neighbour searches on the
cluster the server names (DASK_SCHEDULER_ADDRESS; a request never names one) and gives the local numbers."""

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from runs.models import Job
from runs.situation_runs import situation_testing_run
from tests.conftest import run_jobs
from tests.fairness.test_situation_scale import synthetic

pytestmark = pytest.mark.django_db

PARAMS = {
    "protected": "group",
    "protected_value": "1",
    "target": "Y",
    "negative": "0",
    "features": ["score", "grade", "region"],
    "k": [15, 50],
}


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def csv_upload(frame: pd.DataFrame, name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, frame.to_csv(index=False).encode(), content_type="text/csv")


def post(api, data, cf, **fields):
    body = {"data": csv_upload(data, "data.csv"), "counterfactuals": csv_upload(cf, "cf.csv"), **PARAMS, **fields}
    return api.post("/api/situation-testing/", body, format="multipart")


def test_the_engine_is_local_or_dask_and_a_request_names_no_scheduler(api):
    data, cf = synthetic(200, discrete=True, seed=5)
    refused = post(api, data, cf, engine="spark")
    assert refused.status_code == 400
    assert refused.json()["fields"] == {"engine": ['"spark" is not a valid choice.']}
    assert not Job.objects.exists()
    default = api.get(post(api, data, cf)["Location"]).json()["id"]
    dask = api.get(post(api, data, cf, engine="dask", scheduler="tcp://203.0.113.9:8786")["Location"]).json()["id"]
    assert Job.objects.get(pk=default).params["engine"] == "local"
    stored = Job.objects.get(pk=dask).params
    assert stored["engine"] == "dask" and "scheduler" not in stored


def test_an_unknown_engine_of_a_stored_job_is_refused_by_name():
    data, cf = synthetic(200, discrete=True, seed=5)
    params = {**PARAMS, "alpha": 0.05, "tau": 0.0, "mode": "paper", "positive": False, "engine": "spark"}
    with pytest.raises(ValueError, match="engine must be one of local, dask, not 'spark'"):
        situation_testing_run(data, cf, params)


@pytest.mark.slow  # two situation-testing jobs, one on the suite's shared Dask cluster (tests/conftest.py)
@pytest.mark.django_db(transaction=True)
def test_the_dask_job_runs_on_the_servers_cluster_and_gives_the_local_result(api, dask_scheduler):
    """The server's cluster: the suite's shared one (DASK_SCHEDULER_ADDRESS, tests/conftest.py)."""
    data, cf = synthetic(1_500, discrete=False, seed=6)  # one chunk of complainants either way
    prefixes = dask_scheduler.scheduler.task_prefixes
    chunks_before = prefixes["chunk"].state_counts["memory"] if "chunk" in prefixes else 0
    results = {}
    for engine in ("local", "dask"):
        response = post(api, data, cf, engine=engine)
        assert response.status_code == 202, response.content
        run_jobs()
        job = api.get(response["Location"]).json()
        assert job["status"] == "succeeded", job["error"]
        results[engine] = {name: v for name, v in job["result"].items() if name != "report_url"}  # per job
    # DaskNeighbours' tasks (fairness.situation_dask._chunk: one per chunk of complainants) ran there
    assert prefixes["chunk"].state_counts["memory"] > chunks_before
    assert len(dask_scheduler.scheduler_info["workers"]) == 2
    assert results["dask"] == results["local"]
    assert results["local"]["counts"] and results["local"]["flagged"]
