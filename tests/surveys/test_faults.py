"""Faults during a real run (gunicorn over loopback): a worker killed and the whole server restarted
in the middle of participants' runs; they resume where they were and nothing is lost."""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from participation.integrity import check_integrity
from participation.loadclient import HTTPParticipant
from participation.models import Participant
from tests.conftest import ROOT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.serial]
GUNICORN = Path(sys.executable).parent / "gunicorn"


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A free port on 127.0.0.1: any, or one of TEST_PORTS not handed out before (e.g. ``8300-8399``,
    on a shared machine)."""
    low, _, high = os.environ.get("TEST_PORTS", "0-0").partition("-")
    for port in range(int(low), int(high) + 1):
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            if port:  # port 0: the system picks a new one each time
                _HANDED_OUT.add(port)
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in TEST_PORTS={os.environ['TEST_PORTS']}")


def server_env(port: int) -> dict:
    env = {
        **os.environ,
        "DJANGO_DEBUG": "1",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        "GUNICORN_THREADS": "2",
        "PARTICIPANT_ARRIVALS_PER_ADDRESS": "0",  # every participant comes from 127.0.0.1
    }
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    else:
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = str(db["NAME"])
    return env


def start_server(port: int, env: dict | None = None) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(GUNICORN), "config.wsgi", "-c", "config/gunicorn.conf.py"],
        cwd=ROOT,
        env=env or server_env(port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("gunicorn did not start")


def workers_of(server: subprocess.Popen) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


@pytest.mark.skipif(not GUNICORN.exists(), reason="gunicorn not installed")
def test_worker_kill_and_server_restart_lose_nothing(demo_study):
    connection.close()  # the server processes open their own connections
    port = free_port()
    # they answer one after another (none has a request in flight at the kill): two show it as well as more
    people = [HTTPParticipant(port, f"fault-{i}", seed=i) for i in range(2)]

    async def run() -> subprocess.Popen:
        server = start_server(port)
        try:
            for person in people:
                await person.start()
                await person.take_pages(8)
            os.kill(workers_of(server)[0], signal.SIGKILL)  # a worker dies mid-run; the master replaces it
            for person in people:
                await person.take_pages(8)
            server.send_signal(signal.SIGTERM)  # the whole server goes down ...
            server.wait(timeout=30)
            server = start_server(port)  # ... and comes back
            for person in people:
                await person.take_pages()
        finally:
            for person in people:
                await person.close()
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)

    asyncio.run(run())
    assert Participant.objects.filter(external_id__startswith="fault-", status="completed").count() == 2
    report = check_integrity("effort-demo")
    assert report.ok
