"""The network a participant arrived from, kept only as a keyed hash: the quality rule ``burst``
(``research.quality``) compares arrivals from one range; no address is stored or shown.

A range is an IPv4 address's /24 or an IPv6 address's /48 (one organisation's or provider's block, wider
than the /64 the per-address limits count, ``participation.throttle``); it is hashed with HMAC-SHA256
under ``SECRET_KEY`` and cut to 16 hex digits, so equal ranges give equal values within one deployment
and the range cannot be read back without the key."""

import hashlib
import hmac
import ipaddress

from django.conf import settings

IPV4_PREFIX, IPV6_PREFIX = 24, 48


def address_range(address: str) -> str:
    """The keyed hash of ``address``'s range ('' when it is not an IP address)."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return ""
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = IPV4_PREFIX if ip.version == 4 else IPV6_PREFIX
    network = ipaddress.ip_network((ip, prefix), strict=False)
    digest = hmac.new(settings.SECRET_KEY.encode(), f"range:{network}".encode(), hashlib.sha256)
    return digest.hexdigest()[:16]
