"""Participants are not starved by researchers' uploads: new participants arrive (start + consent)
while researchers upload, against gunicorn in production settings with one job worker.

Run: .venv/bin/python bench/uploads.py [--uploads 6] [--rows 20000] [--arrivals 30]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB] [--port 8765]   (the bench database is WIPED first)
     .venv/bin/python bench/uploads.py --scenario study-files [--builds 2] [--build-rows 4000]
     [--build-columns 50] [--study-uploads 2] [--workers 1 --threads 2] [--arrivals 60 --spacing 0.5]
     [--worker-nice 10] ...

Default scenario (situation testing): six researchers each upload a 20,000-row CSV to the API.
Prints the arrival latency (start link + consent page + consent POST) without uploads and during
them, how long each upload request took (it only stores the file and queues a job), and how long
the worker took to finish the jobs. Before the jobs existed the web worker parsed and ran each
upload itself: six such uploads made a new participant's arrival time out.

``--scenario study-files`` (issue 22, finding 4): one gunicorn worker of two threads, as in the finding.
A researcher logs in and, while participants arrive, posts ``--builds`` builder forms (comparable template:
Gower distances over all pairs of ``--build-rows`` x ``--build-columns``) and ``--study-uploads`` study files
of about 4 MB; then "Save" / "Load" on the first two previews reached (load jobs). Prints arrivals' latency
without, during this work and during the loads, each researcher request's time (store + queue), the inline
worst cases (a builder form at the inline bound; a study file just under ``INLINE_MAX_BYTES`` uploaded,
previewed and loaded), and the jobs' outcomes and durations. Before the jobs the builder held a web thread
for the whole build.
"""

import argparse
import asyncio
import base64
import http.client
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
from bench import launch  # noqa: E402
from participation.loadclient import HTTPParticipant  # noqa: E402

PASSWORD = "bench-uploads-pass-123"
FEATURES = 15  # of each subject in the uploaded study files


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
        person = HTTPParticipant(launch.PORT, f"{prefix}-{i}", seed=i)
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


class Browser:
    """A researcher's browser session over HTTP: cookies, the login form, CSRF tokens, multipart forms."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> tuple[int, str, str]:
        """(status, Location, body) of one request, cookies kept."""
        conn = http.client.HTTPConnection("127.0.0.1", launch.PORT, timeout=900)
        headers = {"Host": "127.0.0.1", "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response.status, response.getheader("Location", ""), response.read().decode("utf-8", "replace")

    def csrf(self) -> str:
        return self.cookies["csrftoken"]

    def login(self, username: str, password: str) -> None:
        self.request("GET", "/accounts/login/")
        body = f"username={username}&password={password}&csrfmiddlewaretoken={self.csrf()}".encode()
        status, location, _ = self.request("POST", "/accounts/login/", body, "application/x-www-form-urlencoded")
        if status != 302:
            raise RuntimeError(f"login answered {status}")

    def post_form(self, path: str, fields: dict, files: dict) -> tuple[int, str, str]:
        body, kind = multipart({**fields, "csrfmiddlewaretoken": self.csrf()}, files)
        return self.request("POST", path, body, kind)


def subjects_csv(rows: int, columns: int, seed: int) -> bytes:
    """A builder CSV: id, a 0/1 AI label and ``columns`` numeric features."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, columns)).round(3)
    head = ["id", "ai_label", *(f"f{j}" for j in range(columns))]
    lines = [",".join(head)]
    for i in range(rows):
        lines.append(f"S{i:05d},{int(values[i, 0] > 0)}," + ",".join(f"{v:g}" for v in values[i]))
    return ("\n".join(lines) + "\n").encode()


def study_file(subjects: int, slug: str) -> bytes:
    """A valid format 2 study file (an agree block over a pool of ``subjects``, 10 per participant)."""
    spec = {
        "format": 2,
        "slug": slug,
        "title": f"Bench upload {slug}",
        "consent": {"text": "c"},
        "completion": {"code": "BENCH"},
        "pools": [
            {
                "key": "p",
                "display": {"table": [f"f{j}" for j in range(FEATURES)]},
                "subjects": [
                    {
                        "id": f"s{i}",
                        "features": {f"f{j}": (i * (j + 3)) % 1000 / 10 for j in range(FEATURES)},
                        "models": {"m": {"label": i % 2}},
                    }
                    for i in range(subjects)
                ],
            }
        ],
        "blocks": [
            {"key": "intro", "type": "instructions", "text": "x"},
            {
                "key": "b",
                "type": "task",
                "task": "agree",
                "pool": "p",
                "model": "m",
                "assignment": {"per_participant": 10},
            },
        ],
    }
    return json.dumps(spec, indent=1).encode()


