"""One Chromium per test module whose tests are all browser tests (a launch and its exit cost about 0.7 CPU-s):
import ``browser`` from here instead of ``tests.surveys.test_e2e_browser``. Each test still gets its own
contexts (cookies, storage), closed after it, so no test sees another's pages."""

import os
from collections.abc import Iterator

import pytest
from django.db import connections

from tests.conftest import required
from tests.surveys.test_e2e_browser import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def module_chromium() -> Iterator:
    """Chromium launched once for the module (Playwright's event loop runs beside the ORM: Django's async check
    is off while it does, as ``tests.surveys.test_e2e_browser.browser`` does per test)."""
    if not CHROMIUM.exists():
        if required("REQUIRE_BROWSER"):
            pytest.fail("CI requires Chromium at /usr/bin/chromium")
        pytest.skip("Chromium is not installed")
    playwright_sync = pytest.importorskip("playwright.sync_api")
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with playwright_sync.sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before
        connections.close_all()  # the connections Playwright's context used (else the test database stays open)


@pytest.fixture
def browser(module_chromium) -> Iterator:
    """The module's Chromium; the contexts a test opened are closed after it."""
    yield module_chromium
    for context in module_chromium.contexts:
        context.close()
