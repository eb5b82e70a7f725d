"""One WARNING log line per failed login (browser login, admin login or HTTP basic auth on the API),
with the username tried and the client address, never the password."""

import logging

from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

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
