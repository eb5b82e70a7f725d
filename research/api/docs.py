"""``/api/docs/``: the API's browsable documentation (Swagger UI), for logged-in researchers.

Swagger UI's files come from drf-spectacular-sidecar (static files of this server, no CDN); its
start-up script is a file of its own (``/api/docs/?script``, drf-spectacular's
``SpectacularSwaggerSplitView``), so the page runs under ``script-src 'self'`` with no inline script.
"""

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularSwaggerSplitView

from research.api.permissions import IsResearcher


class ApiDocs(SpectacularSwaggerSplitView):
    url_name = "api-schema"
    permission_classes = []  # checked in get(): a person without a session is sent to the login page

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        if not IsResearcher().has_permission(request, self):
            return redirect_to_login(request.get_full_path())
        return super().get(request, *args, **kwargs)
