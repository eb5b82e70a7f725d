"""Launch benchmark: simulated participants take the whole demo study over HTTP (loopback), like a
browser (cookies, CSRF tokens, every page), against gunicorn in production settings.

Run: .venv/bin/python bench/launch.py [--participants 1000] [--arrival-seconds 60] [--think 4]
     [--workers 4 --threads 2] [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]
     .venv/bin/python bench/launch.py --scenario burst [--arrivals 100] [--bursts 3] [--study FILE.json] ...
(the bench database is WIPED first). Without --database-url it uses a fresh SQLite file (the
embedded default, WAL mode).

Each participant is an asyncio task (one event loop drives them all): arrives at a uniformly
random moment of the arrival window, takes every page and thinks 0.5-1.5 x --think seconds
between pages (compressed: people take 10-30 s). With 1,000 participants and 4 s that offers about
250 submissions/s once all have arrived.
Prints submissions/s per 10 s, the rate sustained over the busiest minute and the latency there,
latency percentiles per page type, errors, the ratio to a minimal Django view (/healthz) on the
same server, and then checks in the database that every participant has exactly the expected
answers and that the conditions are balanced within one.

``--scenario burst``: ``--arrivals`` participants open the study link at the same moment and
consent (2 requests each: the link, answered with the consent page, and the decision), ``--bursts`` times in a row;
prints start + consent p50/p95/p99 over every arrival, then the condition counts and the spread of
judgements per item (``bench/balance.py``). ``--study`` loads another study file (default the effort
demo), e.g. a format 2 study with ``per_participant`` sampling.
"""

import argparse
import asyncio
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
from pathlib import Path

import numpy as np

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from config import nginx  # noqa: E402
from participation.loadclient import HTTPParticipant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SPEC = json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text())


PORT = 8765
SLUG = SPEC["slug"]


