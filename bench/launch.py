"""Launch benchmark: simulated participants take the whole demo study over HTTP (loopback), like a
browser (cookies, CSRF tokens, every page), against gunicorn in production settings.

Run: .venv/bin/python bench/launch.py [--participants 1000] [--arrival-seconds 60] [--workers 4]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]   (the bench database is WIPED first)
Without --database-url it uses a fresh SQLite file (the embedded default, WAL mode).

Prints throughput (page submissions/s, overall and in the busiest 10 s), latency percentiles per
page type, errors, the ratio to a minimal Django view (/healthz) on the same server, and then checks
in the database that every participant has exactly the expected answers and that the conditions
are balanced within one.
"""

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SPEC = json.loads((ROOT / "surveys" / "studies" / "effort_demo.json").read_text())
CHECKS = {c["key"]: c["correct"] for c in SPEC["attention_checks"]["items"]}
PORT = 8765


class Browser:
    """One participant's connection with cookie handling."""

    def __init__(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: dict | None = None):
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), "Host": "127.0.0.1"}
        data = None
        if body is not None:
            data = urlencode(body, doseq=True)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Referer"] = f"http://127.0.0.1:{PORT}{path}"
        for attempt in range(3):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                response = self.conn.getresponse()
                payload = response.read()
                break
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
                if attempt == 2:
                    raise
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response.status, response.getheader("Location"), payload.decode("utf-8", "replace")


def answers_for(key: str, html: str, rng: random.Random) -> dict:
    data = {"page_key": key}
    if key.startswith("pair/"):
        data["rating"] = str(rng.randint(1, 6))
        if 'name="prediction"' in html:
            data["prediction"] = str(rng.randint(0, 100))
    elif key.startswith("output/"):
        data["k_decision"] = "accept"
        for subject in re.findall(r'name="score_([\w-]+)"', html):
            data[f"score_{subject}"] = str(rng.randint(0, 100))
            data[f"rationale_{subject}"] = "Similar totals but a different trend."
    elif key == "disagreement":
        for name in sorted(set(re.findall(r'name="(agree_[\w-]+)"', html))):
            data[name] = rng.choice(["0", "1"])
    elif key.startswith("attention/"):
        data["choice"] = CHECKS[key.split("/", 1)[1]]
    return data


def kind_of(key: str) -> str:
    return key.split("/")[0] if "/" in key else key


def participant(index: int, start_at: float, think: float, stats: dict, lock: threading.Lock) -> None:
    rng = random.Random(index)
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    browser = Browser()

    def record(kind, seconds, ok):
        with lock:
            stats["latency"][kind].append(seconds)
            stats["events"].append((time.monotonic(), kind))
            if not ok:
                stats["errors"][kind] += 1

    t0 = time.monotonic()
    status, location, _ = browser.request("GET", f"/s/effort-demo/?PROLIFIC_PID=bench-{index}&STUDY_ID=s&SESSION_ID=x")
    record("start", time.monotonic() - t0, status == 302)
    status, _, html = browser.request("GET", location or "/s/effort-demo/consent/")
    token = browser.cookies.get("csrftoken", "")
    t0 = time.monotonic()
    status, location, _ = browser.request(
        "POST", "/s/effort-demo/consent/", {"decision": "accept", "csrfmiddlewaretoken": token}
    )
    record("consent", time.monotonic() - t0, status == 302)
    path = location
    while path and "/page/" in path:
        t0 = time.monotonic()
        status, _, html = browser.request("GET", path)
        record("GET page", time.monotonic() - t0, status == 200)
        match = re.search(r'name="page_key" value="([^"]+)"', html)
        if status != 200 or not match:
            with lock:
                stats["errors"]["page without form"] += 1
            return
        key = match.group(1)
        time.sleep(think * rng.random())
        body = answers_for(key, html, rng) | {"csrfmiddlewaretoken": browser.cookies.get("csrftoken", "")}
        t0 = time.monotonic()
        status, location, _ = browser.request("POST", path, body)
        record(f"POST {kind_of(key)}", time.monotonic() - t0, status == 302)
        if status != 302:
            continue  # refused or failed: the same page is asked again
        path = location
    with lock:
        stats["finished"] += 1


def server_env(database_url: str | None, sqlite_path: str) -> dict:
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_HSTS_SECONDS": "0",
        "GUNICORN_BIND": f"127.0.0.1:{PORT}",
    }
    if database_url:
        env["DATABASE_URL"] = database_url
    else:
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = sqlite_path
    return env


