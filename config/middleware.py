"""A database outage becomes a clear "please retry" response, never a half-written page: every
write is one transaction, so nothing of the failed request was stored."""

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from surveys.api.errors import error_response

RETRY_AFTER_SECONDS = "5"


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        if request.path.startswith("/api/"):
            response = error_response(
                503, "service_unavailable", "The database is briefly unavailable. Retry in a few seconds."
            )
        else:
            response = HttpResponse(render_to_string("retry.html", request=request), status=503)
        response["Retry-After"] = RETRY_AFTER_SECONDS
        return response
