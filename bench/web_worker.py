"""Web worker weight: how long importing the URL configuration takes and how much memory a web worker
holds, after start-up and after serving participant pages, the dashboard and API reads, and which
scientific libraries it has loaded (none should be: they are for job workers and commands).

Run: .venv/bin/python bench/web_worker.py [--pages 1000] [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]
(the bench database is WIPED first; without --database-url a fresh SQLite file).

1. Import: a fresh interpreter runs ``django.setup()``, imports ``config.urls`` and resolves every
   URL pattern (includes too), three times; prints the median wall time, the resident memory after it
   and the heavy libraries in ``sys.modules``.
2. Serving: gunicorn in production settings with one worker (2 threads, preload and warm-up as
   ``make serve``); prints the worker's resident memory (``VmRSS``) after start-up, after
   ``--pages`` participant page submissions of the effort demo (whole participants, like a browser),
   after a researcher's dashboard and API reads, and after one export download (which loads pandas on
   purpose), each with the heavy libraries mapped into the worker (``/proc/PID/maps``).
"""

import argparse
import asyncio
import http.client
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]
from bench import launch  # noqa: E402  (bench/launch.py: server settings, manage, health wait)
from participation.loadclient import HTTPParticipant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HEAVY = ("scipy", "pandas", "statsmodels", "sklearn", "numba", "plotly", "pingouin", "matplotlib")
IMPORT_PROBE = f"""
import os, sys, time
started = time.perf_counter()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
import config.urls
from django.urls import get_resolver
get_resolver().reverse_dict
seconds = time.perf_counter() - started
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS"))
print(seconds, rss / 1024, ",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def import_figures(env: dict) -> None:
    runs = [
        subprocess.run([PY, "-c", IMPORT_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        for _ in range(3)
    ]
    rows = [run.stdout.split() for run in runs]
    seconds = statistics.median(float(r[0]) for r in rows)
    rss = statistics.median(float(r[1]) for r in rows)
    heavy = rows[-1][2] if len(rows[-1]) > 2 else "none"
    print(f"import config.urls + resolve every URL: {seconds:.2f} s (median of 3), {rss:.0f} MB resident")
    print(f"  scientific libraries imported: {heavy}   (goal: under 1.5 s; was 4.7 s and 331 MB)")


def worker_pid(master: int) -> int:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            return int(stat.parent.name)
    raise RuntimeError("no gunicorn worker found")


def worker_state(pid: int, label: str) -> None:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
    maps = Path(f"/proc/{pid}/maps").read_text()
    loaded = [name for name in HEAVY if f"site-packages/{name}/" in maps]
    print(f"{label:<44}{rss:>7.0f} MB resident   scientific libraries loaded: {', '.join(loaded) or 'none'}")


async def participants(port: int, pages: int, slug: str) -> int:
    """Whole participants, ten at a time, until ``pages`` page submissions have been made."""
    posted = 0
    index = 0
    while posted < pages:

        async def one(i: int) -> int:
            count = 0

            def record(key, status, seconds):
                nonlocal count
                count += 1

            person = HTTPParticipant(port, f"weight-{i}", slug=slug, seed=i)
            try:
                await person.start()
                await person.take_pages(on_post=record, think=lambda: 0)
            finally:
                await person.close()
            return count

        posted += sum(await asyncio.gather(*(one(index + k) for k in range(10))))
        index += 10
    return posted


class Researcher:
    """A logged-in researcher over plain HTTP (session and CSRF cookies)."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None) -> tuple[int, str]:
        headers = {"Host": "127.0.0.1", "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers.update({"Content-Type": "application/x-www-form-urlencoded", "Referer": "http://127.0.0.1/"})
        self.conn.request(method, path, body=body, headers=headers)
        response = self.conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        return response.status, text

    def login(self, username: str, password: str) -> None:
        _, page = self.request("GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        status, _ = self.request(
            "POST", "/accounts/login/", {"username": username, "password": password, "csrfmiddlewaretoken": token}
        )
        if status != 302:
            raise RuntimeError(f"login failed ({status})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000, help="participant page submissions to serve")
    parser.add_argument("--database-url")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    launch.PORT = args.port
    spec = json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text())
    tmp = tempfile.mkdtemp(prefix="web-worker-")
    env = launch.server_env(args.database_url, str(Path(tmp) / "bench.sqlite3"))
    env.update(GUNICORN_BIND=f"127.0.0.1:{args.port}", GUNICORN_WORKERS="1", GUNICORN_THREADS="2")
    import_figures(env)
    launch.manage(env, "migrate", "--noinput")
    launch.manage(env, "flush", "--noinput")
    launch.manage(env, "collectstatic", "--noinput")
    create_user = "from django.contrib.auth import get_user_model; get_user_model().objects.create_user"
    launch.manage(env, "shell", "-c", f"{create_user}('weight', password='weight-pass-123')")
    launch.manage(env, "load_study", str(ROOT / "studies" / "bundled" / "effort_demo.json"), "--owner", "weight")
    launch.bot_database(env)
    server = launch.gunicorn(env)
    try:
        launch.wait_healthy()
        pid = worker_pid(server.pid)
        worker_state(pid, "gunicorn worker after start-up")
        posted = asyncio.run(participants(args.port, args.pages, spec["slug"]))
        worker_state(pid, f"after {posted} participant page submissions")
        researcher = Researcher(args.port)
        researcher.login("weight", "weight-pass-123")
        slug = spec["slug"]
        reads = [
            "/researcher/",
            f"/researcher/studies/{slug}/",
            f"/researcher/studies/{slug}/runs/",
            "/api/studies/",
            f"/api/studies/{slug}/",
            f"/api/studies/{slug}/export/",
            f"/api/studies/{slug}/analyses/",
            "/api/jobs/",
        ]
        for path in reads * 5:
            status, _ = researcher.request("GET", path)
            if status != 200:
                raise RuntimeError(f"GET {path} answered {status}")
        worker_state(pid, f"after {len(reads) * 5} dashboard and API reads")
        status, _ = researcher.request("GET", f"/researcher/studies/{slug}/export/answers.csv")
        worker_state(pid, f"after one export download ({status})")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