def manage(env, *args):
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def wait_healthy(timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
            conn.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("server did not become healthy")


def ceiling(seconds: float = 5.0, threads: int = 16) -> float:
    """Requests/s of the minimal Django view (/healthz: one SELECT 1) on the same server."""
    count = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def loop():
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
        while time.monotonic() < stop:
            conn.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
            conn.getresponse().read()
            with lock:
                count[0] += 1

    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return count[0] / seconds


def verify(env) -> str:
    code = """
import django, collections
django.setup()
from surveys.models import Participant, Answer
expected_per_kind = lambda page: {'instructions': 0, 'likert': 1 + (page['measure'] == 'overall'), 'output': 2 + 2 * len(page.get('subjects', [])),
                                  'disagreement': len(page.get('prompts', [])), 'attention': 1}[page['kind']]
people = list(Participant.objects.filter(study__slug='effort-demo').exclude(simulated=True))
counts = dict(Answer.objects.filter(participant__in=people).values_list('participant').annotate(n=__import__('django.db.models', fromlist=['Count']).Count('id')))
wrong = sum(1 for p in people if counts.get(p.pk, 0) != sum(expected_per_kind(pg) for pg in p.plan[:p.position]))
completed = sum(p.status == 'completed' for p in people)
by_cond = collections.Counter(p.condition.key for p in people if p.condition_id)
print(f'{len(people)} participants, {completed} completed, answers wrong for {wrong}; conditions {dict(by_cond)}; '
      f'balanced within one: {max(by_cond.values()) - min(by_cond.values()) <= 1}')
"""
    out = subprocess.run(
        [PY, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--arrival-seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=0.05, help="max think time per page, seconds")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads per worker")
    parser.add_argument("--clients", type=int, default=200, help="concurrent client threads")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="launch-")
    env = server_env(args.database_url, str(Path(tmp) / "bench.sqlite3"))
    env.update(GUNICORN_WORKERS=str(args.workers), GUNICORN_THREADS=str(args.threads))
    manage(env, "migrate", "--noinput")
    manage(env, "flush", "--noinput")
    manage(env, "collectstatic", "--noinput")
    manage(env, "load_study", str(ROOT / "surveys" / "studies" / "effort_demo.json"))
    server = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "config.wsgi", "-c", "config/gunicorn.conf.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy()
        print(
            f"database: {'PostgreSQL' if args.database_url else 'SQLite (WAL)'}; gunicorn {args.workers} workers x "
            f"{args.threads} threads; {args.participants} participants arriving over {args.arrival_seconds:.0f} s"
        )
        stats = {"latency": defaultdict(list), "errors": defaultdict(int), "events": [], "finished": 0}
        lock = threading.Lock()
        begin = time.monotonic() + 1
        starts = sorted(begin + random.Random(0).uniform(0, args.arrival_seconds) for _ in range(args.participants))
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            for i, at in enumerate(starts):
                pool.submit(participant, i, at, args.think, stats, lock)
        elapsed = time.monotonic() - begin
        submissions = [t for t, kind in stats["events"] if kind.startswith("POST")]
        sub_times = np.array(submissions) - begin
        peak = max(np.histogram(sub_times, bins=np.arange(0, elapsed + 10, 10))[0]) / 10 if len(sub_times) else 0
        print(
            f"finished {stats['finished']}/{args.participants} in {elapsed:.1f} s; {len(submissions)} page submissions: "
            f"{len(submissions) / elapsed:.1f}/s overall, {peak:.1f}/s in the busiest 10 s"
        )
        print(f"{'page type':<22}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
        for kind, values in sorted(stats["latency"].items()):
            v = np.array(values) * 1000
            print(
                f"{kind:<22}{len(v):>7}{np.percentile(v, 50):>9.1f}{np.percentile(v, 95):>9.1f}{np.percentile(v, 99):>9.1f}"
            )
        print(f"errors: {dict(stats['errors']) or 'none'}")
        rate = ceiling()
        all_requests = sum(len(v) for v in stats["latency"].values())
        print(
            f"minimal Django view on the same server: {rate:.0f} requests/s; study requests ran at "
            f"{all_requests / elapsed:.0f} requests/s = {all_requests / elapsed / rate:.2f} of the ceiling"
        )
        print(verify(env))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
