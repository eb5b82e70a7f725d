"""The study builder in the researcher dashboard: login required, the form's problems (status 400,
nothing stored), the preview (blocks, strata, one profile, escaped), the download, saving through the
upload stash (ownership rule), and another researcher cannot see someone's built study."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from studies.models import Study
from studies.synthetic_defendants import PROFILE, draw_defendants

pytestmark = pytest.mark.django_db


def csv_upload(frame=None) -> SimpleUploadedFile:
    out = io.StringIO()
    (draw_defendants(40, seed=5) if frame is None else frame).to_csv(out, index=False)
    return SimpleUploadedFile("defendants.csv", out.getvalue().encode(), content_type="text/csv")


def form(**changes) -> dict:
    data = {
        "subjects": csv_upload(),
        "template": "disagreement",
        "id_column": "id",
        "label_column": "ai_label",
        "score_column": "ai_score",
        "group_columns": "race, sex",
        "profile": PROFILE,
        "per_participant": "10",
        "stratify_by": "race",
        "slug": "",
        "title": "",
        "completion_code": "",
    }
    return {**data, **changes}


@pytest.fixture
def alice(researcher) -> Client:
    client = Client()
    client.force_login(researcher)
    return client


def test_login_is_required(client):
    for url in ("/researcher/build/", "/researcher/build/" + "0" * 64 + "/"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_problems_are_listed_and_nothing_is_stored(alice):
    response = alice.post("/researcher/build/", form(label_column="risk", per_participant="9"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "--label-column: column &#x27;risk&#x27; is not in the CSV" in html
    response = alice.post("/researcher/build/", form(per_participant="9"))
    assert "--per-participant 9 is not divisible by the 2 values of --stratify-by" in response.content.decode()
    response = alice.post("/researcher/build/", form(subjects=SimpleUploadedFile("e.csv", b"")))
    assert "The submitted file is empty." in response.content.decode()
    assert not Study.objects.exists()


def test_preview_download_and_save(alice, researcher):
    frame = draw_defendants(40, seed=5)
    frame.loc[0, "charge"] = "<script>alert(1)</script>"
    response = alice.post("/researcher/build/", form(subjects=csv_upload(frame)))
    assert response.status_code == 302
    preview_url = response["Location"]
    html = alice.get(preview_url).content.decode()
    assert "Preview: Disagreement study: defendants" in html
    assert "They have been charged with: &lt;script&gt;alert(1)&lt;/script&gt;." in html
    assert "<script>alert(1)" not in html
    assert "Each participant sees 5 items of each value of <code>race</code>" in html
    download = alice.get(preview_url + "study.json")
    spec = json.loads(download.content)
    assert download["Content-Disposition"] == 'attachment; filename="defendants-disagreement.json"'
    assert spec["blocks"][3]["assignment"] == {"per_participant": 10, "stratify_by": "race"}


def test_save_loads_the_study_as_its_owner(alice, researcher):
    preview_url = alice.post("/researcher/build/", form())["Location"]
    response = alice.post(preview_url)
    assert response["Location"] == "/researcher/studies/defendants-disagreement/"
    study = Study.objects.get(slug="defendants-disagreement")
    assert study.owner == researcher and study.spec["format"] == 2
    assert alice.get(preview_url).status_code == 404  # the stash is gone once loaded


def test_another_researcher_cannot_see_a_built_study(alice, other_researcher):
    preview_url = alice.post("/researcher/build/", form(slug="shared-slug"))["Location"]
    bob = Client()
    bob.force_login(other_researcher)
    assert bob.get(preview_url).status_code == 404
    assert bob.get(preview_url + "study.json").status_code == 404
    assert bob.post(preview_url).status_code == 404
    assert not Study.objects.exists()


def test_another_researchers_slug_is_refused(alice, other_researcher):
    alice.post(alice.post("/researcher/build/", form(slug="shared-slug"))["Location"])
    bob = Client()
    bob.force_login(other_researcher)
    bob_preview = bob.post("/researcher/build/", form(slug="shared-slug", title="Bob's"))["Location"]
    response = bob.post(bob_preview, follow=True)
    assert "is taken by another researcher&#x27;s study" in response.content.decode()
    assert Study.objects.filter(slug="shared-slug").count() == 1


def test_the_study_list_links_to_the_builder(alice):
    assert 'href="/researcher/build/"' in alice.get("/researcher/").content.decode()
