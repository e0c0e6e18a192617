"""The address a request came from, behind the reverse proxies the operator trusts.

Behind a proxy every request's ``REMOTE_ADDR`` is the proxy's own address, so a
failed-login lockout keyed on it locks a user out for everyone. ``X-Forwarded-For``
says more, but each proxy only appends the address that connected to it and a
client can write anything to its left: only what a trusted proxy appended can be
believed. So the header is read from the right, starting at ``REMOTE_ADDR``, one
hop at a time while the address in hand is a trusted proxy's; the first one that
is not is the client. Trusted is either an address in ``TRUSTED_PROXIES`` or one
of the first ``TRUSTED_PROXY_COUNT`` hops; with neither, the header is ignored.

No library: django-axes would read django-ipware if it were installed, but ipware
is not a dependency, and the rule above is this short module, tested on its own
(poolpatrol/tests/test_client_address.py) and behind a real nginx
(tests/faults/test_proxy_lockout.py). django-axes (``AXES_CLIENT_IP_CALLABLE``)
and the API's anonymous throttle both ask ``client_address``.
"""

import ipaddress
from collections.abc import Sequence
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request: HttpRequest) -> str | None:
    """The client's address as text, or None when the connection has none (a Unix socket)."""
    address = resolve(
        request.META.get("REMOTE_ADDR", ""),
        request.META.get("HTTP_X_FORWARDED_FOR", ""),
        trusted=trusted_networks(tuple(settings.TRUSTED_PROXIES)),
        hops=settings.TRUSTED_PROXY_COUNT,
    )
    return str(address) if address is not None else None


def resolve(
    remote_addr: str, forwarded_for: str, *, trusted: Sequence[Network], hops: int
) -> Address | None:
    """The first address, from ``remote_addr`` leftwards through ``forwarded_for``, that
    is not a trusted proxy's: one of the first ``hops`` hops, or an address in ``trusted``.

    An entry a trusted proxy appended is a real address; one that does not parse was
    written by someone else, so the walk stops at the last address it could believe.
    """
    address = parse(remote_addr)
    if address is None:
        return None
    entries = [entry for entry in forwarded_for.split(",") if entry.strip()]
    for step, entry in enumerate(reversed(entries)):
        is_proxy = step < hops if hops else any(address in network for network in trusted)
        if not is_proxy:
            break
        appended = parse(entry)
        if appended is None:
            break
        address = appended
    return address


def parse(text: str) -> Address | None:
    """An address as a proxy writes it: bare, or with a port (``1.2.3.4:80``, ``[::1]:80``)."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped  # a dual-stack socket's ::ffff:1.2.3.4 is 1.2.3.4
    return address


@lru_cache(maxsize=8)
def trusted_networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    """``TRUSTED_PROXIES`` as networks: addresses (``10.0.0.5``) or ranges (``10.0.0.0/8``)."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXIES: {entry!r} is not an address or a network (10.0.0.5, 10.0.0.0/8)"
            ) from None
    return tuple(networks)
