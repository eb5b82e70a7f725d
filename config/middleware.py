"""A database outage becomes a clear "please retry" response, never a half-written page: every
write is one transaction, so nothing of the failed request was stored.

A participant's form (a POST under ``/s/``) is not lost with it: the retry page carries the posted
fields as hidden inputs (autoescaped; the CSRF token is a fresh one, never the posted one) and a
"Try again" button that sends them again, and does not reload itself (a reload would be a GET and
drop them); like every participant page it is sent with ``Cache-Control: no-store``
(config/cache_control.py).

A schema error (SQLite reports "no such table" / "no such column" as an OperationalError, PostgreSQL
as a ProgrammingError) is not an outage: retrying cannot help, so it is left to Django's error
handling (a logged 500 that names the real cause, e.g. migrations not applied) instead of a
"briefly unavailable" page that would send everyone into a retry loop."""

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from config.sessions import is_participant_path
from research.api.errors import error_response

RETRY_AFTER_SECONDS = "5"
SCHEMA_ERRORS = ("no such table", "no such column", "has no column named")


def is_outage(exception: Exception) -> bool:
    """A connection-level database failure that a retry may cure (see the module docstring)."""
    if not isinstance(exception, OperationalError | InterfaceError):
        return False
    return not str(exception).lower().startswith(SCHEMA_ERRORS)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_outage(exception):
            return None
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = error_response(
                503, "service_unavailable", "The database is briefly unavailable. Retry in a few seconds."
            )
        else:
            context: dict[str, object] = {}
            if request.method == "POST" and is_participant_path(request.path_info):
                context["action"] = request.get_full_path()
                context["resend"] = [
                    (name, value)
                    for name, values in request.POST.lists()
                    if name != "csrfmiddlewaretoken"
                    for value in values
                ]
            response = HttpResponse(render_to_string("retry.html", context, request=request), status=503)
        response["Retry-After"] = RETRY_AFTER_SECONDS
        return response
