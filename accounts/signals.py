"""One WARNING log line per failed login (browser login, admin login or HTTP basic auth on the API),
with the username tried and the client address, never the password; a password change revokes the
user's API tokens."""

import logging

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.db.models.signals import pre_save
from django.dispatch import receiver

from accounts.services import api_token_revoke
from participation.throttle import client_address

logger = logging.getLogger("accounts.security")


@receiver(user_login_failed, dispatch_uid="accounts.log_failed_login")
def log_failed_login(sender, credentials, request=None, **kwargs) -> None:
    logger.warning(
        "failed login for username=%r from %s on %s%s",
        credentials.get("username", ""),
        client_address(request) if request is not None else "unknown address",
        getattr(request, "path", "?"),
        " (locked out)" if getattr(request, "axes_locked_out", False) else "",
    )


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.revoke_tokens_on_password_change")
def revoke_tokens_on_password_change(sender, instance, raw: bool = False, update_fields=None, **kwargs) -> None:
    """A changed password revokes the user's API tokens (whatever changed it: the password change or
    reset page, the admin, ``changepassword``, an unusable password). Django's re-hash of the same
    password on login does not: it saves only the password with no new raw password set
    (``_password`` None, Django's own marker of "not a password change")."""
    if raw or instance._state.adding or (update_fields is not None and "password" not in update_fields):
        return
    rehash = getattr(instance, "_password", None) is None and update_fields is not None
    if rehash and instance.has_usable_password():
        return
    old = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    if old is not None and old != instance.password:
        api_token_revoke(user=instance)
