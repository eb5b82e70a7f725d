"""Schemathesis against the generated OpenAPI schema: no endpoint answers with a 5xx."""

import base64
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.generation.modes import GenerationMode

from tests.surveys.helpers import shared_demo_study

SCHEMA = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
SCHEMA.app = get_wsgi_application()  # calls go through WSGI in-process
# Every {slug} is the shared study's, so the calls reach the views' validation and job starts (a made-up slug
# stops at the 404 before the body is read). The coverage phase sends the boundary values of every valid
# field (its negative half, a wrong type per field, doubled its calls); invalid bodies come from the fuzzing phase.
SCHEMA.config.parameters = {"path.slug": "effort-demo"}
SCHEMA.config.phases.coverage.generation.modes = [GenerationMode.POSITIVE]
pytestmark = pytest.mark.slow  # the shared set-up and the calls of a POST that starts a job take 2 CPU-s or more

AUTH = {"Authorization": "Basic " + base64.b64encode(b"shared-owner:shared-pass-123").decode()}  # shared_demo_study's


@pytest.fixture(scope="module")
def fuzz_world(django_db_setup, django_db_blocker, tmp_path_factory):
    """The fuzzer's account (the study's owner) and the demo study with 2 simulated participants (too few to
    analyse), made once for the module outside any test's transaction (what a call
    writes is rolled back with its test's) and removed after it."""
    with shared_demo_study(django_db_blocker, tmp_path_factory.mktemp("fuzz"), n=2, seed=1) as shared:
        yield shared.owner


@SCHEMA.parametrize()
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, fuzz_world, in_test_transaction, settings_reports_tmp):
    response = case.call(headers=AUTH)
    assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text[:300])


@pytest.fixture
def in_test_transaction(db) -> Iterator[None]:
    """Calls run in the test's transaction (rolled back after it): Django's handler would close the connection
    at each request's start and end (``close_old_connections``: an open transaction is not autocommit), so it
    is kept open, as Django's test client keeps it."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@pytest.fixture
def settings_reports_tmp(settings, tmp_path):
    settings.REPORTS_DIR = tmp_path
