"""One JSON format for every API error, inside and outside Django REST framework.

Every error under ``/api/`` is answered as::

    {"status": 400, "code": "invalid", "detail": "k: Ensure this value is less than or equal to 1000.",
     "fields": {"k": ["Ensure this value is less than or equal to 1000."]}}

``status`` repeats the HTTP status; ``code`` is DRF's machine-readable code (``invalid``,
``parse_error``, ``not_authenticated``, ``permission_denied``, ``not_found``,
``method_not_allowed``, ``unsupported_media_type``, ``throttled``, ``locked_out``, ``payload_too_large``,
``server_error``, ``service_unavailable``); ``detail`` is one readable sentence (kept at the top
level, where clients read it); ``fields`` appears only for validation errors of named inputs.
Headers such as ``Retry-After`` and ``WWW-Authenticate`` are kept.

:func:`api_exception_handler` is DRF's ``EXCEPTION_HANDLER``; :func:`bad_request`,
:func:`permission_denied`, :func:`page_not_found` and :func:`server_error` are the project's
``handler400/403/404/500`` (``config/urls.py``), answering JSON for ``/api/`` paths and Django's
usual pages elsewhere. ``research.api.parsers.BoundedJSONParser`` refuses deeply nested JSON.
"""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status


def error_payload(status_code: int, code: str, detail: str, fields: dict | None = None) -> dict:
    """The body of every API error response."""
    body = {"status": status_code, "code": code, "detail": detail}
    if fields:
        body["fields"] = fields
    return body


def error_response(status_code: int, code: str, detail: str, fields: dict | None = None) -> JsonResponse:
    return JsonResponse(error_payload(status_code, code, detail, fields), status=status_code)


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def _messages(value) -> list[str]:
    if isinstance(value, dict):
        return [m for v in value.values() for m in _messages(v)]
    if isinstance(value, list | tuple):
        return [m for v in value for m in _messages(v)]
    return [str(value)]


def _flatten_fields(detail: dict) -> dict:
    """Field name -> list of messages (nested serializers joined with dots, list positions in [])."""
    out: dict[str, list[str]] = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            for i, inner in enumerate(value):
                if inner:
                    walk(f"{prefix}[{i}]", inner)
        else:
            out.setdefault(prefix, []).extend(_messages(value))

    walk("", detail)
    return out


def _first_code(codes) -> str:
    if isinstance(codes, dict):
        codes = list(codes.values())
    if isinstance(codes, list | tuple):
        for item in codes:
            found = _first_code(item)
            if found:
                return found
        return ""
    return str(codes)


def _from_api_exception(exc: exceptions.APIException, status_code: int) -> dict:
    detail = exc.detail
    code = getattr(exc, "default_code", "error")
    if isinstance(exc, exceptions.ValidationError):
        code = "invalid"
    if isinstance(detail, dict):
        fields = _flatten_fields(detail)
        general = fields.pop("detail", []) + fields.pop("non_field_errors", [])
        parts = general + [f"{name}: {' '.join(msgs)}" for name, msgs in fields.items()]
        return error_payload(status_code, code, " ".join(parts) or str(exc.default_detail), fields or None)
    if isinstance(detail, list):
        return error_payload(status_code, code, " ".join(_messages(detail)) or str(exc.default_detail))
    specific = _first_code(exc.get_codes())
    if specific and not isinstance(exc, exceptions.ValidationError):
        code = specific
    return error_payload(status_code, code, str(detail))


def api_exception_handler(exc, context):
    """DRF's handler, with the body rewritten into the one format; oversized uploads become 413."""
    from rest_framework.views import exception_handler as drf_exception_handler  # imports our parser

    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge(str(exc) or PayloadTooLarge.default_detail)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # an unexpected error: handler500 answers in the same format
    body = _from_api_exception(exc, response.status_code)  # DRF answers APIExceptions only
    from research.api.renderers import TableFileRenderer

    if isinstance(getattr(context.get("request"), "accepted_renderer", None), TableFileRenderer):
        json_response = JsonResponse(body, status=response.status_code)  # an error is no Parquet file
        for header, value in response.items():
            json_response.setdefault(header, value)
        return json_response
    response.data = body
    return response


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception, template_name="400.html"):
    if not _is_api(request):
        return defaults.bad_request(request, exception, template_name)
    if isinstance(exception, RequestDataTooBig):
        message = str(exception) or "The request body is too large."
        return error_response(413, "payload_too_large", message)
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return error_response(400, "bad_request", str(exception))
    return error_response(400, "bad_request", "Bad request.")


def permission_denied(request, exception, template_name="403.html"):
    if not _is_api(request):
        return defaults.permission_denied(request, exception, template_name)
    return error_response(403, "permission_denied", str(exception) or "You do not have permission for this.")


def page_not_found(request, exception, template_name="404.html"):
    if not _is_api(request):
        return defaults.page_not_found(request, exception, template_name)
    return error_response(404, "not_found", f"No API endpoint at {request.path}; see /api/schema/.")


def server_error(request, template_name="500.html"):
    if not _is_api(request):
        return defaults.server_error(request, template_name)
    return error_response(500, "server_error", "Server error; it has been logged. Please try again or report it.")
