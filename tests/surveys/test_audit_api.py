"""Audits started over the API run as background jobs (a real job worker, so its own transactions: apart from
test_audit_runs.py's shared study)."""

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from runs.models import AuditRun
from studies.models import Condition
from tests.runs.conftest import _answered_demo_snapshot, answered_demo  # noqa: F401 - 12 answered, simulated once


@pytest.fixture
def demo_subjects(answered_demo, tmp_path, settings):  # noqa: F811
    settings.REPORTS_DIR = tmp_path / "reports"
    path = tmp_path / "subjects.csv"
    call_command("generate_demo_audit", condition="arrests", out=str(path))
    return path


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_audit_api(demo_subjects, researcher, other_researcher):
    from tests.conftest import run_jobs

    client = APIClient()
    client.force_authenticate(other_researcher)
    with demo_subjects.open("rb") as fh:
        assert client.post("/api/studies/effort-demo/audits/", {"subjects": fh}, format="multipart").status_code == 404
    client.force_authenticate(researcher)
    with demo_subjects.open("rb") as fh:
        response = client.post(
            "/api/studies/effort-demo/audits/", {"subjects": fh, "condition": "arrests"}, format="multipart"
        )
    assert response.status_code == 202, response.content
    run_jobs()
    job = client.get(response["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["report_url"].endswith("/report.html")
    listed = client.get("/api/studies/effort-demo/audits/").json()
    assert listed["count"] == 1 and listed["results"][0]["condition"] == "arrests"
    assert AuditRun.objects.get().condition == Condition.objects.get(study__slug="effort-demo", key="arrests")
