"""One WARNING log line per failed login (browser login, admin login or HTTP basic auth on the API),
with the username tried and the client address, never the password."""

import logging

from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

logger = logging.getLogger("accounts.security")


@receiver(user_login_failed, dispatch_uid="accounts.log_failed_login")
def log_failed_login(sender, credentials, request=None, **kwargs) -> None:
    meta = getattr(request, "META", {}) if request is not None else {}
    logger.warning(
        "failed login for username=%r from %s on %s%s",
        credentials.get("username", ""),
        meta.get("REMOTE_ADDR", "unknown address"),
        getattr(request, "path", "?"),
        " (locked out)" if getattr(request, "axes_locked_out", False) else "",
    )
