import io

import pandas as pd
import pytest
from rest_framework.test import APIClient

from tests.surveys.helpers import answer_pages, consented

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/studies/",
    "/api/studies/effort-demo/",
    "/api/studies/effort-demo/participants/",
    "/api/studies/effort-demo/export/pairs/",
    "/api/schema/",
]


@pytest.mark.parametrize("url", ENDPOINTS)
def test_anonymous_gets_nothing(demo_study, url):
    assert APIClient().get(url).status_code in (401, 403)


def test_other_researcher_sees_no_foreign_study(demo_study, other_researcher):
    client = APIClient()
    client.force_authenticate(other_researcher)
    assert client.get("/api/studies/").json()["results"] == []
    assert client.get("/api/studies/effort-demo/").status_code == 404
    assert client.get("/api/studies/effort-demo/export/pairs/").status_code == 404


def test_owner_gets_study_participants_and_exports(demo_study, researcher):
    answer_pages(consented("effort-demo", "a1"))
    consented("effort-demo", "a2")
    client = APIClient()
    client.force_authenticate(researcher)
    studies = client.get("/api/studies/").json()["results"]
    assert [s["slug"] for s in studies] == ["effort-demo"]
    assert sum(c["participants"] for c in studies[0]["conditions"]) == 2
    detail = client.get("/api/studies/effort-demo/").json()
    assert detail["versions"] == [1] and detail["spec"]["slug"] == "effort-demo"
    people = client.get("/api/studies/effort-demo/participants/").json()["results"]
    assert sorted(p["status"] for p in people) == ["active", "completed"]
    assert all("external_id" not in p and "PID" not in str(p) for p in people)
    pairs = client.get("/api/studies/effort-demo/export/pairs/").json()
    assert pairs["count"] == len(pairs["results"]) == 12 + 12
    csv = client.get("/api/studies/effort-demo/export/disagreements/?format=csv")
    assert csv["Content-Type"].startswith("text/csv")
    assert len(pd.read_csv(io.StringIO(csv.content.decode()))) == 8
    assert client.get("/api/studies/effort-demo/export/nope/").status_code == 404


def test_schema_lists_every_endpoint(demo_study, researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for url in ENDPOINTS[:-1]:
        templated = url.replace("effort-demo", "{slug}").replace("/pairs/", "/{table}/")
        assert templated in paths


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_api_starts_an_analysis_and_lists_runs(demo_answered_by_12, researcher, other_researcher, no_mixed_models):
    """The API's analysis life cycle (access, validation, the job, its listing): the runs skip their mixed models."""
    from tests.conftest import run_jobs

    client = APIClient()
    client.force_authenticate(other_researcher)
    assert client.post("/api/studies/effort-demo/analyses/", {"seed": 2}, format="json").status_code == 404
    client.force_authenticate(researcher)
    assert client.post("/api/studies/effort-demo/analyses/", {"n_resamples": 5}, format="json").status_code == 400
    response = client.post("/api/studies/effort-demo/analyses/", {"seed": 2, "n_resamples": 100}, format="json")
    assert response.status_code == 202
    run_jobs()
    result = client.get(response["Location"]).json()["result"]
    assert {c["condition"] for c in result["calibrations"]} == {"arrests", "income"}
    assert {c["estimand"][:27] for c in result["calibrations"]} == {"for these 12 stimulus pairs"}  # issue 23 item 8
    runs = client.get("/api/studies/effort-demo/analyses/").json()["results"]
    assert len(runs) == 1 and runs[0]["report_url"] == result["report_url"]
    assert runs[0]["results"]["sample"]["include_incomplete"] is False
    bad = client.post("/api/studies/effort-demo/analyses/", {"include_incomplete": "perhaps"}, format="json")
    assert bad.status_code == 400 and "include_incomplete" in bad.json()["fields"]
    response = client.post(
        "/api/studies/effort-demo/analyses/", {"n_resamples": 100, "include_incomplete": True}, format="json"
    )
    run_jobs()
    runs = client.get("/api/studies/effort-demo/analyses/").json()["results"]
    assert [r["results"]["sample"]["include_incomplete"] for r in runs] == [True, False]
