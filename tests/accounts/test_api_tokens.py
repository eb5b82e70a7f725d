"""Researchers' API tokens: stored hashed, shown once, scoped like the session, revocable,
failures throttled like basic auth, 401 with WWW-Authenticate for missing or bad credentials."""

import io
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import api_token_create, api_token_hash

pytestmark = pytest.mark.django_db

LIMIT = 3
CHALLENGE = 'Token realm="api", Basic realm="api"'


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def token_client(key: str, address: str = "127.0.0.1", **kwargs) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=address, **kwargs)


def test_key_is_stored_only_as_its_hash(researcher):
    token, key = api_token_create(user=researcher, name="notebook")
    assert key.startswith("hcf_") and len(key) == 4 + 43
    stored = ApiToken.objects.values().get(pk=token.pk)
    assert key not in str(stored)
    assert stored["key_hash"] == api_token_hash(key) and len(stored["key_hash"]) == 64
    assert stored["prefix"] == key[:12]
    assert api_token_create(user=researcher, name="")[1] != key
    assert ApiToken.objects.get(pk=token.pk + 1).name == "API token"


def test_token_sees_exactly_the_owners_studies(demo_study, researcher, other_researcher):
    _, alice = api_token_create(user=researcher, name="a")
    _, bob = api_token_create(user=other_researcher, name="b")
    studies = token_client(alice).get("/api/studies/")
    assert studies.status_code == 200 and [s["slug"] for s in studies.json()["results"]] == ["effort-demo"]
    assert token_client(alice).get("/api/studies/effort-demo/participants/").status_code == 200
    assert token_client(bob).get("/api/studies/").json()["results"] == []
    for url in ("/api/studies/effort-demo/", "/api/studies/effort-demo/export/pairs/"):
        assert token_client(bob).get(url).status_code == 404
    assert token_client(bob).post("/api/studies/effort-demo/analyses/", {}, format="json").status_code == 404


def test_a_script_posts_with_its_token_without_csrf(demo_study, researcher):
    _, key = api_token_create(user=researcher, name="script")
    client = token_client(key, enforce_csrf_checks=True)
    response = client.post("/api/studies/effort-demo/analyses/", {"n_resamples": 5}, format="json")
    assert response.status_code == 400 and response.json()["fields"] == {
        "n_resamples": ["Ensure this value is greater than or equal to 100."]
    }  # reached validation: no CSRF refusal
    session = APIClient(enforce_csrf_checks=True)
    session.force_login(researcher)
    assert session.post("/api/studies/effort-demo/analyses/", {}, format="json").status_code == 403  # CSRF


