"""Another researcher's study never leaks through a study file with its slug (issue 22, finding 1):
the upload preview and the builder's save say only that the slug is taken, nothing of the study
(title, consent, codes, URL, pool values, versions) nor whether it has participants. The API has no
endpoint that previews, validates or loads a study file (``research/api/urls.py``)."""

import copy
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from participation.services import participant_arrive
from studies.models import Study
from studies.services import study_load
from tests.conftest import DEMO_FILE
from tests.studies.test_builder_views import form

pytestmark = pytest.mark.django_db
FORMAT2_FILE = Path(__file__).resolve().parent.parent / "studies" / "format2_example.json"
SECRETS = {
    "title": "Alice private title",
    "consent": "Alice private consent wording",
    "completed": "ALICEDONE1",
    "failed_attention": "ALICEFAIL2",
    "screened_out": "ALICESCRN3",
    "url": "https://alice.example.org/secret-return",
}
POOL_SECRET = "alice-private-charge"


def _alices(spec: dict) -> dict:
    """``spec`` with alice's private values in every field the preview used to diff."""
    spec = copy.deepcopy(spec)
    spec["title"], spec["consent"]["text"] = SECRETS["title"], SECRETS["consent"]
    codes = {k: SECRETS[k] for k in ("completed", "failed_attention", "screened_out")}
    spec["prolific"] = {"completion_codes": codes}
    spec["completion"] = {"code": SECRETS["completed"], "url": SECRETS["url"]}
    if spec["format"] == 2:
        spec["pools"][0]["subjects"][0]["features"]["charge"] = POOL_SECRET
    return spec


def _without_tokens(body: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)


def _assert_nothing_of_alices(body: str) -> None:
    for secret in [*SECRETS.values(), POOL_SECRET, "alice"]:
        assert secret not in body
    for outcome in ("has participants", "no participants", "keep theirs", "version 1", "replacing", "No field differs"):
        assert outcome not in body


@pytest.fixture
def bob(other_researcher) -> Client:
    client = Client()
    client.force_login(other_researcher)
    return client


@pytest.mark.parametrize("path", [DEMO_FILE, FORMAT2_FILE], ids=["format1", "format2"])
def test_the_upload_preview_says_only_that_the_slug_is_taken(bob, researcher, path):
    spec = json.loads(path.read_text())
    study_load(spec=_alices(spec), owner=researcher)
    raw = json.dumps(spec).encode()
    preview_url = bob.post("/researcher/upload/", {"file": SimpleUploadedFile("s.json", raw)})["Location"]
    before = bob.get(preview_url).content.decode()
    _assert_nothing_of_alices(before)
    assert f"The slug &#x27;{spec['slug']}&#x27; is taken by another researcher&#x27;s study" in before
    participant_arrive(study_slug=spec["slug"], external_id="P1")
    after = bob.get(preview_url).content.decode()
    assert _without_tokens(after) == _without_tokens(before)  # whether alice has participants: not told
    refused = bob.post(preview_url).content.decode()
    assert "is taken by another researcher" in refused
    _assert_nothing_of_alices(refused)
    assert Study.objects.filter(slug=spec["slug"]).count() == 1


def test_the_builder_save_says_only_that_the_slug_is_taken(bob, researcher):
    alice = Client()
    alice.force_login(researcher)
    alice.post(alice.post("/researcher/build/", form(slug="shared-slug", title=SECRETS["title"]))["Location"])
    preview_url = bob.post("/researcher/build/", form(slug="shared-slug", title="Bob's"))["Location"]
    refused = bob.post(preview_url, follow=True).content.decode()
    _assert_nothing_of_alices(refused)
    assert "The slug &#x27;shared-slug&#x27; is taken by another researcher&#x27;s study" in refused
    assert Study.objects.get(slug="shared-slug").title == SECRETS["title"]
