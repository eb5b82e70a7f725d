"""Every API error is a 4xx (or 5xx) in one JSON format: {"status", "code", "detail", "fields"?}."""

import json
from unittest import mock

import pytest
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from research.api.errors import bad_request, server_error
from research.api.parsers import json_depth
from runs.models import Job
from tests.conftest import run_jobs

pytestmark = pytest.mark.django_db

ST_CSV = "g,y,f\n" + "".join(f"{i % 2},{(i // 2) % 2},{i}\n" for i in range(40))


def assert_format(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["status"] == status and body["code"] == code
    assert isinstance(body["detail"], str) and body["detail"]
    assert set(body) <= {"status", "code", "detail", "fields"}
    return body


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def st_post(api, content: bytes | str, **fields):
    data = content.encode() if isinstance(content, str) else content
    params = {"protected": "g", "protected_value": "1", "target": "y", "negative": "0", **fields}
    return api.post(
        "/api/situation-testing/", {"data": SimpleUploadedFile("d.csv", data), **params}, format="multipart"
    )


def test_21_megabyte_upload_is_refused_with_json_and_nothing_is_written(api, settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploads")
    (tmp_path / "uploads").mkdir()
    settings.REPORTS_DIR = tmp_path / "reports"
    big = b"a,b\n" + b"1,2\n" * (21 * 1024 * 1024 // 4)
    with mock.patch("django.core.files.uploadhandler.TemporaryFileUploadHandler.new_file") as temp_file:
        response = st_post(api, big)
    body = assert_format(response, 413, "payload_too_large")
    assert "UPLOAD_MAX_BYTES" in body["detail"]
    assert not Job.objects.exists()
    temp_file.assert_not_called()
    assert list((tmp_path / "uploads").iterdir()) == [] and not (tmp_path / "reports").exists()


def test_regex_separator_is_a_400_suggesting_sep_values(api):
    body = assert_format(st_post(api, ST_CSV, sep="(x"), 400, "invalid")
    assert "separator '(x' is not allowed" in body["detail"] and "\\t" in body["detail"]


@pytest.mark.parametrize("bad", ["nan", "inf", ""])
@pytest.mark.django_db(transaction=True)
def test_situation_testing_nan_or_inf_feature_fails_the_job_specifically(api, bad):
    rows = ST_CSV.splitlines()
    rows[18] = f"1,0,{bad}"  # data row 17
    response = st_post(api, "\n".join(rows) + "\n")
    assert response.status_code == 202
    run_jobs()
    job = api.get(response["Location"]).json()
    assert job["status"] == "failed"
    assert job["error"] == "column 'f' has 1 missing or infinite values (first at row 17)"


def test_deeply_nested_json_is_a_400_not_a_recursion_error(api, demo_study):
    for depth in (5000, 101):
        body = "[" * depth + "]" * depth
        response = api.post("/api/studies/effort-demo/analyses/", body, content_type="application/json")
        found = assert_format(response, 400, "parse_error")
        assert "nested deeper than the limit of 100 levels" in found["detail"]
    shallow = {"seed": [[[1]]]}
    response = api.post("/api/studies/effort-demo/analyses/", shallow, format="json")
    assert_format(response, 400, "invalid")  # parsed; then refused as a field error
    assert json_depth([[[]]]) == 3 and json_depth({"a": [1, {"b": 2}]}) == 3 and json_depth(1) == 0


def test_validation_error_keeps_fields_and_a_readable_detail(api, demo_study):
    response = api.post("/api/studies/effort-demo/analyses/", {"n_resamples": 5}, format="json")
    body = assert_format(response, 400, "invalid")
    assert body["fields"] == {"n_resamples": ["Ensure this value is greater than or equal to 100."]}
    assert body["detail"] == "n_resamples: Ensure this value is greater than or equal to 100."


def test_not_found_forbidden_method_and_unauthenticated(api, demo_study, other_researcher):
    body = assert_format(api.get("/api/studies/nope/"), 404, "not_found")
    assert body["detail"] == "No such study among yours."
    body = assert_format(api.get("/api/studies/effort-demo/export/nope/"), 404, "not_found")
    assert "Unknown table 'nope'" in body["detail"]
    assert_format(api.get("/api/situation-testing/"), 405, "method_not_allowed")
    anonymous = APIClient().get("/api/studies/")
    assert_format(anonymous, 401, "not_authenticated")
    assert anonymous["WWW-Authenticate"] == 'Token realm="api", Basic realm="api"'
    basic = APIClient(HTTP_AUTHORIZATION="Basic bm9ib2R5Om5vcGU=")  # nobody:nope
    refused = basic.get("/api/studies/")
    body = assert_format(refused, 401, "authentication_failed")
    assert body["detail"] == "Invalid username/password." and refused["WWW-Authenticate"].startswith("Token ")
    other = APIClient()
    other.force_authenticate(other_researcher)
    assert_format(other.get("/api/studies/effort-demo/"), 404, "not_found")  # others' studies stay 404
    response = api.post("/api/studies/effort-demo/analyses/", "x", content_type="text/plain")
    assert_format(response, 415, "unsupported_media_type")


def test_unknown_api_url_is_json_elsewhere_html(api):
    body = assert_format(api.get("/api/no/such/thing/"), 404, "not_found")
    assert "/api/schema/" in body["detail"]
    assert not Client().get("/no/such/page/")["Content-Type"].startswith("application/json")


def test_unexpected_error_is_json_500(researcher, demo_study):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(researcher)
    with mock.patch("research.export.cached_export", side_effect=RuntimeError("boom")):
        response = client.get("/api/studies/effort-demo/participants/")
    body = assert_format(response, 500, "server_error")
    assert "boom" not in body["detail"]


def test_django_level_handlers_answer_json_under_api():
    request = RequestFactory().post("/api/studies/")
    response = bad_request(request, RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE."))
    assert response.status_code == 413 and json.loads(response.content)["code"] == "payload_too_large"
    assert json.loads(server_error(request).content) == {
        "status": 500,
        "code": "server_error",
        "detail": "Server error; it has been logged. Please try again or report it.",
    }
    page = bad_request(RequestFactory().post("/s/x/"), RequestDataTooBig("x"))
    assert page.status_code == 400 and not page["Content-Type"].startswith("application/json")


def test_oversized_form_body_on_the_api_is_json(researcher, demo_study, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client = Client()
    client.force_login(researcher)
    response = client.post("/api/studies/effort-demo/analyses/", {"seed": "1", "pad": "a" * 5000})
    assert_format(response, 413, "payload_too_large")


def test_throttled_keeps_retry_after():
    from rest_framework.exceptions import Throttled

    from research.api.errors import api_exception_handler

    response = api_exception_handler(Throttled(wait=7), {})
    assert response.status_code == 429 and response["Retry-After"] == "7"
    assert response.data["code"] == "throttled" and "7 seconds" in response.data["detail"]
