"""Researchers' sessions are server-side and revocable; participants keep signed cookies under /s/."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import ResearcherSession

pytestmark = pytest.mark.django_db

RESEARCHER_PAGE = "/researcher/"


def _login(username: str, password: str) -> Client:
    client = Client()
    response = client.post("/accounts/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content[:300]
    assert client.get(RESEARCHER_PAGE).status_code == 200
    return client


def _with_cookie(value: str) -> Client:
    """A second browser holding a copy of a session cookie."""
    copy = Client()
    copy.cookies["sessionid"] = value
    return copy


def _is_logged_in(client: Client) -> bool:
    response = client.get(RESEARCHER_PAGE)
    return response.status_code == 200


def test_logout_ends_a_copied_session(researcher):
    client = _login("alice", "alice-pass-123")
    stolen = client.cookies["sessionid"].value
    assert _is_logged_in(_with_cookie(stolen))
    client.post("/accounts/logout/")
    assert not _is_logged_in(_with_cookie(stolen))
    assert not ResearcherSession.objects.filter(user=researcher).exists()


def test_password_change_ends_copied_and_other_sessions(researcher):
    client = _login("alice", "alice-pass-123")
    other_device = _login("alice", "alice-pass-123")
    stolen = client.cookies["sessionid"].value
    response = client.post(
        "/accounts/password_change/",
        {"old_password": "alice-pass-123", "new_password1": "N3w-secret-pass!", "new_password2": "N3w-secret-pass!"},
    )
    assert response.status_code == 302, response.content[:500]
    assert _is_logged_in(client)  # the session that changed the password continues under a new key
    assert client.cookies["sessionid"].value != stolen
    assert not _is_logged_in(_with_cookie(stolen))
    assert not _is_logged_in(other_device)


def test_session_row_records_its_user_and_the_researcher_cookie_is_short(researcher, settings):
    client = _login("alice", "alice-pass-123")
    cookie = client.cookies["sessionid"]
    assert ResearcherSession.objects.get(session_key=cookie.value).user == researcher
    assert int(cookie["max-age"]) == settings.SESSION_COOKIE_AGE == 12 * 3600
    assert cookie["httponly"] and cookie["path"] == "/"


def test_logout_everywhere_command(researcher, other_researcher):
    laptop, phone = _login("alice", "alice-pass-123"), _login("alice", "alice-pass-123")
    bob = _login("bob", "bob-pass-123")
    call_command("logout_everywhere", "alice")
    assert not _is_logged_in(laptop) and not _is_logged_in(phone)
    assert _is_logged_in(bob)
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("logout_everywhere", "nobody")


def test_admin_action_logs_a_user_out_everywhere(researcher, other_researcher):
    get_user_model().objects.create_superuser("root", password="root-pass-123")
    admin = _login("root", "root-pass-123")
    alice, bob = _login("alice", "alice-pass-123"), _login("bob", "bob-pass-123")
    response = admin.post(
        "/admin/auth/user/",
        {"action": "logout_everywhere", "_selected_action": [researcher.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert b"session(s) of 1 user(s) ended" in response.content
    assert not _is_logged_in(alice)
    assert _is_logged_in(bob) and _is_logged_in(admin)


def test_participant_pages_use_a_signed_cookie_without_session_queries(demo_study, settings):
    participant = Client()
    with CaptureQueriesContext(connection) as queries:
        response = participant.get("/s/effort-demo/", {"PROLIFIC_PID": "cookie-check"})
        participant.post("/s/effort-demo/consent/", {"decision": "accept"})
        page = participant.get("/s/effort-demo/page/")
    assert response.status_code == 200 and page.status_code == 200
    session_tables = ("accounts_researcher_session", "django_session")
    assert not any(table in q["sql"] for q in queries.captured_queries for table in session_tables)
    assert "sessionid" not in participant.cookies
    cookie = participant.cookies["participant_session"]
    assert cookie["path"] == "/s/" and cookie["httponly"] and cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) == settings.PARTICIPANT_SESSION_COOKIE_AGE == 2 * 24 * 3600
    assert not ResearcherSession.objects.exists()


def test_participant_cookie_means_nothing_on_researcher_pages(demo_study):
    participant = Client()
    participant.get("/s/effort-demo/", {"PROLIFIC_PID": "cookie-check"})
    assert participant.get(RESEARCHER_PAGE).status_code == 302  # to the login page
    # and a researcher's cookie does not identify a participant
    stranger = Client()
    stranger.cookies["participant_session"] = "not-a-signed-value"
    assert stranger.get("/s/effort-demo/page/").status_code == 403


def test_session_and_login_limits_come_from_the_environment():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "RESEARCHER_SESSION_COOKIE_AGE": "3600",
        "PARTICIPANT_SESSION_COOKIE_AGE": "7200",
        "LOGIN_FAILURE_LIMIT": "7",
        "LOGIN_COOLOFF_MINUTES": "0",
        "LOGIN_LOCKOUT_PARAMETERS": "username,ip_address",
    }
    code = (
        "from django.conf import settings as s;"
        "print(s.SESSION_COOKIE_AGE, s.PARTICIPANT_SESSION_COOKIE_AGE, s.AXES_FAILURE_LIMIT,"
        " s.AXES_COOLOFF_TIME, s.AXES_LOCKOUT_PARAMETERS)"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    assert out.stdout.strip().splitlines()[-1] == "3600 7200 7 None ['username', 'ip_address']", out.stderr
