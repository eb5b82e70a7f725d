from django.contrib import admin
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.shortcuts import redirect
from django.urls import include, path

from accounts.views import api_tokens
from research.prolific_hooks import prolific_hook


def health(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers and `make serve` checks."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any database failure means "not healthy"
        return JsonResponse({"status": "error", "database": type(exc).__name__}, status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})


urlpatterns = [
    path("", lambda request: redirect("researcher:studies")),
    path("healthz", health, name="health"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("researcher/api-tokens/", api_tokens, name="api-tokens"),
    path("researcher/", include("config.researcher_urls")),
    path("api/", include("config.api_urls")),
    path("s/", include("participation.urls")),
    path("hooks/prolific/", prolific_hook, name="prolific-hook"),
]

# Errors outside Django REST framework: JSON in the API's one format under /api/, pages elsewhere.
handler400 = "research.api.errors.bad_request"
handler403 = "research.api.errors.permission_denied"
handler404 = "research.api.errors.page_not_found"
handler500 = "research.api.errors.server_error"
