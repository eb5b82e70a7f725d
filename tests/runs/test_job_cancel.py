"""Cancelling a job: the API (``POST /api/jobs/<id>/cancel/``), the job page's button (POST with
the CSRF token) and the admin action; only those who may see the job's study (owner,
collaborators, superusers) may cancel it (issue 22, finding 3). A running job being stopped by its
worker is in test_job_lifecycle.py."""

import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from runs import execution, services
from runs.execution import execute_job
from runs.models import AnalysisRun, Calibration, Job
from runs.services import JobQuotaExceeded, job_cancel, job_create, job_folder
from runs.storage import list_files

pytestmark = pytest.mark.django_db


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def job(demo_study, researcher) -> Job:
    return job_create(kind=Job.Kind.ANALYSIS, user=researcher, study=demo_study, params={"seed": 1})


def status(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def test_the_api_cancels_a_queued_job_and_refuses_a_finished_one(job, researcher):
    response = api_as(researcher).post(f"/api/jobs/{job.pk}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled" and "cancelled by alice (queued)" in response.json()["log"]
    again = api_as(researcher).post(f"/api/jobs/{job.pk}/cancel/")
    assert again.status_code == 409
    assert again.json()["detail"] == "The job has already ended (cancelled); there is nothing to cancel."


def test_a_collaborator_may_cancel_others_may_not(job, demo_study, other_researcher):
    assert api_as(other_researcher).post(f"/api/jobs/{job.pk}/cancel/").status_code == 404
    assert APIClient().post(f"/api/jobs/{job.pk}/cancel/").status_code in (401, 403)
    assert status(job) == Job.Status.QUEUED
    demo_study.collaborators.add(other_researcher)
    assert api_as(other_researcher).post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    assert status(job) == Job.Status.CANCELLED


def test_a_cancelled_job_frees_its_place_in_the_quota_and_keeps_no_upload(researcher, settings):
    settings.JOBS_QUEUED_PER_RESEARCHER = 1
    upload = SimpleUploadedFile("data.csv", b"a,b\n1,2\n", content_type="text/csv")
    job = job_create(kind=Job.Kind.SITUATION_TESTING, user=researcher, params={}, uploads={"data": upload})
    assert list_files(f"{job_folder(job.pk)}/inputs")
    with pytest.raises(JobQuotaExceeded):
        job_create(kind=Job.Kind.SITUATION_TESTING, user=researcher, params={})
    assert api_as(researcher).post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    assert not list_files(f"{job_folder(job.pk)}/inputs")
    job_create(kind=Job.Kind.SITUATION_TESTING, user=researcher, params={})  # room again


def test_the_job_page_has_a_cancel_button_that_needs_the_csrf_token(job, researcher, other_researcher):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(researcher)
    page = browser.get(f"/researcher/jobs/{job.pk}/")
    assert f'action="/researcher/jobs/{job.pk}/cancel/"' in page.text and "Cancel this job" in page.text
    assert browser.post(f"/researcher/jobs/{job.pk}/cancel/").status_code == 403  # no token
    assert browser.get(f"/researcher/jobs/{job.pk}/cancel/").status_code == 405
    assert status(job) == Job.Status.QUEUED
    stranger = Client()
    stranger.force_login(other_researcher)
    assert stranger.post(f"/researcher/jobs/{job.pk}/cancel/").status_code == 404
    token = page.cookies["csrftoken"].value
    done = browser.post(f"/researcher/jobs/{job.pk}/cancel/", {"csrfmiddlewaretoken": token})
    assert done.status_code == 302 and done["Location"] == f"/researcher/jobs/{job.pk}/"
    assert status(job) == Job.Status.CANCELLED
    shown = browser.get(f"/researcher/jobs/{job.pk}/")
    assert "The job was cancelled" in shown.text and "Cancel this job" not in shown.text
    assert 'data-finished="1"' in shown.text  # the page stops polling


def test_the_admin_action_cancels_the_selected_jobs(job, demo_study, researcher):
    finished = Job.objects.create(kind=Job.Kind.ANALYSIS, study=demo_study, status=Job.Status.SUCCEEDED)
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", password="root-pass-123"))
    response = admin.post(
        "/admin/runs/job/", {"action": "cancel_jobs", "_selected_action": [job.pk, finished.pk]}, follow=True
    )
    assert "1 of 2 jobs cancelled (the others had already ended)." in response.text
    assert status(job) == Job.Status.CANCELLED and status(finished) == Job.Status.SUCCEEDED
    assert "cancelled by root (queued)" in Job.objects.get(pk=job.pk).log
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", password="staff-pass-123", is_staff=True))
    assert staff.get("/admin/runs/job/").status_code == 403  # no permission on jobs, no action


@pytest.fixture
def analysis_job(answered_demo, researcher, no_mixed_models) -> Job:
    """An analysis job of the demo answered by 12 simulated participants (enough for its Likert Calibrations: a
    cancelled run must store none), with 10 resamples and no mixed models (the tests are on storing, not on
    intervals or tables)."""
    return job_create(
        kind=Job.Kind.ANALYSIS, user=researcher, study=answered_demo, params={"seed": 1, "n_resamples": 10}
    )


@pytest.mark.slow
def test_an_analysis_cancelled_at_the_last_moment_stores_nothing(analysis_job, researcher, monkeypatch):
    """The cancel lands after the report is computed and its files copied, just before the run's rows are
    stored: the run's transaction finds the job cancelled (it locks the job's row), stores no run and no
    Calibration, and the copied report folder is deleted. Before, the run was stored and served as the
    latest report of a cancelled job."""
    copy = services.store_directory

    def copy_then_cancel(out_dir, prefix):
        saved = copy(out_dir, prefix)
        assert job_cancel(job_id=analysis_job.pk, user=researcher)
        return saved

    monkeypatch.setattr(services, "store_directory", copy_then_cancel)
    assert execute_job(str(analysis_job.pk)) == Job.Status.CANCELLED
    assert status(analysis_job) == Job.Status.CANCELLED and analysis_job.result is None
    assert "cancelled before its analysis run was stored: nothing was stored" in analysis_job.log
    assert not AnalysisRun.objects.exists() and not Calibration.objects.exists()
    assert list_files("analysis") == [] and not list_files(job_folder(analysis_job.pk))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_cancel_during_the_runs_transaction_waits_for_it_and_finds_the_job_ended(researcher, tmp_path):
    """Real interleaving on PostgreSQL: the cancel arrives while the run's transaction is open; it waits
    for the job's row lock and then finds the job succeeded (and the run stored), never the two at once."""
    from tests.surveys.test_concurrency import _postgres_only

    _postgres_only()
    job = job_create(kind=Job.Kind.SITUATION_TESTING, user=researcher, params={})
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)
    (tmp_path / "report.html").write_text("<p>x</p>")
    inside, outcome = threading.Event(), {}

    def store():
        try:
            with services.run_storing(tmp_path, "analysis", job_id=job.pk) as prefix:
                outcome["prefix"] = prefix
                inside.set()
                time.sleep(0.5)  # the run's rows would be written here
        finally:
            connection.close()

    def cancel():
        try:
            assert inside.wait(timeout=10)
            start = time.monotonic()
            outcome["cancelled"] = job_cancel(job_id=job.pk, user=researcher)
            outcome["waited"] = time.monotonic() - start
        finally:
            connection.close()

    threads = [threading.Thread(target=store), threading.Thread(target=cancel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert outcome["cancelled"] is False and outcome["waited"] > 0.2
    assert status(job) == Job.Status.SUCCEEDED and list_files(outcome["prefix"]) == ["report.html"]


@pytest.mark.slow
def test_between_the_runs_commit_and_its_result_the_job_reads_as_running_and_a_cancel_finds_it_ended(
    analysis_job, researcher, monkeypatch
):
    """The run's transaction marks the job succeeded before it commits. Between the run's commit and the result's
    recording (one analysis checks both): a client polling the API or the job page sees the job still running,
    never "succeeded" with no result to follow; a cancel is refused, and the run and the job agree."""
    record = execution.job_succeed
    seen = {}

    def look_cancel_then_record(**kwargs):
        seen["api"] = api_as(researcher).get(f"/api/jobs/{analysis_job.pk}/").json()
        browser = Client()
        browser.force_login(researcher)
        seen["page"] = browser.get(f"/researcher/jobs/{analysis_job.pk}/").content.decode()
        seen["stored"] = status(analysis_job)
        seen["refused"] = not job_cancel(job_id=analysis_job.pk, user=researcher)
        return record(**kwargs)

    monkeypatch.setattr(execution, "job_succeed", look_cancel_then_record)
    assert execute_job(str(analysis_job.pk)) == Job.Status.SUCCEEDED and seen["refused"]
    assert seen["stored"] == Job.Status.SUCCEEDED  # the row, as the run's transaction left it
    assert seen["api"]["status"] == "running" and seen["api"]["result"] is None
    assert 'data-finished="0"' in seen["page"] and 'id="job-status" role="status">running<' in seen["page"]
    assert status(analysis_job) == Job.Status.SUCCEEDED
    run = AnalysisRun.objects.get()
    assert analysis_job.result["analysis_run"] == run.pk and analysis_job.files_prefix == run.files_prefix
    done = api_as(researcher).get(f"/api/jobs/{analysis_job.pk}/").json()
    assert done["status"] == "succeeded" and done["result"]["report_url"]
