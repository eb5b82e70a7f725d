"""The researcher's preview of a version's pages: who may open it, what it shows, that it stores nothing."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from participation.models import Answer, PageVisit, Participant


def _login(client, username: str, **flags):
    user = get_user_model().objects.create_user(username, password="pw-123456789", **flags)
    client.force_login(user)
    return user


@pytest.mark.django_db
def test_preview_lists_and_renders_every_block_of_a_format2_version(client, researcher, format2_study):
    client.force_login(researcher)
    base = f"/researcher/studies/{format2_study.slug}/v{format2_study.version}/preview/"
    listing = client.get(base).content.decode()
    for label in (
        "intro (instructions)",
        "about (questionnaire)",
        "judge (agree; item d01)",
        "check (attention)",
        "risk (rate; item d01)",
        "alike (pair_comparable; item d01~d02)",
        "distance (pair_distance, trajectory; item d01~d03)",
        "distance (pair_distance, overall; item d01~d03)",
        "fair (fair_score; item s1)",
    ):
        assert label in listing
    for number in range(1, 11):
        response = client.get(f"{base}{number}/")
        assert response.status_code == 200
        assert "Nothing entered here is stored." in response.content.decode()
    assert client.get(f"{base}11/").status_code == 404
    agree = client.get(f"{base}3/").content.decode()
    assert "Do you agree?" in agree and "aged 56" in agree
    # a submitted preview is validated (errors shown, or "valid") and nothing is stored
    response = client.post(f"{base}2/", {"role": "Member of the public", "age": "150", "trust": "2"})
    assert response.status_code == 422 and "Enter a whole number between 18 and 100." in response.content.decode()
    response = client.post(f"{base}3/", {"answer": "1", "sure": "3", "prediction": "40"})
    assert response.status_code == 200 and "These answers are valid." in response.content.decode()
    assert not Participant.objects.exists() and not Answer.objects.exists() and not PageVisit.objects.exists()


@pytest.mark.django_db
def test_preview_of_a_format1_version_shows_each_page_kind(client, researcher, demo_study):
    """A format 1 version is stored as its conversion: the preview lists its blocks, which hold every
    page kind of format 1 (pair pages once per measure, the output and disagreement pages), and each
    renders."""
    client.force_login(researcher)
    base = f"/researcher/studies/{demo_study.slug}/v{demo_study.version}/preview/"
    listing = client.get(base).content.decode()
    for label in (
        "instructions (instructions)",
        "arrests-set1 (pair_distance, trajectory; item K1~A1)",
        "arrests-set1 (pair_distance, aggregate; item K1~A1)",
        "arrests-set1 (pair_distance, overall; item K1~A1)",
        "arrests-set1-output (fair_score; item set1)",
        "arrests-disagreement (agree, one page)",
        "ac1-arrests (attention)",
    ):
        assert label in listing
    dashboard = client.get(f"/researcher/studies/{demo_study.slug}/").content.decode()
    assert f'href="{base}"' in dashboard
    for number in (1, 2, 5, 8, 17):  # instructions, attention, pair, output, disagreement
        assert client.get(f"{base}{number}/").status_code == 200


@pytest.mark.django_db
def test_only_the_study_s_researchers_or_the_view_permission_may_preview(client, researcher, demo_study):
    base = f"/researcher/studies/{demo_study.slug}/v{demo_study.version}/preview/"
    assert client.get(base).status_code == 302  # to the login page
    _login(client, "mallory")
    assert client.get(base).status_code == 404
    assert client.get(f"{base}1/").status_code == 404
    assert client.post(f"{base}1/", {}).status_code == 404
    carol = _login(client, "carol")
    demo_study.collaborators.add(carol)
    assert client.get(base).status_code == 200 and client.get(f"{base}1/").status_code == 200
    steward = _login(client, "steward", is_staff=True)  # staff is an ordinary researcher here too
    assert client.get(base).status_code == 404 and client.get(f"{base}1/").status_code == 404
    steward.user_permissions.add(Permission.objects.get(codename="view_study", content_type__app_label="studies"))
    assert client.get(base).status_code == 200 and client.get(f"{base}1/").status_code == 200
    _login(client, "root", is_staff=True, is_superuser=True)
    assert client.get(base).status_code == 200
    client.force_login(researcher)
    assert client.get(f"/researcher/studies/{demo_study.slug}/v{demo_study.version + 1}/preview/").status_code == 404
