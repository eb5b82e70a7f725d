"""Heavy study-file work runs in background jobs, never in a web request (issue 22, finding 4): a builder
CSV beyond the inline bound and a study file beyond ``INLINE_MAX_BYTES`` are stored and queued (nothing is
parsed, built or validated in the request), the job's page leads to the same preview, "Save" / "Load" of a
large file is a load job too, a bad file's problems (path: rule) are listed on the job page, and nothing
stored is lost. Small inputs stay inline (tests/studies/test_builder_views.py) within a structural bound."""

import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

import research.study_build
import research.study_upload
import research.study_upload_views
from research.study_upload import BUILD_INLINE_MAX_BYTES, INLINE_MAX_BYTES, STASH_PREFIX
from runs.models import Job
from studies import builder
from studies.builder import builds_inline
from studies.models import Study
from studies.services import study_load
from studies.synthetic_defendants import PROFILE, draw_defendants
from tests.conftest import run_jobs
from tests.studies.test_builder_views import form

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(researcher) -> Client:
    client = Client()
    client.force_login(researcher)
    return client


def csv_upload(frame: pd.DataFrame) -> SimpleUploadedFile:
    out = io.StringIO()
    frame.to_csv(out, index=False)
    return SimpleUploadedFile("defendants.csv", out.getvalue().encode(), content_type="text/csv")


def stashed(user) -> list[str]:
    try:
        return default_storage.listdir(f"{STASH_PREFIX}/{user.pk}")[1]
    except FileNotFoundError:
        return []


def forbid(monkeypatch, module, name: str) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} ran inside the web request")

    monkeypatch.setattr(module, name, refuse)


def test_the_inline_bound_is_rows_and_cells():
    """The builder's worst inline case: 200 rows and 2,500 cells (Gower: 200 x 2,500 comparisons)."""
    assert builder.INLINE_MAX_ROWS * builder.INLINE_MAX_CELLS == 500_000
    assert builds_inline(pd.DataFrame(0, index=range(200), columns=range(12)))
    assert not builds_inline(pd.DataFrame(0, index=range(200), columns=range(13)))
    assert not builds_inline(pd.DataFrame(0, index=range(201), columns=range(2)))
    assert not builds_inline(pd.DataFrame(0, index=range(40), columns=range(63)))


def test_a_large_build_is_a_job_that_leads_to_the_preview_and_saves_by_a_job(alice, researcher, monkeypatch):
    frame = draw_defendants(1500, seed=5)
    with monkeypatch.context() as patch:
        forbid(patch, research.study_build, "build_and_stash")
        response = alice.post("/researcher/build/", form(subjects=csv_upload(frame)))
    assert response.status_code == 302 and response["Location"].startswith("/researcher/jobs/")
    job = Job.objects.get()
    assert job.kind == Job.Kind.STUDY_BUILD and job.status == Job.Status.QUEUED and job.study is None
    assert job.params["stratify_by"] == "race" and job.params["group_columns"] == ["sex", "race"]
    assert stashed(researcher) == []  # nothing was built in the request
    page = alice.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200 and "Study build (from a CSV)" in html and 'value="0.000"' in html
    assert "it opens the preview when the job is done" in html and '<a href="/researcher/build/">' in html

    run_jobs()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    preview = alice.get(response["Location"])
    assert preview.status_code == 302 and preview["Location"] == job.result["next_url"]
    with monkeypatch.context() as patch:  # the preview shows the job's summary: no validation in the request
        forbid(patch, research.study_upload, "validated_spec")
        html = alice.get(preview["Location"]).content.decode()
    assert "Preview: Disagreement study: defendants" in html
    assert "<b>1500</b>subjects in the pool" in html
    assert "Each participant sees 5 items of each value of <code>race</code>" in html
    load_url = f"/researcher/load/{job.result['digest']}/?from=build"
    assert f'action="{load_url}"' in html

    response = alice.post(load_url)
    assert response.status_code == 302 and not Study.objects.exists()  # loaded by a job, not here
    run_jobs()
    done = alice.get(response["Location"], follow=True)
    assert done.redirect_chain[-1][0] == "/researcher/studies/defendants-disagreement/"
    assert "defendants-disagreement v1: created as a new study, owned by you." in done.content.decode()
    study = Study.objects.get(slug="defendants-disagreement")
    assert study.owner == researcher and len(study.spec["pools"][0]["subjects"]) == 1500
    assert stashed(researcher) == []  # the stash and its preview record are gone once loaded


