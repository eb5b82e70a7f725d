"""Loading a study file whose slug belongs to another researcher's study is refused (owner or an account
with studies.load_any_study only); every version records who loaded it."""

import copy
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from participation.services import participant_arrive
from studies.models import Study
from studies.services import StudyOwnedByOther, study_load


def _edited(spec: dict) -> dict:
    edited = copy.deepcopy(spec)
    edited["title"] = "Edited title"
    return edited


@pytest.fixture
def study_with_participant(demo_study):
    participant_arrive(study_slug=demo_study.slug, external_id="P1")
    return demo_study


def test_another_researcher_cannot_load_a_new_version(study_with_participant, demo_spec, other_researcher):
    with pytest.raises(StudyOwnedByOther, match="is taken by another researcher's study; only its owner or an account"):
        study_load(spec=_edited(demo_spec), owner=other_researcher)
    assert Study.objects.filter(slug=demo_spec["slug"]).count() == 1
    assert Study.objects.get(slug=demo_spec["slug"]).owner.username == "alice"


def test_another_researcher_cannot_replace_a_study_without_participants(demo_study, demo_spec, other_researcher):
    with pytest.raises(StudyOwnedByOther):
        study_load(spec=_edited(demo_spec), owner=other_researcher)
    assert Study.objects.get(slug=demo_spec["slug"]).title == demo_spec["title"]


def test_collaborator_is_not_enough(study_with_participant, demo_spec, other_researcher):
    study_with_participant.collaborators.add(other_researcher)
    with pytest.raises(StudyOwnedByOther):
        study_load(spec=_edited(demo_spec), owner=other_researcher)


def _steward(username: str = "carol"):
    """A staff account given the explicit permission to load versions of anyone's study."""
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(username, password=f"{username}-pass-123", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="load_any_study", content_type__app_label="studies"))
    return get_user_model().objects.get(pk=user.pk)  # a fresh object: no cached permissions


def test_bare_staff_flag_cannot_load_another_researchers_study(study_with_participant, demo_spec):
    """Issue 22 #8: is_staff without the permission published a phishing completion URL."""
    staff = get_user_model().objects.create_user("carol", password="carol-pass-123", is_staff=True)
    phishing = _edited(demo_spec)
    phishing["completion"] = {**phishing.get("completion", {}), "url": "https://evil.example/complete"}
    with pytest.raises(StudyOwnedByOther, match="studies.load_any_study"):
        study_load(spec=phishing, owner=staff)
    assert Study.objects.filter(slug=demo_spec["slug"]).count() == 1


def test_a_version_records_who_loaded_it(study_with_participant, demo_spec, researcher):
    assert study_with_participant.loaded_by is None or study_with_participant.loaded_by == researcher
    v2 = study_load(spec=_edited(demo_spec), owner=_steward()).study
    assert v2.owner == researcher and v2.loaded_by.username == "carol"
    replaced = _edited(demo_spec)
    replaced["title"] = "Replaced by the owner"
    again = study_load(spec=replaced, owner=researcher)
    assert again.action == "replaced" and Study.objects.get(pk=v2.pk).loaded_by == researcher


def test_dashboard_names_who_loaded_a_version_when_not_the_owner(study_with_participant, demo_spec, researcher):
    from django.test import Client

    client = Client()
    client.force_login(researcher)
    url = f"/researcher/studies/{demo_spec['slug']}/"
    assert "was loaded by" not in client.get(url).content.decode()
    study_load(spec=_edited(demo_spec), owner=_steward("mallory"))
    body = client.get(url).content.decode()
    assert "Version 2 was loaded by <strong>mallory</strong>, not by the study's owner." in body


def test_owner_and_permitted_staff_may_load_a_new_version(study_with_participant, demo_spec, researcher):
    assert study_load(spec=_edited(demo_spec), owner=researcher).action == "new_version"
    staff = _steward()
    edited = _edited(demo_spec)
    edited["title"] = "Edited by staff"
    result = study_load(spec=edited, owner=staff)  # version 2 has no participants yet
    assert result.action == "replaced" and result.study.version == 2


def test_operator_without_owner_keeps_the_owner(study_with_participant, demo_spec):
    result = study_load(spec=_edited(demo_spec), owner=None)
    assert result.action == "new_version" and result.study.owner.username == "alice"


def test_command_refuses_with_a_clear_message(study_with_participant, demo_spec, other_researcher, tmp_path):
    path = tmp_path / "study.json"
    path.write_text(json.dumps(_edited(demo_spec)))
    with pytest.raises(CommandError) as error:
        call_command("load_study", str(path), owner="bob")
    assert str(error.value) == (
        "The slug 'effort-demo' is taken by another researcher's study; only its owner or an account with the "
        "studies.load_any_study permission can load a new version of it. Choose another slug."
    )
    assert Study.objects.filter(slug="effort-demo").count() == 1
    call_command("load_study", str(path), owner="alice")
    assert Study.objects.filter(slug="effort-demo").count() == 2


