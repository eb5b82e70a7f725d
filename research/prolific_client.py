"""Prolific's researcher API as documented (https://docs.prolific.com/api-reference): one small client over
``requests``. Only commands and background tasks call it, never a participant's request. The token
(``PROLIFIC_API_TOKEN``) goes into the ``Authorization: Token ...`` header and nowhere else: errors name the
method, the path, the status and Prolific's answer, never the headers."""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests
from django.conf import settings

TIMEOUT_SECONDS = 30
PUBLISH, APPROVE, REJECT = "PUBLISH", "APPROVE", "REJECT"
# Prolific's rejection categories and the shortest message a rejection takes
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
MIN_REJECTION_MESSAGE = 100


class ProlificError(Exception):
    """Prolific refused a request or could not be reached. ``status`` is None when no answer came back (the
    request may or may not have taken effect)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProlificNotConfigured(ProlificError):
    """``PROLIFIC_API_TOKEN`` is unset."""


@dataclass(frozen=True)
class BulkBonus:
    """Prolific's answer to setting up a bulk bonus; amounts in the study's currency (Prolific answers in cents)."""

    bulk_id: str
    amount: float
    fees: float
    total: float


class ProlificClient:
    """Calls to Prolific's API under ``PROLIFIC_API_URL`` with the researcher's token."""

    def __init__(self, *, token: str | None = None, base_url: str | None = None) -> None:
        token = settings.PROLIFIC_API_TOKEN if token is None else token
        if not token:
            raise ProlificNotConfigured("set PROLIFIC_API_TOKEN to your Prolific API token")
        self._base = (base_url or settings.PROLIFIC_API_URL).rstrip("/") + "/"
        self._session = requests.Session()
        self._session.headers["Authorization"] = f"Token {token}"

    def __repr__(self) -> str:  # the token stays out of tracebacks and logs
        return f"ProlificClient({self._base})"

    def _call(self, method: str, path: str, *, json: Any = None, params: dict | None = None) -> Any:
        url = path if path.startswith("http") else urljoin(self._base, path.lstrip("/"))
        try:
            response = self._session.request(method, url, json=json, params=params, timeout=TIMEOUT_SECONDS)
        except requests.RequestException as exc:
            raise ProlificError(f"Prolific did not answer {method} {path}: {type(exc).__name__}") from None
        if response.status_code >= 400:
            raise ProlificError(
                f"Prolific refused {method} {path} ({response.status_code}): {response.text[:500]}",
                response.status_code,
            )
        return response.json() if response.content else None

    def create_study(self, body: dict) -> dict:
        """``POST /studies/``: a draft (status UNPUBLISHED)."""
        return self._call("POST", "studies/", json=body)

    def study(self, study_id: str) -> dict:
        return self._call("GET", f"studies/{study_id}/")

    def publish_study(self, study_id: str) -> dict:
        return self._call("POST", f"studies/{study_id}/transition/", json={"action": PUBLISH})

    def studies(self) -> Iterator[dict]:
        """Every study of the account, ``GET /studies/`` (id, name, internal_name, status)."""
        return self._pages("studies/", {})

    def submissions(self, study_id: str) -> Iterator[dict]:
        """Every submission of the study, ``GET /submissions/?study=``."""
        return self._pages("submissions/", {"study": study_id})

    def _pages(self, path: str, params: dict) -> Iterator[dict]:
        """The ``results`` of a list, page after page, following ``_links.next``."""
        page = self._call("GET", path, params=params)
        while True:
            yield from page.get("results", [])
            following = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not following:
                return
            page = self._call("GET", following)

    def submission(self, submission_id: str) -> dict:
        return self._call("GET", f"submissions/{submission_id}/")

    def approve(self, submission_id: str) -> dict:
        return self._call("POST", f"submissions/{submission_id}/transition/", json={"action": APPROVE})

    def reject(self, submission_id: str, *, message: str, category: str) -> dict:
        """Reject for good; refused here, before any call, without Prolific's message and category."""
        check_rejection(message, category)
        body = {"action": REJECT, "message": message, "rejection_category": category}
        return self._call("POST", f"submissions/{submission_id}/transition/", json=body)

    def set_up_bonus(self, study_id: str, csv_bonuses: str) -> BulkBonus:
        """``POST /submissions/bonus-payments/``: Prolific checks the ids and quotes the total; nothing is paid."""
        answer = self._call(
            "POST", "submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv_bonuses}
        )
        fees = float(answer.get("fees", 0)) + float(answer.get("vat", 0))
        return BulkBonus(answer["id"], float(answer["amount"]) / 100, fees / 100, float(answer["total_amount"]) / 100)

    def pay_bonus(self, bulk_id: str) -> None:
        """``POST /bulk-bonus-payments/{id}/pay/``: pays. Not idempotent: a second call pays twice."""
        self._call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", json={})


def check_rejection(message: str, category: str) -> None:
    """Prolific's conditions on a rejection: a message of at least 100 characters and a known category."""
    if len(message.strip()) < MIN_REJECTION_MESSAGE:
        raise ValueError(
            f"a rejection needs a message of at least {MIN_REJECTION_MESSAGE} characters for the participant "
            f"(this one has {len(message.strip())}); a rejection cannot be undone"
        )
    if category not in REJECTION_CATEGORIES:
        raise ValueError(f"rejection_category must be one of {', '.join(REJECTION_CATEGORIES)}")