def test_a_csv_above_the_byte_bound_is_not_even_parsed_in_the_request(alice, monkeypatch):
    frame = draw_defendants(40, seed=5)
    frame["notes"] = "x" * (BUILD_INLINE_MAX_BYTES // 40)
    forbid(monkeypatch, research.study_build, "read_subjects")
    response = alice.post("/researcher/build/", form(subjects=csv_upload(frame)))
    assert response.status_code == 302 and Job.objects.get().kind == Job.Kind.STUDY_BUILD


def test_a_bad_large_build_lists_its_problems_on_the_job_page(alice, researcher):
    response = alice.post(
        "/researcher/build/", form(subjects=csv_upload(draw_defendants(1500, seed=5)), roles={"juv_misd": "hidden"})
    )
    run_jobs()
    job = Job.objects.get()
    assert job.status == Job.Status.FAILED
    html = alice.get(response["Location"]).content.decode()
    assert "The file has 1 problem; nothing was stored" in html
    assert "<li>--profile: {juv_misd} is neither a feature nor a group column (it is kept hidden)" in html
    assert stashed(researcher) == [] and not Study.objects.exists()
    assert default_storage.listdir("jobs")[0] == []  # the job's stored input is deleted too


def large_study(researcher, subjects: int = 2000) -> dict:
    """A valid format 2 study file larger than INLINE_MAX_BYTES (the built study of ``subjects`` rows)."""
    frame = draw_defendants(subjects, seed=3)
    spec = builder.build_study(
        "disagreement",
        frame.to_csv(index=False).encode(),
        "id",
        label_column="ai_label",
        group_columns=["race", "sex"],
        profile=PROFILE,
        per_participant=10,
        slug="large-upload",
    )
    assert len(json.dumps(spec)) > INLINE_MAX_BYTES
    return spec


def upload(client: Client, spec: dict):
    raw = json.dumps(spec).encode()
    return client.post("/researcher/upload/", {"file": SimpleUploadedFile("study.json", raw)})


@pytest.mark.slow
def test_a_large_upload_is_checked_and_previewed_by_a_job(alice, researcher, other_researcher, monkeypatch):
    spec = large_study(researcher)
    study_load(spec=spec, owner=researcher)
    changed = {**spec, "title": "Changed <title>"}
    with monkeypatch.context() as patch:
        forbid(patch, research.study_upload, "validated_spec")
        response = upload(alice, changed)
    assert response.status_code == 302 and Job.objects.get().kind == Job.Kind.STUDY_UPLOAD
    bob = Client()
    bob.force_login(other_researcher)
    assert bob.get(response["Location"]).status_code == 404  # another researcher's job
    run_jobs()
    preview_url = alice.get(response["Location"])["Location"]
    assert preview_url.startswith("/researcher/upload/")
    with monkeypatch.context() as patch:
        forbid(patch, research.study_upload_views, "stashed_spec")
        forbid(patch, research.study_upload_views, "study_preview")
        html = alice.get(preview_url).content.decode()
    assert "Loading this file: <strong>updated in place" in html
    assert "&#x27;Changed &lt;title&gt;&#x27;" in html  # the change, escaped
    block = next(b for b in spec["blocks"] if b["type"] == "task")
    assert f"<code>{block['key']}</code> (agree): 10 subjects" in html  # the job's record lists each block's items
    assert bob.get(preview_url).status_code == 404
    digest = preview_url.rstrip("/").rsplit("/", 1)[1]
    assert alice.post(preview_url).status_code == 200  # a large file is never loaded inside the request
    assert Study.objects.get().title != "Changed <title>"
    response = alice.post(f"/researcher/load/{digest}/")
    run_jobs()
    alice.get(response["Location"])
    assert Study.objects.get().title == "Changed <title>"


def test_a_bad_large_upload_reports_path_rule_and_keeps_the_current_version(alice, researcher):
    spec = large_study(researcher)
    study = study_load(spec=spec, owner=researcher).study
    broken = json.loads(json.dumps(spec))
    broken["blocks"][3]["assignment"]["per_participant"] = 0
    broken["completion"] = {}
    response = upload(alice, broken)
    run_jobs()
    html = alice.get(response["Location"]).content.decode()
    assert "The file has 2 problems; nothing was stored" in html
    assert "<li>blocks[3].assignment.per_participant: must be &gt;= 1 (got 0)</li>" in html
    assert "<li>completion:" in html
    before = study.spec_hash
    study.refresh_from_db()
    assert Study.objects.count() == 1 and study.spec_hash == before
    assert stashed(researcher) == []


def test_job_quota_applies_to_study_file_jobs(alice, settings):
    settings.JOBS_QUEUED_PER_RESEARCHER = 1
    assert alice.post("/researcher/build/", form(subjects=csv_upload(draw_defendants(600, seed=5)))).status_code == 302
    refused = alice.post("/researcher/build/", form(subjects=csv_upload(draw_defendants(600, seed=6))))
    assert refused.status_code == 429 and "JOBS_QUEUED_PER_RESEARCHER = 1" in refused.content.decode()
    assert Job.objects.count() == 1


def test_queueing_a_job_does_not_load_the_science_into_the_web_process():
    """runs.tasks imports the runners (pandas, scipy, statsmodels) only in the worker: the first upload of a
    web worker took 10.9 s when queueing a job imported them."""
    code = (
        "import django, sys; django.setup(); import config.urls, runs.services, runs.tasks, runs.study_file_views; "
        "print(sorted(m for m in ('pandas', 'scipy', 'statsmodels', 'sklearn') if m in sys.modules))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stderr