async def participant(index: int, start_at: float, think: float, retries: int, stats: dict) -> None:
    """One simulated person: arrives at ``start_at``, answers every page, thinks between pages
    (uniformly 0.5-1.5 x ``think`` seconds: real people take 10-30 s, so this is compressed)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, start_at - loop.time()))
    person = HTTPParticipant(PORT, f"bench-{index}", slug=SLUG, seed=index, retries=retries)

    def record(key, status, seconds):
        kind = "POST " + (key.split("/")[0] if "/" in key else key)
        stats["posts"].append((loop.time(), kind, seconds))
        if status not in (200, 302):
            stats["errors"][kind] += 1

    try:
        t0 = loop.time()
        await person.start()
        stats["starts"].append(loop.time() - t0)
        await person.take_pages(on_post=record, think=lambda: think * person.rng.uniform(0.5, 1.5))
        stats["finished"] += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported
        stats["errors"][f"{type(exc).__name__}: {exc}"[:80]] += 1
    finally:
        stats["disconnects"] += person.disconnects
        await person.close()


async def crowd(args) -> tuple[dict, float, float]:
    """All participants as tasks of one event loop; returns the statistics, start and duration."""
    loop = asyncio.get_running_loop()
    stats = {"posts": [], "starts": [], "errors": defaultdict(int), "finished": 0, "disconnects": 0}
    stats["participants"] = args.participants
    begin = loop.time() + 2
    arrivals = random.Random(0)
    starts = sorted(begin + arrivals.uniform(0, args.arrival_seconds) for _ in range(args.participants))
    await asyncio.gather(*(participant(i, at, args.think, args.retries, stats) for i, at in enumerate(starts)))
    return stats, begin, loop.time() - begin


async def burst(arrivals: int, first: int) -> tuple[list[float], dict]:
    """``arrivals`` participants open the link at the same moment and consent; returns the seconds
    each took for start + consent."""
    errors: dict = defaultdict(int)
    seconds: list[float] = []

    async def arrive(index: int) -> None:
        loop = asyncio.get_running_loop()
        person = HTTPParticipant(PORT, f"burst-{index}", slug=SLUG, seed=index)
        try:
            t0 = loop.time()
            await person.start()
            if not person.path or "/page/" not in person.path:
                raise RuntimeError(f"consent led to {person.path}")
            seconds.append(loop.time() - t0)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors[type(exc).__name__] += 1
        finally:
            await person.close()

    await asyncio.gather(*(arrive(first + i) for i in range(arrivals)))
    return seconds, errors


def run_bursts(args, env) -> None:
    print(
        f"database: {'PostgreSQL' if args.database_url else 'SQLite (WAL)'}; {'' if args.direct else 'nginx, '}"
        f"gunicorn {args.workers} workers x "
        f"{args.threads} threads; study {SLUG}; {args.bursts} bursts of {args.arrivals} simultaneous arrivals"
    )
    every: list[float] = []
    errors: dict = defaultdict(int)
    for b in range(args.bursts):
        seconds, failed = asyncio.run(burst(args.arrivals, b * args.arrivals))
        every += seconds
        for name, n in failed.items():
            errors[name] += n
        print(f"burst {b + 1}: start + consent p50 / p95 / p99 ms {percentiles(seconds)}")
        time.sleep(1.0)
    print(f"{'start + consent':<26}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    print(f"{'every arrival':<26}{len(every):>7}{percentiles(every)}")
    print(f"errors: {dict(errors) or 'none'}")
    out = subprocess.run(
        [PY, str(ROOT / "bench" / "balance.py"), SLUG], cwd=ROOT, env=env, capture_output=True, text=True
    )
    print((out.stdout + out.stderr).strip())


def percentiles(seconds: list[float]) -> str:
    v = np.array(seconds) * 1000
    return "".join(f"{np.percentile(v, q):>9.1f}" for q in (50, 95, 99)) if len(v) else ""


def report(stats: dict, begin: float, elapsed: float, window: int) -> None:
    """Throughput per 10 s, the busiest ``window`` seconds (sustained rate and latency there) and
    latency per page type over the whole run."""
    posts = stats["posts"]
    times = np.array([t for t, _, _ in posts]) - begin
    bins = np.histogram(times, bins=np.arange(0, elapsed + 10, 10))[0]
    print("submissions/s per 10 s: " + " ".join(f"{b / 10:.0f}" for b in bins))
    width = max(1, min(window // 10, len(bins)))
    sums = np.convolve(bins, np.ones(width, dtype=int), mode="valid")
    first = int(np.argmax(sums))
    lo, hi = first * 10, (first + width) * 10
    peak = [seconds for t, _, seconds in posts if lo <= t - begin < hi]
    print(
        f"finished {stats['finished']}/{stats['participants']} in {elapsed:.1f} s; {len(posts)} page submissions, "
        f"{len(posts) / elapsed:.1f}/s overall; sustained over the busiest {hi - lo} s ({lo}-{hi} s): "
        f"{len(peak) / (hi - lo):.1f}/s"
    )
    print(f"{'latency':<26}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    print(f"{'every POST at the peak':<26}{len(peak):>7}{percentiles(peak)}")
    by_kind = defaultdict(list)
    for _, kind, seconds in posts:
        by_kind[kind].append(seconds)
    for kind, values in sorted(by_kind.items()):
        print(f"{kind:<26}{len(values):>7}{percentiles(values)}")
    print(f"{'start + consent':<26}{len(stats['starts']):>7}{percentiles(stats['starts'])}")
    print(f"errors: {dict(stats['errors']) or 'none'}")
    print(
        f"disconnects (requests the server dropped: connection closed or reset, 502, 503): {stats['disconnects']}; "
        f"participants who could not finish: {stats['participants'] - stats['finished']}"
    )


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
        # Every simulated participant arrives from 127.0.0.1: the per-address limit on new
        # arrivals (and on wrong resume codes) is switched off for the benchmark.
        "PARTICIPANT_ARRIVALS_PER_ADDRESS": "0",
        "PARTICIPANT_RESUME_FAILURES_PER_ADDRESS": "0",
    }
    if database_url:
        env["DATABASE_URL"] = database_url
    else:
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = sqlite_path
    return env


def bot_database(env: dict) -> None:
    """Django in this process on the servers' database (``env``'s): the load client's bots read there what
    each participant's page is (``participation.page_bot``)."""
    import django

    os.environ.update(env)
    django.setup()
    import participation.page_bot  # noqa: F401  (the bots' modules, loaded before participants arrive:
    import simulation.raters  # noqa: F401  the default fill's rater imports scipy, seconds under load)


