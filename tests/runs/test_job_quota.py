"""Issue 22 #5: a researcher may have at most JOBS_QUEUED_PER_RESEARCHER jobs queued or running (429
beyond, in the API and the dashboard), and one researcher's burst does not starve another's jobs."""

from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from runs.models import Job

ANALYSES = "/api/studies/effort-demo/analyses/"


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_refuses_jobs_beyond_the_quota_with_429(demo_study, researcher, other_researcher, settings):
    settings.JOBS_QUEUED_PER_RESEARCHER = 2
    demo_study.collaborators.add(other_researcher)
    alice = _api(researcher)
    for seed in (1, 2):
        assert alice.post(ANALYSES, {"seed": seed, "n_resamples": 100}, format="json").status_code == 202
    refused = alice.post(ANALYSES, {"seed": 3, "n_resamples": 100}, format="json")
    assert refused.status_code == 429 and refused.json()["code"] == "job_quota", refused.content
    assert "2 jobs queued or running" in refused.json()["detail"]
    assert "JOBS_QUEUED_PER_RESEARCHER = 2" in refused.json()["detail"]
    assert Job.objects.filter(created_by=researcher).count() == 2
    # another researcher's quota is their own
    assert _api(other_researcher).post(ANALYSES, {"seed": 4, "n_resamples": 100}, format="json").status_code == 202
    # a finished job frees its place
    first = Job.objects.filter(created_by=researcher).order_by("created_at").first()
    Job.objects.filter(pk=first.pk).update(status=Job.Status.SUCCEEDED)
    assert alice.post(ANALYSES, {"seed": 5, "n_resamples": 100}, format="json").status_code == 202


def test_the_dashboard_refuses_jobs_beyond_the_quota_with_429(client, demo_study, researcher, settings):
    settings.JOBS_QUEUED_PER_RESEARCHER = 1
    client.force_login(researcher)
    url = "/researcher/studies/effort-demo/start/analysis/"
    assert client.post(url, {"seed": "1", "n_resamples": "100"}).status_code == 302
    refused = client.post(url, {"seed": "2", "n_resamples": "100"})
    assert refused.status_code == 429
    assert "You already have 1 jobs queued or running" in refused.content.decode()
    assert Job.objects.count() == 1


def test_one_researchers_burst_does_not_starve_another(demo_study, researcher, other_researcher, settings):
    """The worker takes the highest priority first: each further job of a researcher ranks lower."""
    settings.JOBS_QUEUED_PER_RESEARCHER = 5
    demo_study.collaborators.add(other_researcher)
    alice = _api(researcher)
    burst = [alice.post(ANALYSES, {"seed": s, "n_resamples": 100}, format="json").json()["id"] for s in range(4)]
    bobs = _api(other_researcher).post(ANALYSES, {"seed": 9, "n_resamples": 100}, format="json").json()["id"]
    job_of_task = dict(Job.objects.values_list("task_id", "id"))
    queue = [str(job_of_task[str(task.id)]) for task in DBTaskResult.objects.ready()]  # the worker's order
    assert queue == [burst[0], bobs, *burst[1:]]
