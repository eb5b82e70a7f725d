"""Who may see what: every role against every researcher view, API endpoint and participant page."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from participation.models import Participant
from participation.simulate import simulate_participants
from runs.models import Job
from tests.surveys.helpers import answer_pages, output_page

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = [
    "/researcher/studies/effort-demo/",
    "/researcher/studies/effort-demo/export/pairs.csv",
    "/researcher/studies/effort-demo/export/participants.json",
    "/researcher/studies/effort-demo/?participants=real",
    "/researcher/studies/effort-demo/export/pairs.csv?participants=simulated",
    "/researcher/studies/effort-demo/runs/",
    "/researcher/studies/effort-demo/start/",
]
API = [
    "/api/studies/effort-demo/",
    "/api/studies/effort-demo/participants/",
    "/api/studies/effort-demo/export/pairs/",
    "/api/studies/effort-demo/analyses/",
    "/api/studies/effort-demo/audits/",
    "/api/studies/effort-demo/differential-parity/",
]


@pytest.fixture
def clients(demo_study, researcher, other_researcher):
    simulate_participants("effort-demo", n=4, seed=1)
    Job.objects.create(kind="differential_parity", status="succeeded", study=demo_study, result={"tables": {}})
    admin = get_user_model().objects.create_superuser("root", password="root-pass-123")
    result = {"anonymous": Client()}
    participant = Client()
    participant.get("/s/effort-demo/", {"PROLIFIC_PID": "matrix-participant"})
    participant.post("/s/effort-demo/consent/", {"decision": "accept"})
    result["participant"] = participant
    for name, user in (("owner", researcher), ("other", other_researcher), ("admin", admin)):
        c = Client()
        c.force_login(user)
        result[name] = c
    return result


EXPECTED = {
    # role: (researcher pages, API endpoints, admin index, own participant page)
    "anonymous": (302, (401, 403), 302, 403),
    "participant": (302, (401, 403), 302, 200),
    "owner": (200, (200,), 302, 403),
    "other": (404, (404,), 302, 403),
    "admin": (200, (200,), 200, 403),
}


@pytest.mark.parametrize(
    "role",
    [pytest.param(r, marks=pytest.mark.slow) if r == "owner" else r for r in EXPECTED],  # owner: 2+ CPU-s
)
def test_access_matrix(clients, role):
    client = clients[role]
    pages, api, admin, own_page = EXPECTED[role]
    for url in RESEARCHER_PAGES:
        assert client.get(url).status_code == pages, (role, url)
    for url in API:
        assert client.get(url).status_code in api, (role, url)
    assert client.get("/admin/").status_code == admin
    assert client.get("/s/effort-demo/page/").status_code == own_page
    studies = client.get("/api/studies/")
    if role in ("owner", "admin"):
        assert [s["slug"] for s in studies.json()["results"]] == ["effort-demo"]
    elif role == "other":
        assert studies.json()["results"] == []
    else:
        assert studies.status_code in (401, 403)


def test_participant_cannot_reach_another_study_or_others_pages(clients):
    participant = clients["participant"]
    assert participant.get("/s/other-study/page/").status_code == 404
    others = Participant.objects.exclude(external_id="matrix-participant")
    # identity comes only from the session: no URL carries a participant id to forge
    assert all(str(p.pseudonym) not in participant.get("/s/effort-demo/page/").content.decode() for p in others)


def test_script_in_free_text_is_escaped_everywhere(clients):
    participant = clients["participant"]
    p = Participant.objects.get(external_id="matrix-participant")
    page = p.plan[0]
    participant.post("/s/effort-demo/page/", {"page_key": page["key"]})
    p.refresh_from_db()
    output_index = next(i for i, pg in enumerate(p.plan) if pg["key"].startswith("output/"))
    answer_pages(p, output_index - p.position)
    out_page = output_page(p)
    data = {"page_key": out_page["key"], "k_decision": "accept"}
    for x in out_page["subjects"]:
        data[f"score_{x}"] = "150"  # refused, so the text is echoed back
        data[f"rationale_{x}"] = "<script>alert('x')</script>"
    body = participant.post("/s/effort-demo/page/", data).content.decode()
    assert "<script>alert" not in body and "&lt;script&gt;alert" in body
    data.update({f"score_{x}": "40" for x in out_page["subjects"]})
    participant.post("/s/effort-demo/page/", data)
    owner = clients["owner"]
    dashboard = owner.get("/researcher/studies/effort-demo/").content.decode()
    assert "<script>alert" not in dashboard
    json_export = owner.get("/api/studies/effort-demo/export/pairs/")
    assert json_export["Content-Type"].startswith("application/json")  # data, never rendered as HTML
    admin = clients["admin"]
    listing = admin.get("/admin/participation/answer/").content.decode()
    assert "alert(" not in listing  # list views never show free text


def test_oversized_body_is_refused(clients, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = clients["participant"].post("/s/effort-demo/page/", {"page_key": "x", "big": "a" * 5000})
    assert response.status_code == 400
