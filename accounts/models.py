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

    class Meta(AbstractBaseSession.Meta):  # type: ignore[name-defined]  # django-stubs does not declare Meta
        db_table = "accounts_researcher_session"

    @classmethod
    def get_session_store_class(cls):
        from accounts.session_store import SessionStore

        return SessionStore


class ApiToken(models.Model):
    """A researcher's API token for scripts and notebooks (``Authorization: Token <key>``).

    Only the SHA-256 of the key is stored: the key (``hcf_`` + 43 random URL-safe characters, 256
    bits) is shown once when the token is created and cannot be read back. ``prefix`` (the first 12
    characters) names the token in lists. A fast hash suffices because the key is random, not a
    password. Deleting the row revokes the token; so do a password change and "log out everywhere".
    ``expires_at`` (``API_TOKEN_MAX_AGE_DAYS`` after creation; empty: never) ends it by itself.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'laptop notebook'.")
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"
