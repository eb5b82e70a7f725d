"""Per-address limits on the participant entry (new arrivals, failed resume codes).

A fixed-window counter in Django's cache: one ``add`` and one ``incr`` per counted request, only
on the start link, never on study pages. How far the count is shared depends on the cache
(``CACHE_URL``, config/cache_url.py): the default per-process memory counts per gunicorn worker,
so with W workers a limit of N lets up to N x W through; a file, database or Redis cache counts
once for all workers. A cache that fails lets the request through (logged): a limit must never
stop a real launch.

An IPv6 client is counted by its /64 network (one home, office or phone connection usually holds a
whole /64, so its addresses are as cheap as one): :func:`client_network`, which django-axes uses too.
"""

import ipaddress
import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

log = logging.getLogger(__name__)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or the last entry of PARTICIPANT_ADDRESS_HEADER (the
    one the trusted reverse proxy added) when that is configured."""
    header = settings.PARTICIPANT_ADDRESS_HEADER
    if header:
        value = request.headers.get(header, "")
        last = value.split(",")[-1].strip()
        if last:
            return last[:64]
    return request.META.get("REMOTE_ADDR", "")[:64]


def address_network(address: str) -> str:
    """What the per-address limits count ``address`` as: an IPv4 address itself (also written
    IPv4-mapped, ``::ffff:a.b.c.d``), an IPv6 address as its /64 network's first address
    (``2001:db8:1:2::``), anything unparsable as given."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False).network_address)
    return str(ip)


def client_network(request: HttpRequest) -> str:
    """The client as the per-address limits and django-axes (``AXES_CLIENT_IP_CALLABLE``) count
    it: :func:`address_network` of :func:`client_address`."""
    return address_network(client_address(request))


def _key(scope: str, address: str, window: int) -> str:
    return f"limit:{scope}:{address.replace(' ', '_')}:{int(time.time() // window)}"


def exceeded(scope: str, address: str, limit: int) -> bool:
    """Whether ``address`` has used up its ``limit`` in this window (0: no limit); reads only."""
    if limit <= 0:
        return False
    try:
        return (cache.get(_key(scope, address, settings.PARTICIPANT_LIMIT_WINDOW_SECONDS)) or 0) >= limit
    except Exception:  # noqa: BLE001 - a broken cache must not stop participants
        log.warning("participant limit: cache unavailable", exc_info=True)
        return False


def count(scope: str, address: str, limit: int) -> bool:
    """Count one more request of ``address``; False when that goes over ``limit`` (0: no limit)."""
    if limit <= 0:
        return True
    window = settings.PARTICIPANT_LIMIT_WINDOW_SECONDS
    key = _key(scope, address, window)
    try:
        cache.add(key, 0, timeout=window + 1)
        return cache.incr(key) <= limit
    except ValueError:  # expired between add and incr, or a cache that stores nothing
        return True
    except Exception:  # noqa: BLE001
        log.warning("participant limit: cache unavailable", exc_info=True)
        return True
