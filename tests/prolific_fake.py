"""A local fake of Prolific's researcher API (https://docs.prolific.com/api-reference), a real HTTP server the
tests start on 127.0.0.1 (port 8700-8799): it keeps studies, submissions and bulk bonuses in memory and
answers as the documentation describes, refusals included:

* every call needs ``Authorization: Token <token>`` (401 otherwise);
* ``POST /studies/`` needs name, description, an ``external_study_url`` with ``{{%PROLIFIC_PID%}}``,
  ``{{%STUDY_ID%}}`` and ``{{%SESSION_ID%}}``, integer ``estimated_completion_time``, ``reward`` (cents) and
  ``total_available_places``, and ``completion_codes`` with code, one of Prolific's documented code types and
  actions, each code once; the study is UNPUBLISHED until ``POST /studies/{id}/transition/``
  ``{"action": "PUBLISH"}`` (allowed once);
* ``GET /studies/`` and ``GET /submissions/?study=`` page their results (``_links.next.href``);
* a submission transition is allowed from AWAITING REVIEW only; REJECT needs a message of at least 100
  characters and a known ``rejection_category`` (400 otherwise) and cannot be undone;
* ``POST /submissions/bonus-payments/`` checks that every id took part in the study and quotes amount, fees
  and total in cents; ``POST /bulk-bonus-payments/{id}/pay/`` pays on every call (not idempotent): ``payments``
  counts the calls per bulk id.
"""

import json
import re
import secrets
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v1/"
FEE_RATE = Decimal("0.3333")  # Prolific's service fee on bonuses (the documented example: 283.34 on 850)
PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")
# Prolific's rejection categories, as its documentation lists them (stated here again on purpose: the fake
# checks the client, it does not share its list)
CATEGORIES = set(
    "TOO_QUICKLY TOO_SLOWLY FAILED_INSTRUCTIONS INCOMP_LONGITUDINAL FAILED_CHECK LOW_EFFORT MALINGERING NO_CODE "
    "BAD_CODE NO_DATA UNSUPP_DEVICE OTHER".split()
)
# Prolific's completion code types (``code_type`` in the API reference's "Create a draft study")
CODE_TYPES = set(
    "COMPLETED FAILED_ATTENTION_CHECK FOLLOW_UP_STUDY GIVE_BONUS INCOMPATIBLE_DEVICE NO_CONSENT OTHER "
    "FIXED_SCREENOUT".split()
)


def fake_prolific(token: str) -> "FakeProlific":
    """A fake on the first free port of 8700-8799 (several test processes may run one each)."""
    for port in range(8700, 8800):
        try:
            return FakeProlific(port, token)
        except OSError:
            continue
    raise RuntimeError("no free port in 8700-8799 for the fake Prolific server")


def _id() -> str:
    return secrets.token_hex(12)  # Prolific's ids: 24 hex digits


