"""Who sees a job: access to a study's jobs follows the study (owner, collaborators, superusers),
not who started the job; a job tied to no study (situation testing) is its creator's."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.models import Job
from runs.selectors import jobs_visible_to

pytestmark = pytest.mark.django_db


def _sees(user, job: Job) -> bool:
    api = APIClient()
    api.force_authenticate(user)
    browser = Client()
    browser.force_login(user)
    seen = (
        api.get(f"/api/jobs/{job.pk}/").status_code == 200,
        api.get("/api/jobs/").json()["count"] == 1,
        browser.get(f"/researcher/jobs/{job.pk}/").status_code == 200,
    )
    assert len(set(seen)) == 1, seen  # the API, its list and the page agree
    return seen[0]


def test_a_removed_collaborator_loses_the_jobs_they_started(demo_study, researcher, other_researcher):
    demo_study.collaborators.add(other_researcher)
    job = Job.objects.create(kind=Job.Kind.ANALYSIS, study=demo_study, created_by=other_researcher)
    assert _sees(other_researcher, job) and _sees(researcher, job)
    demo_study.collaborators.remove(other_researcher)
    assert not _sees(other_researcher, job)
    assert Client().get(f"/researcher/jobs/{job.pk}/report.html").status_code == 302  # login first
    browser = Client()
    browser.force_login(other_researcher)
    assert browser.get(f"/researcher/jobs/{job.pk}/report.html").status_code == 404
    assert _sees(researcher, job)  # the owner still does
    assert list(jobs_visible_to(other_researcher)) == []


def test_a_job_without_a_study_stays_its_creators(researcher, other_researcher):
    job = Job.objects.create(kind=Job.Kind.SITUATION_TESTING, study=None, created_by=other_researcher)
    assert _sees(other_researcher, job)
    assert not _sees(researcher, job)
