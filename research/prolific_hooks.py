"""``POST /hooks/prolific/``: Prolific's webhook deliveries (``submission.status.change``,
``study.status.change``).

A delivery counts only when ``X-Prolific-Request-Signature`` is base64(HMAC-SHA256(PROLIFIC_WEBHOOK_SECRET,
X-Prolific-Request-Timestamp + raw body)) and the timestamp is within 5 minutes of now (Prolific, "Verifying":
https://docs.prolific.com/api-reference/webhooks/verifying); otherwise 401 and nothing changes. A delivery
whose ``X-Event-ID`` was processed already (Prolific retries up to 11 times over 24 hours) answers 200 and
changes nothing. A submission event is thin: the submission is fetched again by the job worker
(``research.prolific_tasks.prolific_event_task``), never in this request.
"""

import base64
import hashlib
import hmac
import json
import time

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from research.prolific_services import prolific_record_event, prolific_study_status
from research.prolific_tasks import prolific_event_task

MAX_AGE_SECONDS = 300


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """base64(HMAC-SHA256(secret, timestamp + body)), Prolific's ``X-Prolific-Request-Signature``."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verified(secret: str, timestamp: str, body: bytes, given: str, *, now: float | None = None) -> bool:
    """The signature matches and the timestamp (UNIX seconds) is within ``MAX_AGE_SECONDS`` of ``now``."""
    if not secret or not timestamp or not given:
        return False
    try:
        age = abs((time.time() if now is None else now) - float(timestamp))
    except ValueError:
        return False
    return age <= MAX_AGE_SECONDS and hmac.compare_digest(signature(secret, timestamp, body), given)


@csrf_exempt
@require_POST
def prolific_hook(request: HttpRequest) -> HttpResponse:
    body = request.body
    timestamp = request.headers.get("X-Prolific-Request-Timestamp", "")
    given = request.headers.get("X-Prolific-Request-Signature", "")
    if not verified(settings.PROLIFIC_WEBHOOK_SECRET, timestamp, body, given):
        return JsonResponse({"detail": "bad or stale signature"}, status=401)
    try:
        event = json.loads(body)
        event_type, resource_id = str(event["event_type"]), str(event["resource_id"])
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"detail": "the body is not a Prolific event (event_type, resource_id)"}, status=400)
    workspace = event.get("workspace_id")
    if settings.PROLIFIC_WORKSPACE_ID and workspace and workspace != settings.PROLIFIC_WORKSPACE_ID:
        return JsonResponse({"detail": "another workspace's event: ignored"})
    event_id = request.headers.get("X-Event-ID") or signature("event", timestamp, body)
    with transaction.atomic():
        if not prolific_record_event(event_id=event_id, event_type=event_type, resource_id=resource_id):
            return JsonResponse({"detail": "already processed"})
        if event_type == "study.status.change" and event.get("status"):
            prolific_study_status(prolific_id=resource_id, status=str(event["status"]))
        elif event_type == "submission.status.change":
            transaction.on_commit(lambda: prolific_event_task.enqueue(resource_id))
    return JsonResponse({"detail": "received"})