class FakeProlific:
    def __init__(self, port: int, token: str, page_size: int = 3) -> None:
        self.token, self.page_size = token, page_size
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}
        self.bulks: dict[str, dict] = {}
        self.payments: dict[str, int] = {}
        self.calls: list[tuple[str, str, dict]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _answer(self, status: int, body) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                fake.calls.append((method, parts.path, dict(self.headers)))
                if self.headers.get("Authorization") != f"Token {fake.token}":
                    self._answer(401, {"error": {"detail": "Invalid token."}})
                    return
                if not parts.path.startswith(PREFIX):
                    self._answer(404, {"error": "not found"})
                    return
                with fake.lock:
                    status, body = fake.route(
                        method, parts.path[len(PREFIX) :], parse_qs(parts.query), json.loads(raw) if raw else None
                    )
                self._answer(status, body)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{port}{PREFIX}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeProlific":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # what Prolific's participants do
    def add_submission(self, study_id: str, participant_id: str, status: str = "ACTIVE") -> str:
        submission_id = _id()
        self.submissions[submission_id] = {
            "id": submission_id,
            "study_id": study_id,
            "participant_id": participant_id,
            "status": status,
        }
        return submission_id

    def route(self, method: str, path: str, query: dict, body) -> tuple[int, object]:
        if method == "POST" and path == "studies/":
            return self.create_study(body or {})
        if method == "GET" and path == "studies/":
            short = [{f: s.get(f) for f in ("id", "name", "internal_name", "status")} for s in self.studies.values()]
            return 200, self.page(short, "studies/?", query)
        if m := re.fullmatch(r"studies/(\w+)/", path):
            study = self.studies.get(m[1])
            return (200, study) if study else (404, {"error": "no such study"})
        if method == "POST" and (m := re.fullmatch(r"studies/(\w+)/transition/", path)):
            study = self.studies.get(m[1])
            if study is None:
                return 404, {"error": "no such study"}
            if (body or {}).get("action") != "PUBLISH" or study["status"] != "UNPUBLISHED":
                return 400, {"error": f"cannot {body} a study that is {study['status']}"}
            study["status"] = "ACTIVE"
            return 200, study
        if method == "GET" and path == "submissions/":
            return self.list_submissions(query)
        if method == "POST" and path == "submissions/bonus-payments/":
            return self.set_up_bonus(body or {})
        if method == "POST" and (m := re.fullmatch(r"bulk-bonus-payments/(\w+)/pay/", path)):
            if m[1] not in self.bulks:
                return 404, {"error": "no such bulk bonus payment"}
            self.payments[m[1]] = self.payments.get(m[1], 0) + 1
            return 200, f"Bulk bonus payment with ID {m[1]} is being processed asynchronously."
        if m := re.fullmatch(r"submissions/(\w+)/(transition/|request-return/)?", path):
            submission = self.submissions.get(m[1])
            if submission is None:
                return 404, {"error": "no such submission"}
            if m[2] == "transition/" and method == "POST":
                return self.transition(submission, body or {})
            if m[2] == "request-return/" and method == "POST":
                submission["status"] = "RETURNED"
                return 200, submission
            return 200, submission
        return 404, {"error": f"no route {method} {path}"}

    def create_study(self, body: dict) -> tuple[int, object]:
        problems = [f for f in ("name", "description", "external_study_url", "completion_codes") if not body.get(f)]
        problems += [
            f
            for f in ("estimated_completion_time", "reward", "total_available_places")
            if not isinstance(body.get(f), int) or body[f] < 1
        ]
        url = body.get("external_study_url", "")
        problems += [f"external_study_url lacks {p}" for p in PLACEHOLDERS if p not in url]
        codes = body.get("completion_codes", [])
        for code in codes:
            if not (code.get("code") and code.get("code_type") and code.get("actions")):
                problems.append(f"completion code {code} needs code, code_type and actions")
            elif code["code_type"] not in CODE_TYPES:
                problems.append(f"completion code {code['code']}: unknown code_type {code['code_type']!r}")
        if len({code.get("code") for code in codes}) < len(codes):
            problems.append("each completion code must be unique within a study")
        if problems:
            return 400, {"error": {"detail": problems}}
        study = {**body, "id": _id(), "status": "UNPUBLISHED"}
        self.studies[study["id"]] = study
        return 201, study

    def list_submissions(self, query: dict) -> tuple[int, object]:
        study_id = query.get("study", [""])[0]
        if study_id not in self.studies:
            return 400, {"error": "study is required"}
        rows = [s for s in self.submissions.values() if s["study_id"] == study_id]
        return 200, self.page(rows, f"submissions/?study={study_id}&", query)

    def page(self, rows: list[dict], path: str, query: dict) -> dict:
        """One page of a list (``?page=``, from 1) with the link to the next one, as Prolific pages lists."""
        page = int(query.get("page", ["1"])[0])
        chunk = rows[(page - 1) * self.page_size : page * self.page_size]
        following = f"{self.url}{path}page={page + 1}" if page * self.page_size < len(rows) else None
        return {"results": chunk, "_links": {"next": {"href": following}}, "meta": {"count": len(rows)}}

    def transition(self, submission: dict, body: dict) -> tuple[int, object]:
        action = body.get("action")
        if submission["status"] != "AWAITING REVIEW":
            return 400, {"error": f"a submission that is {submission['status']} cannot be {action}D"}
        if action == "APPROVE":
            submission["status"] = "APPROVED"
        elif action == "REJECT":
            if len(body.get("message", "")) < 100 or body.get("rejection_category") not in CATEGORIES:
                return 400, {"error": "a rejection needs a message of 100 characters and a rejection_category"}
            submission["status"] = "REJECTED"
        else:
            return 400, {"error": f"unknown action {action}"}
        return 200, submission

    def set_up_bonus(self, body: dict) -> tuple[int, object]:
        study_id = body.get("study_id", "")
        took_part = {s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id}
        amount, unknown = Decimal(0), []
        for line in body.get("csv_bonuses", "").strip().splitlines():
            participant, value = line.split(",")
            if participant not in took_part:
                unknown.append(participant)
            amount += Decimal(value)
        if study_id not in self.studies or unknown or amount <= 0:
            return 400, {"error": {"detail": f"ids that did not take part in the study: {unknown}"}}
        cents = amount * 100
        fees = (cents * FEE_RATE).quantize(Decimal("0.01"))
        bulk = {
            "id": _id(),
            "study": study_id,
            "amount": float(cents),
            "fees": float(fees),
            "vat": 0.0,
            "total_amount": float(cents + fees),
        }
        self.bulks[bulk["id"]] = bulk
        return 201, bulk