@pytest.mark.parametrize(
    "header",
    ["Token hcf_not-a-real-key", "Token", "Token two parts", "token hcf_wrong", "Basic bm9ib2R5Om5vcGU="],
)
def test_bad_credentials_are_401_with_a_challenge(demo_study, header):
    response = APIClient(HTTP_AUTHORIZATION=header).get("/api/studies/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == CHALLENGE
    body = response.json()
    assert body["status"] == 401 and body["code"] == "authentication_failed" and body["detail"]


def test_missing_credentials_are_401_and_a_refused_user_403(demo_study):
    response = APIClient().get("/api/studies/effort-demo/participants/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == CHALLENGE
    assert response.json() == {
        "status": 401,
        "code": "not_authenticated",
        "detail": "Authentication credentials were not provided.",
    }
    inactive = get_user_model().objects.create_user("carol", password="carol-pass-123", is_active=False)
    client = APIClient()
    client.force_authenticate(inactive)  # authenticated, but not allowed
    refused = client.get("/api/studies/")
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    assert "WWW-Authenticate" not in refused


def test_revoked_token_or_inactive_owner_is_refused(demo_study, researcher):
    token, key = api_token_create(user=researcher, name="old")
    assert token_client(key).get("/api/studies/").status_code == 200
    researcher.is_active = False
    researcher.save()
    assert token_client(key).get("/api/studies/").status_code == 401
    researcher.is_active = True
    researcher.save()
    token.delete()
    response = token_client(key).get("/api/studies/")
    assert response.status_code == 401 and response.json()["detail"] == "Invalid or revoked API token."


def test_last_used_is_recorded_at_most_once_a_minute(demo_study, researcher):
    token, key = api_token_create(user=researcher, name="n")
    assert token.last_used_at is None
    token_client(key).get("/api/studies/")
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=30)
    token_client(key).get("/api/studies/")
    token.refresh_from_db()
    assert token.last_used_at == first


def test_wrong_tokens_lock_out_the_address_like_basic_auth(demo_study, researcher):
    _, key = api_token_create(user=researcher, name="n")
    for i in range(LIMIT):
        assert token_client(f"hcf_guess{i}", "10.0.0.1").get("/api/studies/").status_code == 401
    locked = token_client(key, "10.0.0.1").get("/api/studies/")  # even the right key, from that address
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    assert locked.json()["code"] == "locked_out"
    assert locked.json()["detail"] == "Too many invalid API tokens from your address. Try again in 15 minutes."
    assert token_client(key, "10.0.0.2").get("/api/studies/").status_code == 200  # another address
    login = Client(REMOTE_ADDR="10.0.0.1").post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"})
    assert login.status_code == 302  # the account itself is not locked
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert token_client(key, "10.0.0.1").get("/api/studies/").status_code == 200


def test_api_token_command_creates_lists_and_revokes(researcher, demo_study):
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", "alice", "--name", "laptop", stdout=out, stderr=err)
    key = out.getvalue().strip()
    assert "shown only now" in err.getvalue()
    assert token_client(key).get("/api/studies/").status_code == 200
    token = ApiToken.objects.get(user=researcher)
    listing = io.StringIO()
    call_command("api_token", "alice", "--list", stdout=listing)
    assert f"{token.pk}\t{key[:12]}…\tlaptop" in listing.getvalue() and key not in listing.getvalue()
    with pytest.raises(CommandError, match="no token with id 999"):
        call_command("api_token", "alice", "--revoke", "999")
    call_command("api_token", "alice", "--revoke", str(token.pk), stdout=io.StringIO())
    assert token_client(key).get("/api/studies/").status_code == 401
    call_command("api_token", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("api_token", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    done = io.StringIO()
    call_command("api_token", "alice", "--revoke-all", stdout=done)
    assert "2 token(s) revoked" in done.getvalue() and not ApiToken.objects.exists()
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("api_token", "nobody")


def test_tokens_page_shows_a_new_key_once_and_revokes_only_own(researcher, other_researcher):
    assert Client().get("/researcher/api-tokens/").status_code == 302  # login first
    bobs, _ = api_token_create(user=other_researcher, name="bob's")
    client = Client()
    client.force_login(researcher)
    created = client.post("/researcher/api-tokens/", {"name": "<b>notebook</b>"})
    assert created.status_code == 200
    token = ApiToken.objects.get(user=researcher)
    key = created.context["new_key"]
    html = created.content.decode()
    assert key in html and api_token_hash(key) == token.key_hash
    assert "&lt;b&gt;notebook&lt;/b&gt;" in html and "<b>notebook" not in html
    listing = client.get("/researcher/api-tokens/").content.decode()
    assert token.prefix in listing and key not in listing
    assert client.post("/researcher/api-tokens/", {"name": "x" * 101}).context["new_key"] is None
    assert client.post("/researcher/api-tokens/", {"revoke": "x"}).status_code == 400
    assert client.post("/researcher/api-tokens/", {"revoke": bobs.pk}).status_code == 302
    assert ApiToken.objects.filter(pk=bobs.pk).exists()  # not theirs: untouched
    client.post("/researcher/api-tokens/", {"revoke": token.pk})
    assert not ApiToken.objects.filter(user=researcher).exists()
