"""Loading a study file whose slug belongs to another researcher's study is refused (owner or staff only)."""

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
    with pytest.raises(StudyOwnedByOther, match="is taken by another researcher's study; only its owner or staff"):
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


def test_owner_and_staff_may_load_a_new_version(study_with_participant, demo_spec, researcher):
    assert study_load(spec=_edited(demo_spec), owner=researcher).action == "new_version"
    staff = get_user_model().objects.create_user("carol", password="carol-pass-123", is_staff=True)
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
        "The slug 'effort-demo' is taken by another researcher's study; only its owner or staff can load a new "
        "version of it. Choose another slug."
    )
    assert Study.objects.filter(slug="effort-demo").count() == 1
    call_command("load_study", str(path), owner="alice")
    assert Study.objects.filter(slug="effort-demo").count() == 2


def test_a_version_loaded_by_staff_stays_the_owners(study_with_participant, demo_spec, researcher):
    """Staff loading a new version must not take the study over: its owner can still load the next."""
    staff = get_user_model().objects.create_user("carol", password="carol-pass-123", is_staff=True)
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
