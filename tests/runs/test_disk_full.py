"""Issue 22 #11, a full disk: a failed job leaves no truncated file and no run folder, the browser's
upload and the builder's save answer 507 with a message and keep no truncated stash, and a
truncated stash left behind is written again rather than making the file un-uploadable."""

import errno
import hashlib
import json
from pathlib import Path
from unittest import mock

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.models import AnalysisRun, Calibration, Job
from runs.services import job_create
from tests.conftest import DEMO_FILE, run_jobs
from tests.studies.test_builder_views import form


def _full_disk_after(n_saves: int):
    """A ``default_storage.save`` that, like FileSystemStorage on a full disk, leaves the file it was
    writing truncated (0 bytes) after ``n_saves`` successful saves and raises ENOSPC."""
    real_save = default_storage.save
    calls: list[str] = []

    def save(name, content, **kwargs):
        calls.append(name)
        if len(calls) > n_saves:
            target = Path(default_storage.path(name))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(name, content, **kwargs)

    return mock.patch.object(default_storage, "save", side_effect=save)


def _tree() -> list[str]:
    """Every file and folder in the run storage."""
    root = Path(default_storage.location)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_job_failing_on_a_full_disk_leaves_no_file_and_no_folder(answered_demo, researcher, no_mixed_models):
    # 10 resamples: the report's files are stored whatever its intervals (the API asks for at least 100)
    job_create(kind=Job.Kind.ANALYSIS, user=researcher, study=answered_demo, params={"seed": 2, "n_resamples": 10})
    with _full_disk_after(2):
        run_jobs()
    job = Job.objects.get()
    assert job.status == "failed" and "No space left on device" in job.error
    assert [p for p in _tree() if not p.startswith("study-uploads")] in ([], ["analysis"])
    assert AnalysisRun.objects.count() == 0 and Calibration.objects.count() == 0


@pytest.mark.django_db
def test_an_upload_on_a_full_disk_is_a_507_page_and_keeps_no_stash(client, researcher):
    client.force_login(researcher)
    raw = DEMO_FILE.read_bytes()
    with _full_disk_after(0):
        response = client.post("/researcher/upload/", {"file": SimpleUploadedFile("s.json", raw, "application/json")})
    assert response.status_code == 507 and response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "could not be stored on the server (No space left on device); nothing was kept" in body
    assert not [p for p in _tree() if p.endswith(".json")]
    again = client.post("/researcher/upload/", {"file": SimpleUploadedFile("s.json", raw, "application/json")})
    assert again.status_code == 302 and client.get(again["Location"]).status_code == 200


@pytest.mark.django_db
def test_a_truncated_stash_is_written_again(client, researcher):
    client.force_login(researcher)
    raw = json.dumps(json.loads(DEMO_FILE.read_text())).encode()
    digest = hashlib.sha256(raw).hexdigest()
    truncated = Path(default_storage.path(f"study-uploads/{researcher.pk}/{digest}.json"))
    truncated.parent.mkdir(parents=True, exist_ok=True)
    truncated.write_bytes(raw[:100])
    response = client.post("/researcher/upload/", {"file": SimpleUploadedFile("s.json", raw, "application/json")})
    assert response.status_code == 302
    assert client.get(response["Location"]).status_code == 200
    assert truncated.read_bytes() == raw and len(list(truncated.parent.iterdir())) == 1


@pytest.mark.django_db
def test_a_builder_save_on_a_full_disk_is_a_507_page(client, researcher):
    client.force_login(researcher)
    with _full_disk_after(0):
        response = client.post("/researcher/build/", form())
    assert response.status_code == 507
    assert "No space left on device" in response.content.decode()
    assert not [p for p in _tree() if p.endswith(".json")]


@pytest.mark.django_db
def test_a_run_started_in_the_browser_on_a_full_disk_is_a_507_page(client, researcher, demo_study):
    client.force_login(researcher)
    subjects = SimpleUploadedFile("s.csv", b"id,x_1,x_2,x_3\n1,2,3,4\n", "text/csv")
    with _full_disk_after(0):
        response = client.post("/researcher/studies/effort-demo/start/audit/", {"subjects": subjects})
    assert response.status_code == 507
    assert "No space left on device" in response.content.decode() and not Job.objects.exists()
    assert _tree() in ([], ["jobs"])  # no folder of the refused job
