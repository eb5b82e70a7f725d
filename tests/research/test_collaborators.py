"""Collaborators managed on the dashboard: only the study's owner adds (by username or e-mail), re-roles
and removes them, each change logged with who and when and shown escaped; a viewer sees the study but
neither changes its state nor starts runs (web and API); an editor does; a stranger sees nothing."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from runs.models import Job
from studies.collaborators import CollaboratorError, collaborator_add
from studies.models import Collaborator, CollaboratorChange, Study

pytestmark = pytest.mark.django_db
URL = "/researcher/studies/effort-demo/collaborators/"
DASHBOARD = "/researcher/studies/effort-demo/"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.fixture
def carol(db):
    return get_user_model().objects.create_user("carol", email="Carol@Example.org", password="carol-pass-123")


def _roles(study: Study) -> dict[str, str]:
    return {c.user.username: c.role for c in Collaborator.objects.filter(study=study).select_related("user")}


def test_the_owner_adds_by_username_and_e_mail_sets_roles_and_removes_each_logged(
    demo_study, researcher, other_researcher, carol
):
    owner = _client(researcher)
    owner.post(URL, {"action": "add", "name": "bob", "role": "viewer"})
    owner.post(URL, {"action": "add", "name": "carol@example.org", "role": "editor"})  # e-mail, any case
    assert _roles(demo_study) == {"bob": "viewer", "carol": "editor"}
    owner.post(URL, {"action": "role", "user": other_researcher.pk, "role": "editor"})
    owner.post(URL, {"action": "remove", "user": carol.pk})
    assert _roles(demo_study) == {"bob": "editor"}
    log = [(c.username, c.action, c.role, c.changed_by.username) for c in CollaboratorChange.objects.order_by("pk")]
    assert log == [
        ("bob", "added", "viewer", "alice"),
        ("carol", "added", "editor", "alice"),
        ("bob", "role", "editor", "alice"),
        ("carol", "removed", "", "alice"),
    ]
    body = owner.get(DASHBOARD).content.decode()
    assert 'id="collaborators"' in body and "Changes of collaborators" in body and "role changed: editor" in body
    assert _client(carol).get(DASHBOARD).status_code == 404  # removed: the study is gone for them
    assert _client(other_researcher).get(DASHBOARD).status_code == 200


def test_a_collaborator_or_a_stranger_cannot_change_collaborators(demo_study, researcher, other_researcher, carol):
    collaborator_add(slug="effort-demo", by=researcher, name="bob", role="editor")
    before = list(CollaboratorChange.objects.values_list("pk", flat=True))
    as_editor = _client(other_researcher)
    assert as_editor.post(URL, {"action": "add", "name": "carol", "role": "editor"}).status_code == 403
    assert as_editor.post(URL, {"action": "remove", "user": other_researcher.pk}).status_code == 403
    assert as_editor.post(URL, {"action": "role", "user": other_researcher.pk, "role": "viewer"}).status_code == 403
    assert _client(carol).post(URL, {"action": "add", "name": "carol", "role": "editor"}).status_code == 404
    assert Client().post(URL, {"action": "add", "name": "carol", "role": "editor"}).status_code == 302  # log in
    assert _roles(demo_study) == {"bob": "editor"}
    assert list(CollaboratorChange.objects.values_list("pk", flat=True)) == before
    page = as_editor.get(DASHBOARD).content.decode()
    assert 'id="collaborator-name"' not in page and 'name="action" value="remove"' not in page
    assert "Only the study's owner changes who they are." in page
    with pytest.raises(CollaboratorError, match="only the study's owner"):
        collaborator_add(slug="effort-demo", by=other_researcher, name="carol", role="viewer")


@pytest.mark.parametrize(
    ("name", "role", "message"),
    [
        ("nobody", "viewer", "no researcher account with the username or e-mail &#x27;nobody&#x27;"),
        ("alice", "viewer", "alice owns the study"),
        ("bob", "viewer", "bob is a collaborator already: change their role instead"),
        ("carol", "admin", "unknown role &#x27;admin&#x27;; choose one of viewer, editor"),
    ],
)
def test_a_change_that_cannot_be_made_says_why_and_changes_nothing(
    demo_study, researcher, other_researcher, carol, name, role, message
):
    collaborator_add(slug="effort-demo", by=researcher, name="bob", role="editor")
    response = _client(researcher).post(URL, {"action": "add", "name": name, "role": role}, follow=True)
    assert f"Nothing changed: {message}." in response.content.decode()
    assert _roles(demo_study) == {"bob": "editor"} and CollaboratorChange.objects.count() == 1


def test_names_are_shown_escaped(demo_study, researcher):
    get_user_model().objects.create_user("<b>eve</b>", email="eve@example.org", password="eve-pass-123")
    collaborator_add(slug="effort-demo", by=researcher, name="eve@example.org", role="viewer")
    body = _client(researcher).get(DASHBOARD).content.decode()
    assert "&lt;b&gt;eve&lt;/b&gt;" in body and "<b>eve</b>" not in body
    root = get_user_model().objects.create_superuser("root", password="root-pass-123")
    admin = _client(root).get(f"/admin/studies/study/{demo_study.pk}/change/").content.decode()
    assert "&lt;b&gt;eve&lt;/b&gt; (viewer)" in admin and "<b>eve</b>" not in admin  # read-only there


def test_a_viewer_sees_the_study_but_changes_nothing_an_editor_may(demo_study, researcher, other_researcher):
    collaborator_add(slug="effort-demo", by=researcher, name="bob", role="viewer")
    viewer, api = _client(other_researcher), _api(other_researcher)
    page = viewer.get(DASHBOARD).content.decode()
    assert "You are a viewer of this study" in page and 'name="status"' not in page
    assert viewer.get("/researcher/studies/effort-demo/codebook.csv").status_code == 200
    assert viewer.post("/researcher/studies/effort-demo/status/", {"status": "paused"}).status_code == 403
    assert api.post("/api/studies/effort-demo/status/", {"status": "paused"}, format="json").status_code == 403
    assert viewer.post("/researcher/studies/effort-demo/start/analysis/", {"seed": 1}).status_code == 403
    analysis = {"seed": 2, "n_resamples": 100}
    assert api.post("/api/studies/effort-demo/analyses/", analysis, format="json").status_code == 403
    assert Study.objects.get(slug="effort-demo").status == "live" and not Job.objects.exists()
    job = Job.objects.create(kind=Job.Kind.ANALYSIS, study=demo_study, created_by=researcher)
    assert "Cancel this job" not in viewer.get(f"/researcher/jobs/{job.pk}/").content.decode()
    assert viewer.post(f"/researcher/jobs/{job.pk}/cancel/").status_code == 403
    assert api.post(f"/api/jobs/{job.pk}/cancel/").status_code == 403
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED
    job.delete()
    _client(researcher).post(URL, {"action": "role", "user": other_researcher.pk, "role": "editor"})
    assert api.post("/api/studies/effort-demo/status/", {"status": "paused"}, format="json").status_code == 200
    assert api.post("/api/studies/effort-demo/analyses/", analysis, format="json").status_code == 202
    assert 'name="status"' in viewer.get(DASHBOARD).content.decode()


def test_collaborators_added_before_roles_are_editors(demo_study, other_researcher):
    demo_study.collaborators.add(other_researcher)  # as the admin and old code did
    assert _roles(demo_study) == {"bob": "editor"}
