"""OpenAPI schema additions (drf-spectacular ``POSTPROCESSING_HOOKS``): the one error format as a
component, and the errors every operation can answer with."""

from research.api.errors import error_payload

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every API error (research/api/errors.py).",
    "properties": {
        "status": {"type": "integer", "description": "The HTTP status, repeated."},
        "code": {"type": "string", "description": "Machine-readable, e.g. invalid, not_authenticated, not_found."},
        "detail": {"type": "string", "description": "One readable sentence."},
        "fields": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": "Validation errors only: each input's messages.",
        },
    },
    "required": ["status", "code", "detail"],
    "example": error_payload(
        400,
        "invalid",
        "k: Ensure this value is less than or equal to 1000.",
        {"k": ["Ensure this value is less than or equal to 1000."]},
    ),
}

_ERRORS = {
    "400": "Invalid input (`fields` names each input).",
    "401": "Missing or bad credentials; `WWW-Authenticate` offers Token and Basic.",
    "404": "No such study, run or job among yours.",
    "429": "Too many failed logins or invalid tokens from your address (`Retry-After`).",
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """Reference the ``Error`` schema from the 400 (bodies and query parameters), 401, 404 (URLs
    with a parameter) and 429 responses of every operation."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            codes = ["401", "429"]
            if method == "post" or operation.get("parameters"):
                codes.append("400")
            if "{" in path:
                codes.append("404")
            for code in codes:
                operation["responses"].setdefault(code, {"description": _ERRORS[code], "content": content})
    return result
