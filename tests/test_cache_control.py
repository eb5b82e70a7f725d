"""Personal pages are never stored by browsers or proxies: `Cache-Control: no-store` under /s/,
/researcher/, /api/, /accounts/ and /admin/, unless a response sets its own caching."""

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings

from config.cache_control import NoStoreMiddleware

pytestmark = pytest.mark.django_db


def _no_store(response) -> bool:
    return "no-store" in response.get("Cache-Control", "")


def test_participant_pages_are_no_store(demo_study):
    participant = Client()
    start = participant.get("/s/effort-demo/", {"PROLIFIC_PID": "cache-check"})
    consent = participant.get("/s/effort-demo/consent/")
    assert start.status_code == 200 and consent.status_code == 200
    for response in (start, consent):
        assert response["Cache-Control"] == "no-store" and response["Pragma"] == "no-cache"


def test_researcher_pages_exports_and_api_are_no_store(demo_study, researcher):
    client = Client()
    client.force_login(researcher)
    for url in (
        "/researcher/",
        "/researcher/studies/effort-demo/",
        "/researcher/studies/effort-demo/export/pairs.csv",
        "/api/studies/",
        "/api/studies/effort-demo/export/pairs/",
    ):
        response = client.get(url, follow=url == "/researcher/")
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "no-store" and response["Pragma"] == "no-cache", url


def test_login_and_admin_are_no_store():
    for url in ("/accounts/login/", "/admin/login/"):
        assert _no_store(Client().get(url)), url
    assert _no_store(Client().get("/api/studies/"))  # a refusal too


def test_own_caching_and_other_paths_are_left_alone():
    factory = RequestFactory()

    def own(request):
        response = HttpResponse("x")
        response["Cache-Control"] = "private, max-age=60"
        return response

    with override_settings(NO_STORE_PATH_PREFIXES=["/s/"]):
        assert NoStoreMiddleware(own)(factory.get("/s/x/"))["Cache-Control"] == "private, max-age=60"
        plain = NoStoreMiddleware(lambda request: HttpResponse("x"))
        assert not plain(factory.get("/static/app.css")).has_header("Cache-Control")
        assert not plain(factory.get("/healthz")).has_header("Cache-Control")
        assert plain(factory.get("/s/x/"))["Cache-Control"] == "no-store"
