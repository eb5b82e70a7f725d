"""Writes on researchers' accounts."""

import hashlib
import secrets

from django.db import transaction

from accounts.models import ApiToken, ResearcherSession

API_TOKEN_PREFIX = "hcf_"


@transaction.atomic
def user_sessions_end(*, user) -> int:
    """Log ``user`` out everywhere: delete every stored session of theirs. Returns how many."""
    deleted, _ = ResearcherSession.objects.filter(user=user).delete()
    return deleted


def api_token_hash(key: str) -> str:
    """The stored form of a token key: its SHA-256, hexadecimal."""
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new API token for ``user``; returns it and its key, which is shown once and never stored."""
    key = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name.strip() or "API token", prefix=key[:12], key_hash=api_token_hash(key)
    )
    return token, key


def api_token_revoke(*, user, token_id: int | None = None) -> int:
    """Revoke one of ``user``'s tokens (``token_id``) or, without it, all of them. Returns how many."""
    tokens = ApiToken.objects.filter(user=user)
    if token_id is not None:
        tokens = tokens.filter(pk=token_id)
    deleted, _ = tokens.delete()
    return deleted
