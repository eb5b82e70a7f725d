"""A participant that takes a study over HTTP like a browser (cookies, CSRF token, every page);
used by bench/launch.py and the fault tests. Standard library only."""

import http.client
import random
import re
import time
from urllib.parse import urlencode


class HTTPParticipant:
    def __init__(self, port: int, external_id: str, checks: dict[str, str], slug: str = "effort-demo", seed: int = 0):
        self.port, self.external_id, self.checks, self.slug = port, external_id, checks, slug
        self.rng = random.Random(seed)
        self.cookies: dict[str, str] = {}
        self.conn = None
        self.path: str | None = None

    def request(self, method: str, path: str, body: dict | None = None, retries: int = 20):
        """One request; a refused or dropped connection (an idle keep-alive connection closed by the
        server, a worker killed, the server restarting) is retried."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), "Host": "127.0.0.1"}
        data = None
        if body is not None:
            data = urlencode(body, doseq=True)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in range(retries):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.conn.request(method, path, body=data, headers=headers)
                response = self.conn.getresponse()
                payload = response.read().decode("utf-8", "replace")
                if response.status in (502, 503):
                    raise ConnectionError(f"server answered {response.status}")
                break
            except (ConnectionError, http.client.HTTPException, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == retries - 1:
                    raise
                if attempt:  # the first retry is immediate, as a browser's: the server closed an idle connection
                    time.sleep(0.25)
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response.status, response.getheader("Location"), payload

    def start(self) -> None:
        _, location, _ = self.request("GET", f"/s/{self.slug}/?PROLIFIC_PID={self.external_id}&STUDY_ID=s&SESSION_ID=x")
        if location and location.endswith("/consent/"):
            self.request("GET", location)
            _, location, _ = self.request(
                "POST", location, {"decision": "accept", "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            )
        self.path = location

    def answer(self, key: str, html: str) -> dict:
        data = {"page_key": key, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
        if key.startswith("pair/"):
            data["rating"] = str(self.rng.randint(1, 6))
            if 'name="prediction"' in html:
                data["prediction"] = str(self.rng.randint(0, 100))
        elif key.startswith("output/"):
            data["k_decision"] = "accept"
            for subject in re.findall(r'name="score_([\w-]+)"', html):
                data[f"score_{subject}"] = str(self.rng.randint(0, 100))
                data[f"rationale_{subject}"] = "Similar totals but a different trend."
        elif key == "disagreement":
            for name in sorted(set(re.findall(r'name="(agree_[\w-]+)"', html))):
                data[name] = self.rng.choice(["0", "1"])
        elif key.startswith("attention/"):
            data["choice"] = self.checks[key.split("/", 1)[1]]
        return data

    def take_pages(self, count: int | None = None, on_post=None) -> int:
        """Answer up to ``count`` pages (all when None); returns how many were saved.

        A saved page is answered with the next page itself (200) or, after the last page or a
        replay, with a redirect (302); a refused answer comes back as 422.
        """
        saved, html = 0, None
        while self.path and "/page/" in self.path and (count is None or saved < count):
            if html is None:
                status, _, html = self.request("GET", self.path)
                if status != 200:
                    raise RuntimeError(f"{self.external_id}: status {status} at {self.path}")
            match = re.search(r'name="page_key" value="([^"]+)"', html)
            if not match:
                raise RuntimeError(f"{self.external_id}: no form at {self.path}")
            key = match.group(1)
            started = time.monotonic()
            status, location, payload = self.request("POST", self.path, self.answer(key, html))
            if on_post:
                on_post(key, status, time.monotonic() - started)
            if status in (200, 302):
                saved += 1
            html = payload if status == 200 else None
            if status == 302:
                self.path = location
        return saved
