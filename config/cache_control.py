"""``Cache-Control: no-store`` on everything personal: participants' pages, researchers' pages and
exports, the API, login and admin. A response that sets its own caching keeps it; static files
(WhiteNoise, long-lived and public) are untouched."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class NoStoreMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.prefixes = tuple(settings.NO_STORE_PATH_PREFIXES)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path_info.startswith(self.prefixes) and not response.has_header("Cache-Control"):
            response["Cache-Control"] = "no-store"
            response["Pragma"] = "no-cache"
        return response
