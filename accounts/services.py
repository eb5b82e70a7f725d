"""Writes on researchers' accounts."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken, ResearcherSession

API_TOKEN_PREFIX = "hcf_"


class TokenLimitReached(ValueError):
    """The user already holds ``API_TOKENS_PER_USER`` live tokens."""


@transaction.atomic
def user_sessions_end(*, user) -> tuple[int, int]:
    """Log ``user`` out everywhere: delete every stored session and revoke every API token of
    theirs. Returns how many sessions and how many tokens."""
    deleted, _ = ResearcherSession.objects.filter(user=user).delete()
    return deleted, api_token_revoke(user=user)


def api_token_hash(key: str) -> str:
    """The stored form of a token key: its SHA-256, hexadecimal."""
    return hashlib.sha256(key.encode()).hexdigest()


@transaction.atomic
def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new API token for ``user``, expiring after ``API_TOKEN_MAX_AGE_DAYS``; returns it and its
    key, which is shown once and never stored. Deletes the user's expired tokens; raises
    :class:`TokenLimitReached` when they already hold ``API_TOKENS_PER_USER``."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one creation per user at a time
    now = timezone.now()
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    limit = settings.API_TOKENS_PER_USER
    if limit > 0 and ApiToken.objects.filter(user=user).count() >= limit:
        raise TokenLimitReached(
            f"{user.get_username()} already has {limit} API token{'s' if limit != 1 else ''}, the most allowed "
            "(API_TOKENS_PER_USER); revoke one first."
        )
    days = settings.API_TOKEN_MAX_AGE_DAYS
    key = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or "API token",
        prefix=key[:12],
        key_hash=api_token_hash(key),
        expires_at=now + timedelta(days=days) if days > 0 else None,
    )
    return token, key


def api_token_revoke(*, user, token_id: int | None = None) -> int:
    """Revoke one of ``user``'s tokens (``token_id``) or, without it, all of them. Returns how many."""
    tokens = ApiToken.objects.filter(user=user)
    if token_id is not None:
        tokens = tokens.filter(pk=token_id)
    deleted, _ = tokens.delete()
    return deleted
