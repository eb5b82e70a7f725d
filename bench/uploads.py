"""Participants are not starved by researchers' uploads: new participants arrive (start + consent)
while six researchers each upload a 20,000-row situation-testing CSV, against gunicorn in
production settings with one job worker.

Run: .venv/bin/python bench/uploads.py [--uploads 6] [--rows 20000] [--arrivals 30]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]   (the bench database is WIPED first)

Prints the arrival latency (start link + consent page + consent POST) without uploads and during
them, how long each upload request took (it only stores the file and queues a job), and how long
the worker took to finish the jobs. Before the jobs existed the web worker parsed and ran each
upload itself: six such uploads made a new participant's arrival time out.
"""

import argparse
import asyncio
import base64
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import launch  # noqa: E402
from participation.loadclient import HTTPParticipant  # noqa: E402

PASSWORD = "bench-uploads-pass-123"


def synthetic_csv(rows: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, rows)
    f1, f2 = rng.normal(size=rows), rng.normal(size=rows)
    y = (f1 + 0.5 * f2 - 0.3 * g + rng.normal(scale=0.5, size=rows) > 0).astype(int)
    lines = ["g,y,f1,f2"] + [f"{a},{b},{c:.5f},{d:.5f}" for a, b, c, d in zip(g, y, f1, f2, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def multipart(fields: dict, files: dict) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{item}\r\n'.encode())
    for name, content in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.csv"\r\n'
        parts.append(head.encode() + b"Content-Type: text/csv\r\n\r\n" + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def api(method: str, path: str, body: bytes = b"", content_type: str = "application/json") -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", launch.PORT, timeout=600)
    auth = base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    headers = {"Host": "127.0.0.1", "Authorization": f"Basic {auth}", "Content-Type": content_type}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"{}")


async def arrivals(count: int, prefix: str, spacing: float) -> list[float]:
    async def one(i: int) -> float:
        await asyncio.sleep(i * spacing)
        person = HTTPParticipant(launch.PORT, f"{prefix}-{i}", launch.CHECKS, seed=i)
        started = time.perf_counter()
        try:
            await person.start()
        finally:
            await person.close()
        return time.perf_counter() - started

    return list(await asyncio.gather(*(one(i) for i in range(count))))


def describe(seconds: list[float]) -> str:
    v = np.array(seconds) * 1000
    return f"p50 {np.percentile(v, 50):7.1f} ms  p95 {np.percentile(v, 95):7.1f} ms  max {v.max():7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uploads", type=int, default=6)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--arrivals", type=int, default=30)
    parser.add_argument("--database-url")
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for the jobs")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="uploads-")
    env = launch.server_env(args.database_url, str(Path(tmp) / "bench.sqlite3"))
    env.update(GUNICORN_WORKERS="4", GUNICORN_THREADS="2", REPORTS_DIR=str(Path(tmp) / "runs"))
    env.update(DJANGO_SUPERUSER_PASSWORD=PASSWORD)
    launch.manage(env, "migrate", "--noinput")
    launch.manage(env, "flush", "--noinput")
    launch.manage(env, "collectstatic", "--noinput")
    launch.manage(env, "load_study", str(ROOT / "studies" / "bundled" / "effort_demo.json"))
    launch.manage(env, "createsuperuser", "--noinput", "--username", "admin", "--email", "a@example.org")
    processes = [
        launch.gunicorn(env),
        subprocess.Popen(
            [launch.PY, "manage.py", "job_worker", "--no-startup-delay", "--interval", "0.2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
    ]
    try:
        launch.wait_healthy()
        files = [synthetic_csv(args.rows, seed) for seed in range(args.uploads)]
        print(
            f"{args.uploads} uploads of {args.rows:,} rows ({len(files[0]) / 1e6:.1f} MB each); "
            f"{args.arrivals} arrivals"
        )
        asyncio.run(arrivals(8, "warm-up", 0.1))  # every gunicorn worker imports and caches once
        quiet = asyncio.run(arrivals(args.arrivals, "quiet", 0.2))
        print(f"arrivals, no uploads:      {describe(quiet)}")

        upload_times: list[float] = []
        job_urls: list[str] = []

        def upload(content: bytes) -> None:
            body, kind = multipart(
                {"protected": "g", "protected_value": "1", "target": "y", "negative": "0", "k": ["15"]},
                {"data": content},
            )
            started = time.perf_counter()
            status, job = api("POST", "/api/situation-testing/", body, kind)
            upload_times.append(time.perf_counter() - started)
            if status == 202:
                job_urls.append(job["url"])
            else:
                print(f"upload answered {status}: {job}")

        threads = [threading.Thread(target=upload, args=(content,)) for content in files]
        posted = time.perf_counter()
        for t in threads:
            t.start()
        busy = asyncio.run(arrivals(args.arrivals, "busy", 0.2))
        for t in threads:
            t.join()
        print(f"arrivals, during uploads:  {describe(busy)}")
        # Each API request with HTTP basic auth hashes the password (PBKDF2), most of this time.
        print(f"upload requests (basic auth + store + queue): {describe(upload_times)}")
        finished: dict[str, str] = {}
        deadline = time.monotonic() + args.wait
        while len(finished) < len(job_urls) and time.monotonic() < deadline:
            for url in job_urls:
                if url not in finished:
                    _, job = api("GET", url)
                    if job["status"] in ("succeeded", "failed"):
                        finished[url] = job["status"]
            time.sleep(1)
        statuses = sorted(finished.values())
        print(
            f"jobs: {len(finished)}/{len(job_urls)} finished ({', '.join(statuses) or 'none'}) "
            f"{time.perf_counter() - posted:.1f} s after the uploads began, one worker"
        )
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
