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
from accounts.services import TokenLimitReached, api_token_create, api_token_hash

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


def test_wrong_tokens_lock_their_prefix_and_answer_the_address_429_but_a_valid_token_works(demo_study, researcher):
    _, key = api_token_create(user=researcher, name="n")
    for i in range(LIMIT):
        assert token_client(f"hcf_guess{i:03}xyz", "10.0.0.1").get("/api/studies/").status_code == 401
    refused = token_client("hcf_guess999xyz", "10.0.0.1").get("/api/studies/")  # a new wrong token
    assert refused.status_code == 429 and refused["Retry-After"] == "900"
    assert refused.json()["code"] == "locked_out"
    assert refused.json()["detail"] == "Too many invalid API tokens from your address. Try again in 15 minutes."
    assert token_client(key, "10.0.0.1").get("/api/studies/").status_code == 200  # a valid token still works
    # Guessing the rest of a known prefix locks that prefix, even its right key, from that address.
    for i in range(LIMIT):
        assert token_client(f"{key[:12]}guess{i}", "10.0.0.3").get("/api/studies/").status_code == 401
    locked = token_client(key, "10.0.0.3").get("/api/studies/")
    assert locked.status_code == 429 and locked.json()["detail"] == (
        "Too many invalid API tokens beginning like this one from your address. Try again in 15 minutes."
    )
    assert token_client(key, "10.0.0.2").get("/api/studies/").status_code == 200  # another address
    login = Client(REMOTE_ADDR="10.0.0.3").post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"})
    assert login.status_code == 302  # the account itself is not locked
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert token_client(key, "10.0.0.3").get("/api/studies/").status_code == 200


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
    created = client.post("/researcher/api-tokens/", {"name": "<b>notebook</b>", "password": "alice-pass-123"})
    assert created.status_code == 200
    token = ApiToken.objects.get(user=researcher)
    key = created.context["new_key"]
    html = created.content.decode()
    assert key in html and api_token_hash(key) == token.key_hash
    assert "&lt;b&gt;notebook&lt;/b&gt;" in html and "<b>notebook" not in html
    listing = client.get("/researcher/api-tokens/").content.decode()
    assert token.prefix in listing and key not in listing
    too_long = {"name": "x" * 101, "password": "alice-pass-123"}
    assert client.post("/researcher/api-tokens/", too_long).context["new_key"] is None
    assert client.post("/researcher/api-tokens/", {"revoke": "x"}).status_code == 400
    assert client.post("/researcher/api-tokens/", {"revoke": bobs.pk}).status_code == 302
    assert ApiToken.objects.filter(pk=bobs.pk).exists()  # not theirs: untouched
    client.post("/researcher/api-tokens/", {"revoke": token.pk})
    assert not ApiToken.objects.filter(user=researcher).exists()


def _works(key: str) -> bool:
    return token_client(key).get("/api/studies/").status_code == 200


def test_password_change_and_logout_everywhere_revoke_tokens(demo_study, researcher, other_researcher):
    _, key = api_token_create(user=researcher, name="n")
    _, bobs = api_token_create(user=other_researcher, name="b")
    client = Client()
    client.force_login(researcher)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": "alice-pass-123", "new_password1": "N3w-secret-pass!", "new_password2": "N3w-secret-pass!"},
    )
    assert response.status_code == 302 and not _works(key)
    _, key = api_token_create(user=researcher, name="n")
    researcher.refresh_from_db()
    researcher.set_password("An0ther-pass!")  # admin form, changepassword, password reset
    researcher.save()
    assert not _works(key)
    _, key = api_token_create(user=researcher, name="n")
    researcher.refresh_from_db()
    researcher.first_name = "Alice"
    researcher.save()  # not a password change
    assert _works(key)
    call_command("logout_everywhere", "alice", stdout=io.StringIO())
    assert not _works(key)
    _, key = api_token_create(user=researcher, name="n")
    get_user_model().objects.create_superuser("root", password="root-pass-123")
    admin = Client()
    admin.force_login(get_user_model().objects.get(username="root"))
    admin.post("/admin/auth/user/", {"action": "logout_everywhere", "_selected_action": [researcher.pk]})
    assert not _works(key) and _works(bobs)


def test_a_rehashed_password_keeps_the_tokens(demo_study, researcher, settings):
    _, key = api_token_create(user=researcher, name="n")
    old_hash = researcher.password
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher", *settings.PASSWORD_HASHERS]
    assert Client().post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"}).status_code == 302
    researcher.refresh_from_db()
    assert researcher.password != old_hash  # upgraded to the preferred hasher on login
    assert _works(key)
    researcher.set_unusable_password()
    researcher.save(update_fields=["password"])
    assert not _works(key)


def test_tokens_expire(demo_study, researcher, settings):
    settings.API_TOKEN_MAX_AGE_DAYS = 90
    token, key = api_token_create(user=researcher, name="n")
    assert timedelta(days=89, hours=23) < token.expires_at - timezone.now() <= timedelta(days=90)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = token_client(key).get("/api/studies/")
    assert response.status_code == 401 and response.json()["detail"] == "This API token has expired; create a new one."
    settings.API_TOKEN_MAX_AGE_DAYS = 0  # no expiry
    assert api_token_create(user=researcher, name="n")[0].expires_at is None


def test_tokens_per_user_are_limited(researcher, other_researcher, settings):
    settings.API_TOKENS_PER_USER = 2
    api_token_create(user=researcher, name="a")
    expired, _ = api_token_create(user=researcher, name="b")
    with pytest.raises(TokenLimitReached, match="alice already has 2 API tokens, the most allowed"):
        api_token_create(user=researcher, name="c")
    with pytest.raises(CommandError, match="the most allowed"):
        call_command("api_token", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    assert api_token_create(user=other_researcher, name="b")  # per user
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    assert api_token_create(user=researcher, name="c")  # an expired token no longer counts (and is deleted)
    assert not ApiToken.objects.filter(pk=expired.pk).exists()


def test_tokens_page_asks_for_the_password_and_the_limit(researcher, settings):
    settings.API_TOKENS_PER_USER = 1
    client = Client()
    client.force_login(researcher)
    missing = client.post("/researcher/api-tokens/", {"name": "n"})
    assert missing.status_code == 200 and missing.context["new_key"] is None
    assert "This field is required." in missing.context["form"].errors["password"]
    wrong = client.post("/researcher/api-tokens/", {"name": "n", "password": "wrong"})
    assert wrong.context["form"].errors["password"] == ["This is not your password."]
    assert not ApiToken.objects.exists()
    assert AccessAttempt.objects.get().username == "alice"  # counted as a failed login
    created = client.post("/researcher/api-tokens/", {"name": "n", "password": "alice-pass-123"})
    assert created.context["new_key"] and ApiToken.objects.count() == 1
    html = created.content.decode()
    assert 'type="password"' in html and "alice-pass-123" not in html
    full = client.post("/researcher/api-tokens/", {"name": "m", "password": "alice-pass-123"})
    assert full.context["new_key"] is None and ApiToken.objects.count() == 1
    assert "alice already has 1 API token, the most allowed" in full.context["form"].non_field_errors()[0]
    for _ in range(LIMIT):
        client.post("/researcher/api-tokens/", {"name": "n", "password": "wrong"})
    locked = client.post("/researcher/api-tokens/", {"name": "n", "password": "alice-pass-123"})
    assert locked.status_code == 429  # a stolen session cannot guess the password here
