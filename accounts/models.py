from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class ResearcherSession(AbstractBaseSession):
    """A server-side session (researcher pages, admin, API, login) that can be deleted.

    ``user`` is filled from the session data when a session is saved, so that all of one person's
    sessions can be ended at once (admin action, ``logout_everywhere``). Participants' sessions are
    signed cookies and never stored here.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(AbstractBaseSession.Meta):
        db_table = "accounts_researcher_session"

    @classmethod
    def get_session_store_class(cls):
        from accounts.session_store import SessionStore

        return SessionStore
