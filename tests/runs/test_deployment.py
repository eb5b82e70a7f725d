"""Beyond one server: two gunicorn servers on different ports over one database, a job worker
beside them, and a participant whose requests alternate between the servers (as behind a load
balancer). Pages, answers, a study edit (new version), a withdrawal and a report stay consistent."""

import asyncio
import base64
import json
import subprocess
import sys
import time
import urllib.request

import pytest
from django.conf import settings
from django.db import connection

from participation.integrity import check_integrity
from participation.loadclient import HTTPParticipant
from participation.models import Answer, PageVisit, Participant
from runs.models import Job
from studies.models import Study
from studies.services import study_load
from tests.conftest import ROOT
from tests.surveys.test_faults import GUNICORN, free_port, server_env, start_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.skipif(not GUNICORN.exists(), reason="no gunicorn")]


class BalancedParticipant(HTTPParticipant):
    """Sends each request to the next server in turn, on a new connection."""

    def __init__(self, ports: list[int], *args, **kwargs):
        super().__init__(ports[0], *args, **kwargs)
        self.ports, self.sent = ports, 0

    async def _exchange(self, method: str, path: str, data: bytes):
        await self._hang_up()
        self.port = self.ports[self.sent % len(self.ports)]
        self.sent += 1
        return await super()._exchange(method, path, data)


def shared_env(port: int) -> dict:
    """The servers' and the worker's environment: same database, same run storage."""
    return {**server_env(port), "REPORTS_DIR": settings.STORAGES["default"]["OPTIONS"]["location"]}


def api(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={
            "Authorization": "Basic " + base64.b64encode(b"alice:alice-pass-123").decode(),
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            kind = response.headers.get("Content-Type", "")
            return response.status, dict(response.headers), json.loads(raw) if "json" in kind else {"raw": raw}
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), {"raw": error.read()}


@pytest.mark.slow
def test_two_servers_one_database_and_a_worker_stay_consistent(demo_study, researcher):
    connection.close()
    ports = [free_port(), free_port()]
    servers = []
    worker = None
    try:
        for port in ports:
            servers.append(start_server(port, shared_env(port)))
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "job_worker", "--interval", "0.2", "--no-startup-delay"],
            cwd=ROOT,
            env=shared_env(ports[0]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        staying = BalancedParticipant(ports, "lb-stay", seed=1)
        leaving = BalancedParticipant(ports, "lb-leave", seed=2)

        async def first_half() -> None:
            for person in (staying, leaving):
                await person.start()
                await person.take_pages(10)
                await person.close()

        asyncio.run(first_half())

        # A study edit while participants are in it: a new version; they keep theirs.
        edited = {**demo_study.spec, "title": demo_study.spec["title"] + " (edited)"}
        assert study_load(spec=edited, owner=researcher).study.version == 2

        async def second_half() -> None:
            await staying.take_pages()
            # Withdrawal through one server after answering through both.
            status, _, html = await leaving.request("GET", "/s/effort-demo/withdraw/")
            assert status == 200
            token = leaving.cookies.get("csrftoken", "")
            await leaving.request(
                "POST", "/s/effort-demo/withdraw/", {"confirm": "withdraw", "csrfmiddlewaretoken": token}
            )
            newcomer = BalancedParticipant(ports, "lb-new", seed=3)
            await newcomer.start()
            await newcomer.take_pages(3)
            for person in (staying, leaving, newcomer):
                await person.close()

        asyncio.run(second_half())
        stay = Participant.objects.get(external_id="lb-stay")
        assert stay.status == "completed" and stay.study.version == 1
        gone = Participant.objects.get(status="withdrawn")
        assert not Answer.objects.filter(participant=gone).exists()
        assert not PageVisit.objects.filter(participant=gone).exists()
        assert Participant.objects.get(external_id="lb-new").study.version == 2
        report = check_integrity("effort-demo")
        assert report.wrong == [] and report.balanced

        # A report started on one server, run by the worker, served by the other: a study plan at its smallest (the
        # claim is about the servers and the worker sharing the database and the run storage, not about the report)
        connection.close()
        body = {"n": 4, "studies": 1, "resamples": 100}
        status, headers, job = api(ports[0], "POST", "/api/studies/effort-demo/plans/", body)
        assert status == 202 and headers["Location"] == job["url"]
        deadline = time.monotonic() + 120
        while job["status"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.5)
            _, _, job = api(ports[1], "GET", job["url"])
        assert job["status"] == "succeeded", job
        for port in ports:
            status, headers, page = api(port, "GET", job["result"]["report_url"])
            assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert Job.objects.get().status == "succeeded"
        assert Study.objects.filter(slug="effort-demo").count() == 2
    finally:
        for process in [*servers, worker]:
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
