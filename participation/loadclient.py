"""A participant that takes a study over HTTP like a browser (cookies, CSRF token, every page);
used by bench/launch.py and the fault tests. asyncio streams speaking HTTP/1.1 with keep-alive, so one
process can drive a thousand participants without a thread each.

What it answers is not read off the page: its bot (``participation.page_bot.page_answers``) answers the
participant's current page with the page's task type's ``fill``, from the participant's plan, language and
condition in the database, read once (``page_bot.PageBot``). Where they are in the plan is read there too,
at the first page and after any answer other than the next page (a redirect: a replay, the end); a page saved
and answered with the next one (200) moves them one page on without a read. So a client that takes pages runs
with Django set up on the server's database (a test's, or ``bench/launch.py``'s) and reads it through
``asgiref``'s ``sync_to_async`` (one thread, whose database connection :meth:`HTTPParticipant.close` closes).
Of the HTML it only checks that the page has a form; the CSRF token is the cookie's, the form's address the
page's own.
"""

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from asgiref.sync import sync_to_async

if TYPE_CHECKING:  # imported when the first page is answered, with Django set up
    from participation.page_bot import PageBot


class HTTPParticipant:
    def __init__(self, port: int, external_id: str, slug: str = "effort-demo", seed: int = 0, retries: int = 20):
        self.port, self.external_id, self.slug, self.seed = port, external_id, slug, seed
        self.retries = retries
        self.disconnects = 0  # requests the server dropped (connection closed or reset, 502, 503)
        self.rng = random.Random(seed)
        self.cookies: dict[str, str] = {}
        self.path: str | None = None
        self.bot: PageBot | None = None  # made at the first page
        self.position: int | None = None  # of the current page in the plan; None: read it from the database
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _hang_up(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
        self._reader = self._writer = None

    async def close(self) -> None:
        """Close the connection to the server and, once the bot has answered, its connection to the database."""
        await self._hang_up()
        if self.bot is not None:
            from django.db import connections

            await sync_to_async(connections.close_all)()

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
            await self._hang_up()
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
                await self._hang_up()
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

    async def answers(self) -> dict:
        """The POST data of the current page: the bot's answers (``page_bot.PageBot``) and the CSRF token."""
        from participation.page_bot import PageBot, participant_id_of  # Django is set up by now

        if self.bot is None:
            participant_id = await sync_to_async(participant_id_of)(self.slug, self.external_id)
            self.bot = await sync_to_async(PageBot)(participant_id, seed=self.seed)
        if self.position is None:
            self.position = await sync_to_async(self.bot.position)()
        data = await sync_to_async(self.bot.answers)(self.position)
        return {**data, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}

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
            if 'name="page_key"' not in html:  # a page without a form to send (the time is over)
                raise RuntimeError(f"{self.external_id}: no form at {self.path}")
            data = await self.answers()
            key = str(data["page_key"])
            started = loop.time()
            status, location, payload = await self.request("POST", self.path, data)
            if on_post:
                on_post(key, status, loop.time() - started)
            if status == 422:  # the same answers would be refused again: stop rather than loop
                raise RuntimeError(f"{self.external_id}: answers refused at {key}")
            if status in (200, 302):
                saved += 1
            self.position = self.position + 1 if status == 200 and self.position is not None else None
            html = payload if status == 200 else None
            if status == 302:
                self.path = location
            if think:
                await asyncio.sleep(think())
        return saved
