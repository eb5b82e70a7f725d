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


COLUMNS = ["id", "sex", "age", "charge", "degree", "priors", "juv_fel", "juv_misd", "race", "ai_score", "ai_label"]
ROLES = {"id": "id", "sex": "group", "race": "group", "ai_score": "score", "ai_label": "label"}


def form(roles: dict | None = None, **changes) -> dict:
    """The builder's fields, the column picker marking each column (default: the profile's columns features)."""
    roles = {**ROLES, **(roles or {})}
    data = {
        "subjects": csv_upload(),
        "template": "disagreement",
        **{f"role_{i}": roles.get(column, "feature") for i, column in enumerate(COLUMNS)},
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
    response = alice.post("/researcher/build/", form(roles={"juv_misd": "hidden"}, per_participant="9"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "--profile: {juv_misd} is neither a feature nor a group column (it is kept hidden)" in html
    response = alice.post("/researcher/build/", form(roles={"ai_score": "label"}))
    assert "Only one column can be the AI label: ai_score, ai_label" in response.content.decode()
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


def test_the_column_picker_lists_the_files_columns_and_features_are_the_marked_ones(alice):
    """Without choices (no JavaScript) the server lists the file's columns, each with its role select; with
    them the features are exactly the columns marked as features (the others hidden: not in the study)."""
    first = {key: value for key, value in form().items() if not key.startswith("role_")}
    html = alice.post("/researcher/build/", first).content.decode()
    assert "Mark what each column is in the column picker" in html
    for i, column in enumerate(COLUMNS):
        assert f'<label for="id_role_{i}">{column}</label>' in html
    assert '<option value="outcome">Outcome (0/1, not shown)</option>' in html
    profile = "A {sex} aged {age}, charged with a {degree}."
    roles = {c: "hidden" for c in ("charge", "priors", "juv_fel", "juv_misd")}
    preview_url = alice.post("/researcher/build/", form(roles=roles, profile=profile))["Location"]
    spec = json.loads(alice.get(preview_url + "study.json").content)
    subject = spec["pools"][0]["subjects"][0]
    assert (list(subject["features"]), list(subject["groups"])) == (["age", "degree"], ["sex", "race"])
    assert "juv_misd" not in json.dumps(spec)
