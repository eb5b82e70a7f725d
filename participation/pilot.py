"""The researcher's pilot link: ``/s/<slug>/?pilot=<token>``, where the token is an HMAC of the
slug with the server's SECRET_KEY (Django's ``Signer``), so only someone shown the link (the
study's researchers, on the dashboard) can make pilot participants; changing ``DJANGO_SECRET_KEY``
changes every pilot link."""

import secrets

from django.core.signing import Signer
from django.utils.crypto import constant_time_compare

_SIGNER = Signer(salt="participation.pilot-link")


def pilot_token(slug: str) -> str:
    return _SIGNER.signature(slug)


def is_pilot_token(slug: str, token: str) -> bool:
    return bool(token) and constant_time_compare(token, pilot_token(slug))


def new_pilot_id() -> str:
    """An id for a pilot participant whose link carries none."""
    return f"pilot-{secrets.token_hex(6)}"
