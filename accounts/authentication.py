"""API authentication besides the session: HTTP basic auth and researchers' API tokens, both
throttled by django-axes, a locked-out client answered clearly (429 JSON), not with a generic
"invalid credentials" or a server error.

Missing or bad credentials are a 401 whose ``WWW-Authenticate`` header offers both schemes
(DRF takes the header from the first authentication class, :class:`ApiTokenAuthentication`).
"""

from datetime import timedelta

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth.signals import user_login_failed
from django.utils import timezone
from drf_spectacular.authentication import BasicScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication, BasicAuthentication, get_authorization_header

from accounts.lockout import (
    TOKEN_PREFIX_LOCKED_OUT_MESSAGE,
    TOKENS_LOCKED_OUT_MESSAGE,
    cooloff_seconds,
    lockout_message,
)
from accounts.models import ApiToken
from accounts.services import api_token_hash

REALM = "api"
# The usernames django-axes counts wrong tokens under (per client address, or as
# LOGIN_LOCKOUT_PARAMETERS says): every wrong token, and wrong tokens of one prefix. Django's
# usernames cannot contain "<", so no account shares them.
TOKEN_LOGIN_NAME = "<api token>"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most once a minute per token


def token_login_name(key: str) -> str:
    """The username django-axes counts wrong keys beginning like ``key`` under: ``<api token hcf_...>``."""
    return f"<api token {key[:12]}>"


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self, message: str | None = None):
        super().__init__(message or lockout_message())
        self.wait = cooloff_seconds()


class ThrottledBasicAuthentication(BasicAuthentication):
    www_authenticate_realm = REALM

    def authenticate_credentials(self, userid, password, request=None):
        try:
            return super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            # django-axes marks the request it was given (DRF's Request) when it refuses a locked-out login.
            if getattr(request, "axes_locked_out", False):
                raise LockedOut() from None
            raise


class ApiTokenAuthentication(BaseAuthentication):
    """``Authorization: Token <key>`` with a key from :func:`accounts.services.api_token_create`:
    the request acts as the token's owner (same studies as their session).

    A wrong key counts as a failed login for django-axes twice over: under its prefix (its first 12
    characters) and under the address. Too many for one prefix lock that prefix, even its right key
    (someone is guessing the rest of a known key); too many from one address answer that address's
    wrong keys 429, but a valid key from there still works (its 256 random bits cannot be guessed,
    and a neighbour's broken script must not lock everyone behind one address out)."""

    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: use 'Authorization: Token <key>'.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Invalid token header: the key has invalid characters.") from None
        prefix_credentials = {"username": token_login_name(key)}
        if not AxesProxyHandler.is_allowed(request, prefix_credentials):
            raise LockedOut(lockout_message(TOKEN_PREFIX_LOCKED_OUT_MESSAGE))
        token = ApiToken.objects.select_related("user").filter(key_hash=api_token_hash(key)).first()
        if token is None or not token.user.is_active:
            address_credentials = {"username": TOKEN_LOGIN_NAME}
            if not AxesProxyHandler.is_allowed(request, address_credentials):
                raise LockedOut(lockout_message(TOKENS_LOCKED_OUT_MESSAGE))
            user_login_failed.send(sender=__name__, credentials=prefix_credentials, request=request)  # logged
            AxesProxyHandler.user_login_failed(sender=__name__, credentials=address_credentials, request=request)
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        now = timezone.now()
        if token.expires_at is not None and token.expires_at <= now:
            raise exceptions.AuthenticationFailed("This API token has expired; create a new one.")
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="{REALM}", Basic realm="{REALM}"'


class ThrottledBasicScheme(BasicScheme):
    """The OpenAPI schema describes it as plain HTTP basic auth."""

    target_class = "accounts.authentication.ThrottledBasicAuthentication"


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "An API token from /researcher/api-tokens/ or `manage.py api_token USER`, "
            'with the prefix "Token": `Authorization: Token hcf_...`',
        }
