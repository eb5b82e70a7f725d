"""What a locked-out login attempt sees (``AXES_LOCKOUT_CALLABLE``): a page on the browser and
admin logins, 429 with ``Retry-After`` when a cool-off applies. (On the API, basic auth raises
``accounts.authentication.LockedOut`` instead: JSON in the API's error format.)"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

LOCKED_OUT_MESSAGE = "Too many failed logins for this account from your address."
TOKENS_LOCKED_OUT_MESSAGE = "Too many invalid API tokens from your address."
TOKEN_PREFIX_LOCKED_OUT_MESSAGE = "Too many invalid API tokens beginning like this one from your address."


def cooloff_seconds() -> int | None:
    cooloff = settings.AXES_COOLOFF_TIME  # a timedelta, or None (until an admin unlocks)
    return int(cooloff.total_seconds()) if cooloff else None


def lockout_message(reason: str = LOCKED_OUT_MESSAGE) -> str:
    seconds = cooloff_seconds()
    if seconds is None:
        return f"{reason} Ask an administrator to unlock it."
    minutes = max(1, round(seconds / 60))
    return f"{reason} Try again in {minutes} minute{'s' if minutes != 1 else ''}."


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    status = settings.AXES_HTTP_RESPONSE_CODE
    response = render(request, "accounts/locked_out.html", {"message": lockout_message()}, status=status)
    seconds = cooloff_seconds()
    if seconds is not None:
        response["Retry-After"] = str(seconds)
    return response
