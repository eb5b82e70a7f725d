"""The researchers' session engine (``SESSION_ENGINE = "accounts.session_store"``): Django's
database sessions in :class:`accounts.models.ResearcherSession`, with the logged-in user's id in a
column of its own."""

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError


class SessionStore(DatabaseSessionStore):
    @classmethod
    def get_model_class(cls):
        from accounts.models import ResearcherSession

        return ResearcherSession

    def create_model_instance(self, data):
        instance = super().create_model_instance(data)
        try:
            instance.user_id = get_user_model()._meta.pk.to_python(data.get(SESSION_KEY))
        except (TypeError, ValueError, ValidationError):
            instance.user_id = None
        return instance
