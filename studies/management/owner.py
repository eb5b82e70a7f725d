"""The ``--owner`` option of the commands that load studies."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def owner_named(username: str | None):
    """The researcher with this username, None without one; CommandError when there is no such user."""
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user named {username!r}")
    return user
