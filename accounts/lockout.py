"""What a locked-out login attempt sees (``AXES_LOCKOUT_CALLABLE``): a page on the browser and
admin logins, JSON on the API. Both answer 429 with ``Retry-After`` when a cool-off applies."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from surveys.api.errors import error_response

LOCKED_OUT_MESSAGE = "Too many failed logins for this account from your address."


def cooloff_seconds() -> int | None:
    cooloff = settings.AXES_COOLOFF_TIME
    if cooloff is None:
        return None
    if hasattr(cooloff, "total_seconds"):
        return int(cooloff.total_seconds())
    return int(float(cooloff) * 3600)  # axes reads a number as hours


def lockout_message() -> str:
    seconds = cooloff_seconds()
    if seconds is None:
        return f"{LOCKED_OUT_MESSAGE} Ask an administrator to unlock it."
    minutes = max(1, round(seconds / 60))
    return f"{LOCKED_OUT_MESSAGE} Try again in {minutes} minute{'s' if minutes != 1 else ''}."


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.path.startswith("/api/"):
        response = error_response(status, "locked_out", lockout_message())  # the API's one error format
    else:
        response = render(request, "accounts/locked_out.html", {"message": lockout_message()}, status=status)
    seconds = cooloff_seconds()
    if seconds is not None:
        response["Retry-After"] = str(seconds)
    return response