def build_fields(template: str = "comparable", columns: int = 50) -> dict:
    """The builder form for a :func:`subjects_csv` table of ``columns`` features: the column picker marks the
    id, the AI's label and every feature."""
    roles = ["id", "label", *(["feature"] * columns)]
    return {
        "template": template,
        **{f"role_{i}": role for i, role in enumerate(roles)},
        "per_participant": "10",
        **dict.fromkeys(("profile", "stratify_by"), ""),
        **dict.fromkeys(("slug", "title", "completion_code"), ""),
    }


def wait_for_jobs(browser: Browser, job_paths: list[str], wait: float, begin: float) -> dict[str, tuple[str, float]]:
    """Poll each job page until it leads on (succeeded) or shows the failure: path -> (outcome, seconds
    since ``begin``, when the jobs were posted; a job done before the first poll counts at that poll)."""
    done: dict[str, tuple[str, float]] = {}
    while len(done) < len(job_paths) and time.perf_counter() - begin < wait:
        for path in job_paths:
            if path in done:
                continue
            status, location, body = browser.request("GET", path)
            if status == 302:
                done[path] = (f"succeeded -> {location}", time.perf_counter() - begin)
            elif 'class="status failed"' in body:
                found = re.search(r"<li>(.*?)</li>|The job failed: ([^<]*)", body)
                why = next(g for g in found.groups() if g) if found else "?"
                done[path] = (f"failed: {why[:100]}", time.perf_counter() - begin)
        time.sleep(0.5)
    return done


