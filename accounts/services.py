"""Writes on researchers' accounts."""

from django.db import transaction

from accounts.models import ResearcherSession


@transaction.atomic
def user_sessions_end(*, user) -> int:
    """Log ``user`` out everywhere: delete every stored session of theirs. Returns how many."""
    deleted, _ = ResearcherSession.objects.filter(user=user).delete()
    return deleted
