"""Failed logins are throttled (django-axes) on the login page, the admin login and API basic auth."""

import base64
import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def _login_page(client: Client, username: str, password: str, url: str = "/accounts/login/"):
    return client.post(url, {"username": username, "password": password})


def _basic(client: Client, username: str, password: str):
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return client.get("/api/studies/", HTTP_AUTHORIZATION=f"Basic {token}")


def _cool_off_passes():
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))


def test_login_page_locks_out_after_the_limit(researcher, other_researcher, caplog):
    client = Client()
    with caplog.at_level(logging.WARNING, logger="accounts.security"):
        for _ in range(LIMIT):
            _login_page(client, "alice", "wrong")
    failures = [r for r in caplog.records if r.name == "accounts.security"]
    assert len(failures) == LIMIT and "username='alice'" in failures[0].getMessage()
    assert "wrong" not in " ".join(r.getMessage() for r in failures)
    response = _login_page(client, "alice", "alice-pass-123")
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content and b"Try again in 15 minutes" in response.content
    assert response["Retry-After"] == "900"
    assert client.get("/researcher/").status_code == 302  # not logged in
    # another researcher from the same address is unaffected
    assert _login_page(Client(), "bob", "bob-pass-123").status_code == 302


def test_cool_off_lets_the_right_password_in_again(researcher):
    client = Client()
    for _ in range(LIMIT):
        _login_page(client, "alice", "wrong")
    assert _login_page(client, "alice", "alice-pass-123").status_code == 429
    _cool_off_passes()
    assert _login_page(client, "alice", "alice-pass-123").status_code == 302
    assert client.get("/researcher/").status_code == 200


def test_many_wrong_passwords_then_the_right_one_is_refused(researcher, settings):
    settings.AXES_FAILURE_LIMIT = 5
    client = Client()
    for _ in range(150):
        response = _login_page(client, "alice", "wrong")
        assert response.status_code in (200, 429)
    assert _login_page(client, "alice", "alice-pass-123").status_code == 429


def test_admin_login_locks_out(db):
    get_user_model().objects.create_superuser("root", password="root-pass-123")
    client = Client()
    for _ in range(LIMIT):
        _login_page(client, "root", "wrong", url="/admin/login/")
    response = _login_page(client, "root", "root-pass-123", url="/admin/login/")
    assert response.status_code == 429 and b"Too many failed logins" in response.content
    assert client.get("/admin/").status_code == 302
    get_user_model().objects.create_superuser("root2", password="root2-pass-123")
    assert _login_page(Client(), "root2", "root2-pass-123", url="/admin/login/").status_code == 302


def test_basic_auth_locks_out_with_a_json_message(demo_study, researcher, other_researcher):
    client = Client()
    for _ in range(LIMIT):
        assert _basic(client, "alice", "wrong").status_code in (401, 403, 429)
    response = _basic(client, "alice", "alice-pass-123")
    assert response.status_code == 429
    assert response["Content-Type"].startswith("application/json")
    assert "Too many failed logins" in response.json()["detail"]
    assert response.json()["status"] == 429 and response.json()["code"] == "locked_out"  # the API's one format
    assert response["Retry-After"] == "900"
    assert _basic(Client(), "bob", "bob-pass-123").status_code == 200
    _cool_off_passes()
    assert _basic(client, "alice", "alice-pass-123").status_code == 200


def test_a_success_before_the_limit_resets_the_count(researcher):
    client = Client()
    for _ in range(LIMIT - 1):
        _login_page(client, "alice", "wrong")
    assert _login_page(client, "alice", "alice-pass-123").status_code == 302
    client.post("/accounts/logout/")
    for _ in range(LIMIT - 1):
        _login_page(client, "alice", "wrong")
    assert _login_page(client, "alice", "alice-pass-123").status_code == 302


def test_ipv6_hosts_of_one_64_share_the_lockout(researcher, caplog):
    for i in range(LIMIT):
        _login_page(Client(REMOTE_ADDR=f"2001:db8:5:6::{i + 1}"), "alice", "wrong")
    with caplog.at_level(logging.WARNING, logger="accounts.security"):
        locked = _login_page(Client(REMOTE_ADDR="2001:db8:5:6:abcd::9"), "alice", "alice-pass-123")
    assert locked.status_code == 429
    logged = [r.getMessage() for r in caplog.records if r.name == "accounts.security"]
    assert "from 2001:db8:5:6:abcd::9" in logged[-1]  # the log keeps the full address
    assert AccessAttempt.objects.get().ip_address == "2001:db8:5:6::"  # counted by its /64
    assert _login_page(Client(REMOTE_ADDR="2001:db8:5:7::1"), "alice", "alice-pass-123").status_code == 302
