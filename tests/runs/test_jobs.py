"""Background jobs: the API answers 202 with the job's URL, a real worker (db_worker) runs the job,
its files are stored by run and served by any web server, failures leave no files, concurrent
runs of one study do not collide."""

import errno
import threading
import time
from unittest import mock

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.db import ProgrammingError, connection
from rest_framework.test import APIClient

from participation.simulate import simulate_participants
from runs.analysis_runs import analysis_run_create
from runs.execution import execute_job
from runs.models import AnalysisRun, AuditRun, Calibration, Job
from runs.runners import RUNNERS
from runs.services import job_create
from runs.storage import list_files
from tests.conftest import required, run_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def stored_names() -> set[str]:
    """Every file in the run storage (relative names; none while its folder is not made yet)."""
    found: set[str] = set()
    if not default_storage.exists(""):
        return found

    def walk(prefix: str) -> None:
        dirs, files = default_storage.listdir(prefix)
        found.update(f"{prefix}/{f}".lstrip("/") for f in files)
        for d in dirs:
            walk(f"{prefix}/{d}".lstrip("/"))

    walk("")
    return found


@pytest.mark.slow
def test_analysis_job_runs_on_the_worker_with_generalise_and_its_report_is_served(
    answered_demo, api, researcher, client, no_mixed_models
):
    """One analysis job (each costs a full analysis) checks the queueing, the worker's run, the report's serving
    and the generalise option; an unknown generalise value is refused."""
    bad = api.post("/api/studies/effort-demo/analyses/", {"generalise": "everything"}, format="json")
    assert bad.status_code == 400 and list(bad.json()["fields"]) == ["generalise"]
    body = {"seed": 2, "n_resamples": 100, "generalise": "stimuli"}
    response = api.post("/api/studies/effort-demo/analyses/", body, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert response["Location"] == body["url"] == f"/api/jobs/{body['id']}/"
    assert body["status"] == "queued" and AnalysisRun.objects.count() == 0  # nothing ran in the request
    run_jobs()
    job = api.get(body["url"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert job["progress"] == 1.0 and "started" in job["log"] and "finished" in job["log"]
    run = AnalysisRun.objects.get(pk=job["result"]["analysis_run"])
    assert not run.files_prefix.startswith("/") and "report.html" in list_files(run.files_prefix)
    assert {c["condition"] for c in job["result"]["calibrations"]} == {"arrests", "income"}
    assert set(Calibration.objects.values_list("generalise", flat=True)) == {"stimuli"}
    client.force_login(researcher)
    report = client.get(job["result"]["report_url"])
    assert report.status_code == 200 and report["Content-Type"].startswith("text/html")
    assert client.get("/researcher/studies/effort-demo/report/report.html").status_code == 200
    listed = api.get("/api/jobs/").json()
    assert [j["id"] for j in listed["results"]] == [body["id"]]


def test_jobs_and_their_files_are_private(demo_study, api, other_researcher, client):
    simulate_participants("effort-demo", n=6, seed=3)
    url = api.post("/api/studies/effort-demo/differential-parity/", {}, format="json").json()["url"]
    run_jobs()
    job = Job.objects.get()
    assert job.status == "succeeded", job.error
    other = APIClient()
    other.force_authenticate(other_researcher)
    assert other.get(url).status_code == 404
    assert other.get("/api/jobs/").json()["count"] == 0
    assert other.get("/api/studies/effort-demo/differential-parity/").status_code == 404
    client.force_login(other_researcher)
    assert client.get(f"/researcher/jobs/{job.pk}/report.html").status_code == 404
    tables = api.get("/api/studies/effort-demo/differential-parity/").json()
    assert set(tables) == {"fair_scores_vs_ai", "disagreements"}  # conditions are different tasks: not bridged


def test_a_failed_job_says_why_and_leaves_no_files(demo_study, api, tmp_path):
    bad = tmp_path / "subjects.csv"
    bad.write_text("id,x_1,x_2\n1,2,3\n")
    with bad.open("rb") as fh:
        response = api.post("/api/studies/effort-demo/audits/", {"subjects": fh}, format="multipart")
    assert response.status_code == 202
    assert stored_names() == {f"jobs/{response.json()['id']}/inputs/subjects.csv"}
    run_jobs()
    job = api.get(response["Location"]).json()
    assert job["status"] == "failed" and "at least 3 effort columns" in job["error"]
    assert stored_names() == set() and AuditRun.objects.count() == 0


def test_an_upload_that_cannot_be_stored_is_a_json_error(demo_study, api, tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("id,x_1,x_2,x_3\n1,2,3,4\n")
    with mock.patch.object(default_storage, "save", side_effect=OSError(errno.ENOSPC, "No space left on device")):
        with path.open("rb") as fh:
            response = api.post("/api/studies/effort-demo/audits/", {"subjects": fh}, format="multipart")
    assert response.status_code == 507 and response["Content-Type"] == "application/json"
    assert "No space left on device" in response.json()["detail"]
    assert stored_names() == set() and Job.objects.count() == 0


def test_a_job_over_its_time_limit_fails_clearly(answered_demo, api, settings):
    settings.JOB_MAX_SECONDS = 0.05
    api.post("/api/studies/effort-demo/analyses/", {"seed": 2, "n_resamples": 20000}, format="json")
    run_jobs()
    job = Job.objects.get()
    assert job.status == "failed" and "longer than its limit" in job.error
    assert stored_names() == set() and AnalysisRun.objects.count() == 0


def times_out_between_a_query_and_its_result(context):
    """What a time limit expiring inside psycopg leaves behind when its SIGALRM lands after a query was sent and
    before its result was read (rare, it depends on timing; certain here): a connection with a command in
    progress, on which every later query fails."""
    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("leaves a PostgreSQL query in progress: set DATABASE_URL")
    connection.ensure_connection()
    connection.connection.pgconn.send_query(b"SELECT pg_sleep(5)")
    time.sleep(5)  # the limit expires here
    return {"never": "reached"}, ""


def times_out_and_its_clean_up_fails(context):
    """A time limit expiring inside a transaction whose clean-up then fails on the interrupted connection: a
    database error is raised in the timeout's place (seen under load: Django's atomic block restoring autocommit)."""
    try:
        time.sleep(5)  # the limit expires here
    finally:
        raise ProgrammingError("can't change 'autocommit' now: connection in transaction status ACTIVE")


@pytest.mark.postgres
@pytest.mark.parametrize("runner", [times_out_between_a_query_and_its_result, times_out_and_its_clean_up_fails])
def test_a_time_limit_inside_a_query_still_fails_the_job_clearly(researcher, settings, monkeypatch, runner):
    """The failure is recorded on a fresh connection, with the time limit as its reason (not an internal
    error, nor a job process that dies writing it)."""
    settings.JOB_MAX_SECONDS = 0.2
    monkeypatch.setitem(RUNNERS, Job.Kind.SITUATION_TESTING, runner)
    job = job_create(kind=Job.Kind.SITUATION_TESTING, user=researcher, params={})
    assert execute_job(str(job.pk)) == Job.Status.FAILED
    job.refresh_from_db()
    assert job.error == "the job ran longer than its limit of 0.2 s (JOB_MAX_SECONDS)", job.log
    assert job.log.splitlines()[-1].endswith("failed: the job ran longer than its limit of 0.2 s (JOB_MAX_SECONDS)")


@pytest.mark.slow
def test_two_runs_at_once_get_their_own_folders_and_versions(answered_demo, tmp_path, no_mixed_models):
    """Red-team finding 9: concurrent analysis runs of one study (one failed on
    calibration_version_unique; two in the same second shared a folder)."""
    connection.close()
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def run(i: int) -> None:
        try:
            barrier.wait()
            analysis_run_create(slug="effort-demo", out_dir=tmp_path / f"r{i}", seed=i, n_resamples=10)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    runs = list(AnalysisRun.objects.all())
    assert len(runs) == 2 and runs[0].files_prefix != runs[1].files_prefix
    for condition in ("arrests", "income"):
        versions = sorted(Calibration.objects.filter(condition__key=condition).values_list("version", flat=True))
        assert versions == [1, 2]


@pytest.mark.slow
def test_command_runs_are_stored_too(answered_demo, tmp_path, client, researcher, no_mixed_models):
    call_command("analyze_study", "effort-demo", out=str(tmp_path / "a"), resamples=10)
    run = AnalysisRun.objects.get()
    assert (tmp_path / "a" / "report.html").exists() and "report.html" in list_files(run.files_prefix)
    client.force_login(researcher)
    assert client.get(f"/researcher/runs/analysis/{run.pk}/report.html").status_code == 200
    assert client.get(f"/researcher/runs/analysis/{run.pk}/..%2Fsecret.html").status_code == 404