def manage(env, *args):
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def gunicorn(env: dict) -> subprocess.Popen:
    """gunicorn as ``make serve`` runs it (config/gunicorn.conf.py), with ``env``, output discarded."""
    return subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "config.wsgi", "-c", "config/gunicorn.conf.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def serve(env: dict, directory: Path, direct: bool = False) -> list[subprocess.Popen]:
    """The servers as ``make serve`` runs them: nginx on PORT in front of gunicorn on PORT + 1 (nginx's
    errors in ``directory``/error.log), or with ``direct`` gunicorn alone on PORT (as before nginx)."""
    if direct:
        return [gunicorn(env)]
    env.update(GUNICORN_BIND=f"127.0.0.1:{PORT + 1}", PARTICIPANT_ADDRESS_HEADER="X-Forwarded-For")
    app = gunicorn(env)
    try:
        wait_healthy(PORT + 1)
        with (directory / "error.log").open("w") as errors:
            proxy = nginx.start(directory, listen=f"127.0.0.1:{PORT}", upstream=env["GUNICORN_BIND"], stderr=errors)
    except BaseException:
        app.terminate()
        app.wait(timeout=30)
        raise
    return [app, proxy]


def wait_healthy(port: int | None = None, timeout=60.0):
    """Wait until /healthz on ``port`` (default PORT) answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port or PORT, timeout=2)
            conn.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
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
    out = subprocess.run([PY, "manage.py", "check_integrity", SLUG], cwd=ROOT, env=env, capture_output=True, text=True)
    return (out.stdout + out.stderr).strip()


def cpu_check() -> str:
    """How fast this machine runs Python right now (its speed varies on shared hosts), so that runs of
    different days can be compared: the CPU time of 3 million integer additions."""
    started, total = time.process_time(), 0
    for i in range(3_000_000):
        total += i
    return f"CPU check: 3 million Python additions in {(time.process_time() - started) * 1000:.0f} ms of CPU"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--arrival-seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=4.0, help="mean think time per page, seconds")
    parser.add_argument("--window", type=int, default=60, help="seconds of the peak window reported")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker")
    parser.add_argument("--database-url")
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        help="tries per request; 1 (default): a dropped request ends the participant, as a plain HTTP client's does",
    )
    parser.add_argument("--direct", action="store_true", help="no nginx: participants talk to gunicorn itself")
    parser.add_argument("--scenario", choices=["launch", "burst"], default="launch")
    parser.add_argument("--arrivals", type=int, default=100, help="burst: simultaneous arrivals per burst")
    parser.add_argument("--bursts", type=int, default=3, help="burst: how many bursts, one after the other")
    parser.add_argument("--study", type=Path, default=ROOT / "studies" / "bundled" / "effort_demo.json")
    args = parser.parse_args()
    globals()["PORT"] = args.port
    study = json.loads(args.study.read_text())
    globals()["SLUG"] = study["slug"]
    tmp = tempfile.mkdtemp(prefix="launch-")
    env = server_env(args.database_url, str(Path(tmp) / "bench.sqlite3"))
    env.update(GUNICORN_WORKERS=str(args.workers), GUNICORN_THREADS=str(args.threads))
    manage(env, "migrate", "--noinput")
    manage(env, "flush", "--noinput")
    manage(env, "collectstatic", "--noinput")
    manage(env, "load_study", str(args.study))
    bot_database(env)
    proxy_dir = Path(tempfile.mkdtemp(prefix="launch-nginx-"))  # nginx's workers may enter it
    servers = serve(env, proxy_dir, direct=args.direct)
    try:
        wait_healthy()
        print(cpu_check())
        if args.scenario == "burst":
            run_bursts(args, env)
            return
        print(
            f"database: {'PostgreSQL' if args.database_url else 'SQLite (WAL)'}; {'' if args.direct else 'nginx, '}"
            f"gunicorn {args.workers} workers x {args.threads} threads; {args.participants} participants arriving "
            f"over {args.arrival_seconds:.0f} s, think time {args.think:g} s +-50% per page"
        )
        stats, begin, elapsed = asyncio.run(crowd(args))
        report(stats, begin, elapsed, args.window)
        rate = ceiling()
        peak = max_rate(stats, begin)
        print(
            f"minimal Django view (/healthz) on the same server: {rate:.0f} requests/s; page submissions at the "
            f"peak ran at {peak:.0f}/s = {peak / rate:.2f} of that ceiling"
        )
        print(verify(env))
        if not args.direct:
            errors = (proxy_dir / "error.log").read_text().splitlines()
            print(f"nginx: {sum('[error]' in line for line in errors)} error lines ({proxy_dir}/error.log)")
    finally:
        for server in reversed(servers):
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


def max_rate(stats: dict, begin: float) -> float:
    """Submissions/s in the busiest 10 s."""
    times = np.array([t for t, _, _ in stats["posts"]]) - begin
    return np.histogram(times, bins=np.arange(0, times.max() + 10, 10))[0].max() / 10 if len(times) else 0.0


if __name__ == "__main__":
    main()
