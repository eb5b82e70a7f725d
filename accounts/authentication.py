"""HTTP basic auth for the API that answers a locked-out account clearly (429 JSON), not with a
generic "invalid password" or a server error."""

from drf_spectacular.authentication import BasicScheme
from rest_framework import exceptions, status
from rest_framework.authentication import BasicAuthentication

from accounts.lockout import cooloff_seconds, lockout_message


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self):
        super().__init__(lockout_message())
        seconds = cooloff_seconds()
        self.wait = seconds


class ThrottledBasicAuthentication(BasicAuthentication):
    def authenticate_credentials(self, userid, password, request=None):
        try:
            return super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            # django-axes marks the request it was given (DRF's Request) when it refuses a locked-out login.
            if getattr(request, "axes_locked_out", False):
                raise LockedOut() from None
            raise


class ThrottledBasicScheme(BasicScheme):
    """The OpenAPI schema describes it as plain HTTP basic auth."""

    target_class = "accounts.authentication.ThrottledBasicAuthentication"
