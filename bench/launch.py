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
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from surveys.loadclient import HTTPParticipant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SPEC = json.loads((ROOT / "surveys" / "studies" / "effort_demo.json").read_text())
CHECKS = {c["key"]: c["correct"] for c in SPEC["attention_checks"]["items"]}
PORT = 8765


def participant(index: int, start_at: float, think: float, stats: dict, lock: threading.Lock) -> None:
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    person = HTTPParticipant(PORT, f"bench-{index}", CHECKS, seed=index)

    def record(key, status, seconds):
        kind = "POST " + (key.split("/")[0] if "/" in key else key)
        with lock:
            stats["latency"][kind].append(seconds)
            stats["events"].append(time.monotonic())
            if status not in (200, 302):
                stats["errors"][kind] += 1
        time.sleep(think * person.rng.random())

    try:
        t0 = time.monotonic()
        person.start()
        with lock:
            stats["latency"]["start + consent"].append(time.monotonic() - t0)
        person.take_pages(on_post=record)
        with lock:
            stats["finished"] += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported
        with lock:
            stats["errors"][type(exc).__name__] += 1


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
    out = subprocess.run(
        [PY, "manage.py", "check_integrity", "effort-demo"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    return (out.stdout + out.stderr).strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--arrival-seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=0.05, help="max think time per page, seconds")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads per worker")
    parser.add_argument("--clients", type=int, default=200, help="concurrent client threads")
    parser.add_argument("--database-url")
    parser.add_argument("--port", type=int, default=PORT)
    args = parser.parse_args()
    globals()["PORT"] = args.port
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
        arrivals = random.Random(0)
        starts = sorted(begin + arrivals.uniform(0, args.arrival_seconds) for _ in range(args.participants))
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            for i, at in enumerate(starts):
                pool.submit(participant, i, at, args.think, stats, lock)
        elapsed = time.monotonic() - begin
        submissions = stats["events"]
        sub_times = np.array(submissions) - begin
        peak = max(np.histogram(sub_times, bins=np.arange(0, elapsed + 10, 10))[0]) / 10 if len(sub_times) else 0
        print(
            f"finished {stats['finished']}/{args.participants} in {elapsed:.1f} s; "
            f"{len(submissions)} page submissions: {len(submissions) / elapsed:.1f}/s overall, "
            f"{peak:.1f}/s in the busiest 10 s"
        )
        print(f"{'page type':<22}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
        for kind, values in sorted(stats["latency"].items()):
            v = np.array(values) * 1000
            print(f"{kind:<22}{len(v):>7}" + "".join(f"{np.percentile(v, q):>9.1f}" for q in (50, 95, 99)))
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
