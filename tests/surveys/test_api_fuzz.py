"""Schemathesis against the generated OpenAPI schema: no endpoint answers with a 5xx."""

import base64

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

SCHEMA = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
SCHEMA.app = get_wsgi_application()  # calls go through WSGI in-process
AUTH = {"Authorization": "Basic " + base64.b64encode(b"fuzzer:fuzzer-pass-123").decode()}


@pytest.fixture
def fuzz_world(transactional_db, demo_spec):
    from django.contrib.auth import get_user_model

    from participation.simulate import simulate_participants
    from studies.services import study_load

    user = get_user_model().objects.create_user("fuzzer", password="fuzzer-pass-123")
    study_load(spec=demo_spec, owner=user)
    simulate_participants("effort-demo", n=2, seed=1)  # too few to analyse: POST analyses stays fast
    return user


@SCHEMA.parametrize()
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, fuzz_world, settings_reports_tmp):
    response = case.call(headers=AUTH)
    assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text[:300])


@pytest.fixture
def settings_reports_tmp(settings, tmp_path):
    settings.REPORTS_DIR = tmp_path