def test_a_version_loaded_by_staff_stays_the_owners(study_with_participant, demo_spec, researcher):
    """Staff loading a new version must not take the study over: its owner can still load the next."""
    staff = _steward()
    result = study_load(spec=_edited(demo_spec), owner=staff)
    assert result.action == "new_version" and result.study.owner.username == "alice"
    participant_arrive(study_slug=demo_spec["slug"], external_id="P2")
    again = _edited(demo_spec)
    again["title"] = "Edited again by the owner"
    assert study_load(spec=again, owner=researcher).study.version == 3


def test_every_version_answers_to_the_first_versions_owner_set(study_with_participant, demo_spec, researcher):
    """Ownership is the study's, not a version's: an owner given to a later version (in the admin)
    reaches nothing, and the first version's owner and collaborators reach every version."""
    from django.test import Client
    from rest_framework.test import APIClient

    from studies.selectors import studies_visible_to

    users = get_user_model().objects
    mallory, carol, dave = (users.create_user(n, password=f"{n}-pass-123") for n in ("mallory", "carol", "dave"))
    study_with_participant.collaborators.add(carol)
    v2 = study_load(spec=_edited(demo_spec), owner=researcher).study
    participant_arrive(study_slug=v2.slug, external_id="P2")
    Study.objects.filter(pk=v2.pk).update(owner=mallory)  # e.g. changed in the admin
    v2.collaborators.set([dave])
    for outsider in (mallory, dave):
        assert not studies_visible_to(outsider).exists()
        api = APIClient()
        api.force_authenticate(outsider)
        assert api.get("/api/studies/effort-demo/participants/").status_code == 404
        browser = Client()
        browser.force_login(outsider)
        assert browser.get("/researcher/studies/effort-demo/").status_code == 404
        assert browser.get("/researcher/studies/effort-demo/v2/preview/").status_code == 404
    with pytest.raises(StudyOwnedByOther, match="is taken by another researcher"):
        study_load(spec=demo_spec, owner=mallory)
    for member in (researcher, carol):
        assert set(studies_visible_to(member).values_list("version", flat=True)) == {1, 2}
        api = APIClient()
        api.force_authenticate(member)
        participants = api.get("/api/studies/effort-demo/participants/").json()["results"]
        assert sorted(p["study_version"] for p in participants) == [1, 2]
    browser = Client()
    browser.force_login(researcher)
    assert browser.get("/researcher/studies/effort-demo/v2/preview/").status_code == 200
    assert browser.post("/researcher/studies/effort-demo/pilot/delete/").status_code == 302  # the owner manages
    third = _edited(demo_spec)
    third["title"] = "Third"
    assert study_load(spec=third, owner=researcher).study.owner == researcher  # the owner loads the next one


def test_visible_versions_and_may_edit_follow_the_first_versions_owner_set(study_with_participant, demo_spec):
    """``visible_versions`` lists what ``studies_visible_to`` lets each kind of user see of a slug (newest first;
    404 for the rest) and ``may_edit`` admits the owner, editors and superusers: the first version decides, a
    later version's owner and collaborators count for nothing, an inactive account sees nothing."""
    from django.contrib.auth.models import AnonymousUser
    from django.http import Http404

    from studies.models import Collaborator
    from studies.selectors import may_edit, studies_visible_to, visible_versions

    users = get_user_model().objects
    owner = study_with_participant.owner
    editor, viewer, later_owner, later_editor, outsider, inactive = (
        users.create_user(n, password=f"{n}-pass-123") for n in ("ed", "vi", "lo", "le", "out", "gone")
    )
    root = users.create_superuser("root", password="root-pass-123")
    Collaborator.objects.create(study=study_with_participant, user=editor, role="editor")
    Collaborator.objects.create(study=study_with_participant, user=viewer, role="viewer")
    Collaborator.objects.create(study=study_with_participant, user=inactive, role="editor")
    users.filter(pk=inactive.pk).update(is_active=False)
    inactive.refresh_from_db()
    v2 = study_load(spec=_edited(demo_spec), owner=owner).study
    Study.objects.filter(pk=v2.pk).update(owner=later_owner)
    Collaborator.objects.create(study=v2, user=later_editor, role="editor")
    expected = {owner: True, editor: True, viewer: False, root: True}
    for user in (owner, editor, viewer, root, later_owner, later_editor, outsider, inactive, AnonymousUser()):
        reference = list(studies_visible_to(user).filter(slug="effort-demo").order_by("-version"))
        if reference:
            assert visible_versions(user, "effort-demo") == reference and [s.version for s in reference] == [2, 1]
        else:
            with pytest.raises(Http404):
                visible_versions(user, "effort-demo")
        assert bool(reference) == (user in expected)
        assert may_edit(user, "effort-demo") is expected.get(user, False), user
        assert may_edit(user, "no-such-study") is (user is root)
