"""Two kinds of session, chosen by path.

* Participants (``/s/...``): signed cookies (``participant_session``, path ``/s/``): no session
  query on the performance-critical page path; a participant's session holds only their id.
* Everyone else (researcher pages, admin, API, login): server-side sessions in the database
  (``sessionid``, ``accounts.session_store``), which logout, a password change and "log out
  everywhere" really end.

``PathSessionMiddleware`` replaces Django's ``SessionMiddleware`` (it subclasses it, so the admin's
checks still find a session middleware).
"""

import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieSessionStore
from django.contrib.sessions.exceptions import SessionInterrupted
from django.contrib.sessions.middleware import SessionMiddleware
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date


class ParticipantSessionStore(SignedCookieSessionStore):
    """Signed-cookie sessions with the participants' own lifetime."""

    def get_session_cookie_age(self) -> int:
        return settings.PARTICIPANT_SESSION_COOKIE_AGE


@dataclass(frozen=True)
class _Cookie:
    name: str
    path: str
    domain: str | None
    secure: bool
    httponly: bool
    samesite: str | None


def _researcher_cookie() -> _Cookie:
    return _Cookie(
        settings.SESSION_COOKIE_NAME,
        settings.SESSION_COOKIE_PATH,
        settings.SESSION_COOKIE_DOMAIN,
        settings.SESSION_COOKIE_SECURE,
        settings.SESSION_COOKIE_HTTPONLY,
        settings.SESSION_COOKIE_SAMESITE or None,  # False (no attribute) as None: Django omits both
    )


def _participant_cookie() -> _Cookie:
    return _Cookie(
        settings.PARTICIPANT_SESSION_COOKIE_NAME,
        settings.PARTICIPANT_PATH_PREFIX,
        settings.SESSION_COOKIE_DOMAIN,
        settings.SESSION_COOKIE_SECURE,
        True,
        "Lax",
    )


def is_participant_path(path: str) -> bool:
    return path.startswith(settings.PARTICIPANT_PATH_PREFIX)


class PathSessionMiddleware(SessionMiddleware):
    """``self.SessionStore`` (from SessionMiddleware) is the researchers' engine (SESSION_ENGINE)."""

    def process_request(self, request):
        if is_participant_path(request.path_info):
            cookie = _participant_cookie()
            request.session = ParticipantSessionStore(request.COOKIES.get(cookie.name))
        else:
            cookie = _researcher_cookie()
            request.session = self.SessionStore(request.COOKIES.get(cookie.name))
        request._session_cookie = cookie

    def process_response(self, request, response):
        """Django's ``SessionMiddleware.process_response`` with the request's own cookie settings."""
        try:
            accessed = request.session.accessed
            modified = request.session.modified
            empty = request.session.is_empty()
            cookie = request._session_cookie
        except AttributeError:
            return response
        if cookie.name in request.COOKIES and empty:
            response.delete_cookie(cookie.name, path=cookie.path, domain=cookie.domain, samesite=cookie.samesite)
            need_vary_cookie = True
        else:
            need_vary_cookie = accessed
            if (modified or settings.SESSION_SAVE_EVERY_REQUEST) and not empty:
                if request.session.get_expire_at_browser_close():
                    max_age = expires = None
                else:
                    max_age = request.session.get_expiry_age()
                    expires = http_date(time.time() + max_age)
                if response.status_code < 500:
                    try:
                        request.session.save()
                    except UpdateError:
                        raise SessionInterrupted(
                            "The request's session was deleted before the request completed. "
                            "The user may have logged out in a concurrent request, for example."
                        ) from None
                    response.set_cookie(
                        cookie.name,
                        request.session.session_key,
                        max_age=max_age,
                        expires=expires,
                        domain=cookie.domain,
                        path=cookie.path,
                        secure=cookie.secure or None,
                        httponly=cookie.httponly or None,
                        samesite=cookie.samesite,
                    )
                    need_vary_cookie = True
        if need_vary_cookie:
            patch_vary_headers(response, ("Cookie",))
        return response
