"""The production stack of `make serve`: nginx (config/nginx.py, config/nginx.conf.template) in front of
gunicorn (config/gunicorn.conf.py) on PostgreSQL. Participants' connections end at nginx, so none is
dropped when gunicorn would have closed it as idle (its keep-alive is 2 s) just as the participant's
next page was on its way: the cause of the launch disconnects."""

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.db import connection
from gunicorn.config import Config

from config import nginx
from participation.integrity import check_integrity
from participation.loadclient import HTTPParticipant
from participation.models import Participant
from tests.conftest import required
from tests.surveys.test_faults import GUNICORN, free_port, server_env, start_server


def _nginx_available() -> bool:
    try:
        nginx.nginx_binary()
    except FileNotFoundError:
        return False
    return True


@pytest.fixture
def nginx_dir():
    """A directory in /tmp, which nginx's workers (``nobody`` when the tests run as root) may enter."""
    directory = Path(tempfile.mkdtemp(prefix="nginx-"))
    yield directory
    shutil.rmtree(directory)


@pytest.fixture
def served(tmp_path: Path, nginx_dir: Path):
    """nginx on a port of its own in front of gunicorn, started as `make serve` starts them; yields
    nginx's port and the log nginx writes."""
    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("the launch stack is tested on PostgreSQL: set DATABASE_URL")
    if not (_nginx_available() and GUNICORN.exists()):
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires nginx and gunicorn (.ci/run installs nginx)")
        pytest.skip("nginx or gunicorn is not installed")
    connection.close()  # the server processes open their own connections
    port, app_port = free_port(), free_port()
    env = {**server_env(app_port), "PARTICIPANT_ADDRESS_HEADER": "X-Forwarded-For"}
    log = tmp_path / "nginx.log"
    servers = [start_server(app_port, env)]
    try:
        with log.open("w") as errors:
            servers.insert(
                0, nginx.start(nginx_dir, listen=f"127.0.0.1:{port}", upstream=env["GUNICORN_BIND"], stderr=errors)
            )
        yield port, log
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_burst_through_nginx_all_finish_and_none_is_dropped(demo_study, served):
    """8 participants (twice gunicorn's 2 workers x 2 threads, so half the connections wait at nginx) arrive at
    once and take the whole study with a client that does not resend a dropped request (as aiohttp or requests
    do not): every one completes, nothing is lost."""
    port, log = served
    people = [HTTPParticipant(port, f"proxy-{i}", seed=i, retries=1) for i in range(8)]

    async def take(person: HTTPParticipant) -> None:
        try:
            await person.start()
            await person.take_pages()
        finally:
            await person.close()

    async def run() -> list:
        return await asyncio.gather(*(take(person) for person in people), return_exceptions=True)

    failures = [outcome for outcome in asyncio.run(run()) if outcome is not None]
    assert failures == []
    assert sum(person.disconnects for person in people) == 0
    assert Participant.objects.filter(external_id__startswith="proxy-", status="completed").count() == 8
    assert check_integrity("effort-demo").ok
    assert "[error]" not in log.read_text()


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_page_sent_after_gunicorn_keepalive_reaches_the_app(demo_study, served):
    """A participant who thinks longer than gunicorn's keep-alive timeout sends the next page on the
    same connection: nginx keeps client connections 75 s, so the page is saved, not dropped (straight
    to gunicorn, that connection was closed after 2 s and the page failed)."""
    port, _ = served
    person = HTTPParticipant(port, "thinker", retries=1)

    async def run() -> tuple[int, int]:
        try:
            await person.start()
            first = await person.take_pages(1)
            await asyncio.sleep(Config().keepalive + 1.0)
            return first, await person.take_pages(1)
        finally:
            await person.close()

    assert asyncio.run(run()) == (1, 1)
    assert person.disconnects == 0


@pytest.mark.skipif(not _nginx_available(), reason="nginx is not installed")
def test_rendered_configuration_is_valid_and_sized_for_uploads(nginx_dir: Path, tmp_path: Path, settings):
    """The template renders to a configuration nginx accepts; its body limit lets through the largest
    request the app accepts (files up to UPLOAD_MAX_BYTES plus the form's fields), so the app's own
    error, not nginx's, answers anything larger; a half-given TLS pair is refused, and so is (as root)
    a directory nginx's workers could not enter to buffer a large upload."""
    settings.UPLOAD_MAX_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 3_000_000, 500_000
    conf = nginx.render(nginx_dir, listen="127.0.0.1:8000", upstream="unix:/run/app.sock")
    text = conf.read_text()
    assert "client_max_body_size 3500000;" in text
    assert "server unix:/run/app.sock;" in text
    subprocess.run([*nginx.command(conf), "-t", "-q"], check=True)
    with pytest.raises(ValueError, match="NGINX_TLS_KEY"):
        nginx.render(nginx_dir, listen="127.0.0.1:8443", upstream="127.0.0.1:8001", tls_cert="/tmp/cert.pem")
    if os.geteuid() == 0:  # pytest's own temporary directories are private (0700)
        with pytest.raises(PermissionError, match="NGINX_DIR"):
            nginx.render(tmp_path / "nginx", listen="127.0.0.1:8000", upstream="127.0.0.1:8001")