def study_files(args) -> None:
    """The study-files scenario (see the module docstring)."""
    researcher = Browser()
    researcher.login("admin", PASSWORD)
    builds = [subjects_csv(args.build_rows, args.build_columns, seed) for seed in range(args.builds)]
    uploads = [study_file(args.upload_subjects, f"bench-upload-{n}") for n in range(args.study_uploads)]
    print(
        f"gunicorn {args.workers} worker(s) x {args.threads} threads, one job worker; {args.builds} builder forms of "
        f"{args.build_rows:,} rows x {args.build_columns} features (comparable, {len(builds[0]) / 1e6:.1f} MB), "
        f"{args.study_uploads} study files of {len(uploads[0]) / 1e6:.1f} MB; {args.arrivals} arrivals every "
        f"{args.spacing} s"
    )

    # The inline worst cases: a builder form at the inline bound, and a study file just under
    # research.study_upload.INLINE_MAX_BYTES uploaded, previewed and loaded.
    def timed(path: str, fields: dict, files: dict) -> str:
        began = time.perf_counter()
        status, location, _ = researcher.post_form(path, fields, files)
        kind = "inline" if status == 302 and "/jobs/" not in location else f"{status} {location}"
        return f"{(time.perf_counter() - began) * 1000:.0f} ms ({kind})"

    at_bound = {"subjects": subjects_csv(200, 10, 99)}  # id, label, 10 features: 200 rows, 2,400 cells
    cold = timed("/researcher/build/", build_fields(columns=10), at_bound)  # the worker's first build imports pandas
    warm = [
        timed("/researcher/build/", build_fields(template, 10), at_bound) for template in ("comparable", "disagreement")
    ]
    print(
        f"inline worst case, builder form of 200 rows x 12 columns: first {cold} (imports pandas), then "
        f"comparable {warm[0]}, disagreement {warm[1]}"
    )
    limit = 96 * 1024  # research.study_upload.INLINE_MAX_BYTES
    small = next(raw for n in range(400, 0, -1) if len(raw := study_file(n, "bench-inline")) <= limit)
    began = time.perf_counter()
    _, preview, _ = researcher.post_form("/researcher/upload/", {}, {"file": small})
    upload_ms = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    researcher.request("GET", preview)
    preview_ms = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    load = f"csrfmiddlewaretoken={researcher.csrf()}".encode()
    status, location, _ = researcher.request("POST", preview, load, "application/x-www-form-urlencoded")
    print(
        f"inline worst case, study file of {len(small) / 1024:.0f} KiB: upload {upload_ms:.0f} ms, preview "
        f"{preview_ms:.0f} ms, load {(time.perf_counter() - began) * 1000:.0f} ms ({status} {location})"
    )
    asyncio.run(arrivals(8, "warm-up", 0.1))
    quiet = asyncio.run(arrivals(args.arrivals, "quiet", args.spacing))
    print(f"arrivals, no researcher work:     {describe(quiet)}")

    request_times: list[float] = []
    job_paths: list[str] = []
    lock = threading.Lock()

    def post(path: str, fields: dict, files: dict) -> None:
        began = time.perf_counter()
        status, location, body = researcher.post_form(path, fields, files)
        with lock:
            request_times.append(time.perf_counter() - began)
            if status == 302 and "/jobs/" in location:
                job_paths.append(location)
            else:
                print(f"{path} answered {status} -> {location or body[:200]}")

    threads = [
        threading.Thread(
            target=post, args=("/researcher/build/", build_fields(columns=args.build_columns), {"subjects": c})
        )
        for c in builds
    ]
    threads += [threading.Thread(target=post, args=("/researcher/upload/", {}, {"file": c})) for c in uploads]
    posted = time.perf_counter()
    for t in threads:
        t.start()
    busy = asyncio.run(arrivals(args.arrivals, "busy", args.spacing))
    for t in threads:
        t.join()
    print(f"arrivals, during builds/uploads:  {describe(busy)}")
    print(f"researcher requests (store + queue): {describe(request_times)}")
    done = wait_for_jobs(researcher, job_paths, args.wait, posted)
    for path in job_paths:
        outcome, seconds = done.get(path, ("not finished", float("nan")))
        print(f"  job {path.rsplit('/', 2)[-2][:8]}: {outcome}, {seconds:.1f} s after posting")
    previews = [outcome.split(" -> ")[1] for outcome, _ in done.values() if outcome.startswith("succeeded")]
    loads: list[str] = []
    loading = time.perf_counter()
    for preview in previews[:2]:  # "Save" / "Load": the preview's form posts to its load job
        _, _, page = researcher.request("GET", preview)
        action = re.search(r'<form method="post" class="actions" action="([^"]+)"', page)
        if action:
            status, location, _ = researcher.request(
                "POST",
                action.group(1).replace("&amp;", "&"),
                f"csrfmiddlewaretoken={researcher.csrf()}".encode(),
                "application/x-www-form-urlencoded",
            )
            loads.append(location)
    if loads:
        busy_loads = asyncio.run(arrivals(args.arrivals, "loading", args.spacing))
        print(f"arrivals, during loads:           {describe(busy_loads)}")
        for path, (outcome, seconds) in wait_for_jobs(researcher, loads, args.wait, loading).items():
            print(f"  load job {path.rsplit('/', 2)[-2][:8]}: {outcome}, {seconds:.1f} s after posting")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("situation-testing", "study-files"), default="situation-testing")
    parser.add_argument("--uploads", type=int, default=6)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--arrivals", type=int, default=30)
    parser.add_argument("--spacing", type=float, default=0.2, help="seconds between arrivals")
    parser.add_argument("--builds", type=int, default=2)
    parser.add_argument("--build-rows", type=int, default=4000)
    parser.add_argument("--build-columns", type=int, default=50)
    parser.add_argument("--study-uploads", type=int, default=2)
    parser.add_argument("--upload-subjects", type=int, default=10_000, help="subjects of each uploaded study file")
    parser.add_argument("--workers", type=int, help="gunicorn workers (default 4; study-files: 1)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--port", type=int, default=launch.PORT)
    parser.add_argument("--worker-nice", type=int, default=0, help="CPU niceness of the job worker (nice -n)")
    parser.add_argument("--database-url")
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for the jobs")
    args = parser.parse_args()
    launch.PORT = args.port
    args.workers = args.workers or (1 if args.scenario == "study-files" else 4)
    tmp = tempfile.mkdtemp(prefix="uploads-")
    env = launch.server_env(args.database_url, str(Path(tmp) / "bench.sqlite3"))
    env.update(GUNICORN_WORKERS=str(args.workers), GUNICORN_THREADS=str(args.threads))
    env.update(REPORTS_DIR=str(Path(tmp) / "runs"))
    env.update(DJANGO_SUPERUSER_PASSWORD=PASSWORD)
    launch.manage(env, "migrate", "--noinput")
    launch.manage(env, "flush", "--noinput")
    launch.manage(env, "collectstatic", "--noinput")
    launch.manage(env, "load_study", str(ROOT / "studies" / "bundled" / "effort_demo.json"))
    launch.manage(env, "createsuperuser", "--noinput", "--username", "admin", "--email", "a@example.org")
    processes = [
        launch.gunicorn(env),
        subprocess.Popen(
            ["nice", "-n", str(args.worker_nice)]
            + [launch.PY, "manage.py", "job_worker", "--no-startup-delay", "--interval", "0.2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
    ]
    try:
        launch.wait_healthy()
        if args.scenario == "study-files":
            study_files(args)
            return
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
