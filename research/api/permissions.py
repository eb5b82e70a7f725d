from rest_framework.permissions import BasePermission


class IsResearcher(BasePermission):
    """Any logged-in, active account is a researcher; which studies they see is filtered per view."""

    message = "Log in as a researcher."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_active)
