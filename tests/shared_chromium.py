"""One headless Chromium per test process (each xdist worker), shared by every browser test: a launch of
Chromium and of Playwright's driver costs about 0.5 CPU-s and was paid by every browser test. Each test gets
the browser through ``browser`` and its own contexts (cookies, storage), closed after it, so no test sees
another's pages. Both fixtures are global (``tests/conftest.py`` imports them).

Playwright's sync API keeps its event loop marked as running in the test process's thread between its calls:
Django's ORM then refuses to run (``SynchronousOnlyOperation``) and ``asyncio.run`` fails. The loop is marked
running only while a browser test runs (with ``DJANGO_ALLOW_ASYNC_UNSAFE``, the ORM running beside
Playwright's loop as before), and unmarked between them, so the other tests run as in a process without
Chromium."""

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class _Session:
    """The process's Playwright driver and Chromium, and the event loop Playwright's calls run on."""

    playwright: Any
    chromium: Any
    loop: asyncio.AbstractEventLoop


@pytest.fixture(scope="session")
def shared_chromium() -> Iterator[_Session]:
    """Playwright and Chromium started once for the process, stopped after its last test."""
    from tests.conftest import required  # (tests/conftest.py imports this module)

    if not CHROMIUM.exists():
        if required("REQUIRE_BROWSER"):
            pytest.fail("CI requires Chromium at /usr/bin/chromium")
        pytest.skip("Chromium is not installed")
    playwright_sync = pytest.importorskip("playwright.sync_api")
    playwright = playwright_sync.sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    session = _Session(playwright, chromium, asyncio.get_running_loop())
    asyncio._set_running_loop(None)  # no browser test runs: see the module's docstring
    yield session
    asyncio._set_running_loop(session.loop)
    session.chromium.close()
    session.playwright.stop()
    asyncio._set_running_loop(None)


@pytest.fixture
def browser(shared_chromium: _Session, monkeypatch) -> Iterator[Any]:
    """The process's Chromium for one test; the contexts the test opened are closed after it."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM runs beside Playwright's loop
    asyncio._set_running_loop(shared_chromium.loop)
    if not shared_chromium.chromium.is_connected():  # a previous test crashed it: a new one
        shared_chromium.chromium = shared_chromium.playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
    try:
        yield shared_chromium.chromium
        for context in shared_chromium.chromium.contexts:
            context.close()
    finally:
        # While the loop is marked running, Django keeps the thread's connections apart (asgiref's Local in
        # "async" mode): the ones the test used are closed while it still is, or the test database could not be
        # dropped at the end of the run.
        connections.close_all()
        asyncio._set_running_loop(None)
