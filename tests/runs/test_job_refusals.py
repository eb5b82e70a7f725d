"""Jobs the study cannot run are refused when they are requested (400 from the API, the reason on the dashboard's
"Start" page; nothing queued), and the jobs it can run do not crash on it: differential parity of a study of
yes/no answers only, an audit of a study without an effort design, a plan of a design with too few pairs. The
job x study matrix (``test_job_matrix.py``) runs every combination on PostgreSQL."""

import json

import pytest
from rest_framework.test import APIClient

from participation.simulate import simulate_participants
from runs.models import Job
from studies.services import study_load
from tests.conftest import ROOT, run_jobs

BUNDLED = ROOT / "studies" / "bundled"


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def load(researcher, path) -> str:
    return study_load(spec=json.loads(path.read_text()), owner=researcher).study.slug


@pytest.mark.django_db
def test_differential_parity_of_a_study_without_fair_scores_or_yes_no_answers_is_refused(api, researcher, client):
    slug = load(researcher, BUNDLED / "rating_synthetic.json")
    response = api.post(f"/api/studies/{slug}/differential-parity/", {}, format="json")
    assert response.status_code == 400
    assert (
        "differential parity compares participants' answers with the AI's outputs, which fair_score blocks "
        "(fair_scores_vs_ai) or agree blocks (disagreements) give; this study has no such block (its task "
        "blocks: ratings (rate))"
    ) in response.json()["detail"]
    client.force_login(researcher)
    page = client.post(f"/researcher/studies/{slug}/start/differential-parity/", {"alpha": "0.05"})
    assert page.status_code == 400 and "this study has no such block" in page.content.decode()
    assert not Job.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_differential_parity_of_a_study_of_yes_no_answers_only_runs(api, researcher):
    """The disagreements table without any fair score (no fair_score block: the subjects' table is empty; it
    was a KeyError 'condition' in the job)."""
    slug = load(researcher, BUNDLED / "disagreement_synthetic.json")
    simulate_participants(slug, n=6, seed=1, decline_rate=0)
    response = api.post(f"/api/studies/{slug}/differential-parity/", {}, format="json")
    assert response.status_code == 202, response.content
    run_jobs()
    job = Job.objects.get()
    assert job.status == Job.Status.SUCCEEDED, job.error
    tables = job.result["tables"]
    assert tables["fair_scores_vs_ai"] == [] and {row["attribute"] for row in tables["disagreements"]} == {
        "race",
        "sex",
    }


@pytest.mark.django_db
def test_an_audit_of_a_study_without_an_effort_design_is_refused_when_requested(api, researcher, client, tmp_path):
    slug = load(researcher, BUNDLED / "disagreement_synthetic.json")
    subjects = tmp_path / "subjects.csv"
    subjects.write_text("id,x_1,x_2,x_3,race,score_ai\n1,1,2,3,Black,0.5\n")
    with subjects.open("rb") as upload:
        response = api.post(f"/api/studies/{slug}/audits/", {"subjects": upload}, format="multipart")
    assert response.status_code == 400
    assert "condition 'main' does not say whether more of its effort feature is good" in response.json()["detail"]
    with subjects.open("rb") as upload:
        response = api.post(
            f"/api/studies/{slug}/audits/", {"subjects": upload, "condition": "other"}, format="multipart"
        )
    assert response.status_code == 400 and "unknown condition 'other'" in response.json()["detail"]
    client.force_login(researcher)
    with subjects.open("rb") as upload:
        page = client.post(f"/researcher/studies/{slug}/start/audit/", {"subjects": upload})
    assert page.status_code == 400 and "the subjects carry an effort series" in page.content.decode()
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_a_plan_of_a_design_with_too_few_pairs_is_refused_when_requested(api, researcher):
    """tests/studies/format2_example.json rates one pair per condition: no slopes to estimate (the job failed with
    "correlations must lie strictly between -1 and 1, got nan")."""
    slug = load(researcher, ROOT / "tests" / "studies" / "format2_example.json")
    response = api.post(f"/api/studies/{slug}/plans/", {"n": 8, "studies": 2}, format="json")
    assert response.status_code == 400
    assert (
        "needs at least 3 distinct pairs per condition: 'shown' rates 1 distinct pair; 'hidden' rates 1 distinct pair"
    ) in response.json()["detail"]
    assert not Job.objects.exists()
