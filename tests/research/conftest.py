"""The fake Prolific server (``tests/prolific_fake.py``) as the research tests' ``fake`` fixture, with the
settings that point the platform at it."""

import pytest

from tests.prolific_fake import fake_prolific

TOKEN = "tok-secret-4b1d-do-not-show"
SECRET = "hook-secret-9f2e"


@pytest.fixture
def fake(settings):
    with fake_prolific(TOKEN) as server:
        settings.PROLIFIC_API_TOKEN = TOKEN
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_WEBHOOK_SECRET = SECRET
        settings.PROLIFIC_WORKSPACE_ID = "ws-ours"
        settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
        yield server
