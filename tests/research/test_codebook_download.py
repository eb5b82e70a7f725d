"""The dashboard's codebook download: the same files as ``manage.py export_codebook``, for those who
may see the study only."""

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def _client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("fmt", ["csv", "md"])
def test_the_download_is_the_commands_file(demo_study, researcher, tmp_path, fmt):
    call_command("export_codebook", "effort-demo", "--out", str(tmp_path))
    response = _client(researcher).get(f"/researcher/studies/effort-demo/codebook.{fmt}")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="effort-demo-codebook.{fmt}"'
    assert response.content.decode() == (tmp_path / f"codebook.{fmt}").read_text(encoding="utf-8")


def test_the_dashboard_links_the_codebook(demo_study, researcher):
    body = _client(researcher).get("/researcher/studies/effort-demo/").content.decode()
    assert 'href="/researcher/studies/effort-demo/codebook.csv"' in body
    assert 'href="/researcher/studies/effort-demo/codebook.md"' in body


def test_a_collaborator_may_download_it_a_stranger_may_not(demo_study, other_researcher):
    url = "/researcher/studies/effort-demo/codebook.csv"
    assert _client(other_researcher).get(url).status_code == 404
    demo_study.collaborators.add(other_researcher)
    assert _client(other_researcher).get(url).status_code == 200
    anonymous = _client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_an_unknown_format_or_study_is_not_found(demo_study, researcher):
    assert _client(researcher).get("/researcher/studies/effort-demo/codebook.xlsx").status_code == 404
    assert _client(researcher).get("/researcher/studies/no-such-study/codebook.csv").status_code == 404
