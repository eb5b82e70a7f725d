"""A participant that takes a study over HTTP like a browser (cookies, CSRF token, every page);
used by bench/launch.py and the fault tests. Standard library only: asyncio streams speaking
HTTP/1.1 with keep-alive, so one process can drive a thousand participants without a thread each."""

import asyncio
import random
import re
from collections.abc import Callable
from urllib.parse import urlencode


class HTTPParticipant:
    def __init__(
        self,
        port: int,
        external_id: str,
        checks: dict[str, str],
        slug: str = "effort-demo",
        seed: int = 0,
        retries: int = 20,
    ):
        self.port, self.external_id, self.checks, self.slug = port, external_id, checks, slug
        self.retries = retries
        self.disconnects = 0  # requests the server dropped (connection closed or reset, 502, 503)
        self.rng = random.Random(seed)
        self.cookies: dict[str, str] = {}
        self.path: str | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
        self._reader = self._writer = None

    async def _exchange(self, method: str, path: str, data: bytes) -> tuple[int, dict[str, list[str]], bytes]:
        if self._reader is None or self._writer is None:  # both or neither (close() clears both)
            self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._reader, self._writer
        head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(data)}"]
        if self.cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if data:
            head.append("Content-Type: application/x-www-form-urlencoded")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("connection closed by the server")
        status = int(status_line.split()[1])
        headers: dict[str, list[str]] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        if headers.get("transfer-encoding", [""])[0].lower() == "chunked":
            body = b""
            while size := int((await reader.readline()).split(b";")[0], 16):
                body += await reader.readexactly(size)
                await reader.readline()
            await reader.readline()
        else:
            body = await reader.readexactly(int(headers.get("content-length", ["0"])[0]))
        if headers.get("connection", [""])[0].lower() == "close":
            await self.close()
        return status, headers, body

    async def request(self, method: str, path: str, body: dict | None = None):
        """One request, tried up to ``self.retries`` times: a refused or dropped connection (an idle
        keep-alive connection closed by the server, a worker killed, the server restarting) is
        counted in ``self.disconnects`` and retried, the first time at once, as a browser does, then
        every 0.25 s. With ``retries=1`` the first one raises, as a plain HTTP client's does."""
        data = urlencode(body, doseq=True).encode() if body is not None else b""
        for attempt in range(self.retries):
            try:
                status, headers, payload = await self._exchange(method, path, data)
                if status in (502, 503):
                    raise ConnectionError(f"server answered {status}")
                break
            except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                self.disconnects += 1
                await self.close()
                if attempt == self.retries - 1:
                    raise
                if attempt:
                    await asyncio.sleep(0.25)
        for value in headers.get("set-cookie", []):
            name, _, rest = value.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        return status, headers.get("location", [None])[0], payload.decode("utf-8", "replace")

    async def start(self) -> None:
        """Open the study link (Prolific's form, with this attempt's own SESSION_ID, so the same
        participant could resume from a fresh client too) and consent: a new arrival is answered
        with the consent page, a returning one who has not decided is sent to it."""
        consent = f"/s/{self.slug}/consent/"
        status, location, _ = await self.request(
            "GET", f"/s/{self.slug}/?PROLIFIC_PID={self.external_id}&STUDY_ID=s&SESSION_ID=session-{self.external_id}"
        )
        if location == consent:
            status, location, _ = await self.request("GET", consent)
        if status == 200:
            _, location, _ = await self.request(
                "POST", consent, {"decision": "accept", "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
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
        elif key.startswith("attention/"):
            data["choice"] = self.checks[key.split("/", 1)[1]]
        elif key in self.checks:  # a format 2 attention block (page key = block key)
            data["choice"] = self.checks[key]
        else:
            data.update(self._fill(html))
        return data

    def _fill(self, html: str) -> dict:
        """Answers for any other page (format 2 task and questionnaire pages, a converted study's
        disagreement page), read off its form:
        one value of every radio group, a number within every number field's min/max, a few words
        in every text field; checkboxes (optional multiple choice) are left empty."""
        data: dict[str, str] = {}
        radios: dict[str, list[str]] = {}
        for tag in re.findall(r"<input\b[^>]*>", html):
            attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
            name, kind = attrs.get("name"), attrs.get("type", "text")
            if not name or name in ("page_key", "csrfmiddlewaretoken") or "disabled" in tag:
                continue
            if kind == "radio":
                radios.setdefault(name, []).append(attrs.get("value", ""))
            elif kind == "number":
                low, high = float(attrs.get("min", 0)), float(attrs.get("max", 100))
                data[name] = str(self.rng.randint(int(low), int(high)))
            elif kind == "text":
                data[name] = "A short answer."
        for name in re.findall(r'<textarea\b[^>]*name="([^"]+)"', html):
            data[name] = "Similar records, so a similar decision."
        data.update({name: self.rng.choice(values) for name, values in radios.items()})
        return data

    async def take_pages(
        self,
        count: int | None = None,
        on_post: Callable[[str, int, float], None] | None = None,
        think: Callable[[], float] | None = None,
    ) -> int:
        """Answer up to ``count`` pages (all when None), pausing ``think()`` seconds after each;
        returns how many were saved.

        A saved page is answered with the next page itself (200) or, after the last page or a
        replay, with a redirect (302); a refused answer comes back as 422 and raises RuntimeError.
        """
        loop = asyncio.get_running_loop()
        saved, html = 0, None
        while self.path and "/page/" in self.path and (count is None or saved < count):
            if html is None:
                status, _, html = await self.request("GET", self.path)
                if status != 200:
                    raise RuntimeError(f"{self.external_id}: status {status} at {self.path}")
            match = re.search(r'name="page_key" value="([^"]+)"', html)
            if not match:
                raise RuntimeError(f"{self.external_id}: no form at {self.path}")
            key = match.group(1)
            started = loop.time()
            status, location, payload = await self.request("POST", self.path, self.answer(key, html))
            if on_post:
                on_post(key, status, loop.time() - started)
            if status == 422:  # the same answers would be refused again: stop rather than loop
                raise RuntimeError(f"{self.external_id}: answers refused at {key}")
            if status in (200, 302):
                saved += 1
            html = payload if status == 200 else None
            if status == 302:
                self.path = location
            if think:
                await asyncio.sleep(think())
        return saved
