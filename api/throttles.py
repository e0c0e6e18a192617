"""Per-user (so per-token) and per-address throttles whose rates follow the settings.

DRF's own throttles copy the rates into a class attribute when first imported,
so a changed setting (a test, a reload) would be ignored; these read them on
each request. A throttled call gets 429 with ``Retry-After``. The counts live
in the default cache: with several processes, configure a shared cache.
"""

from typing import cast

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from poolpatrol.client_address import client_address


class CurrentRatesMixin:
    scope: str | None

    def get_rate(self) -> str | None:
        # The stubs type the rates as numbers; DRF's settings hold "100/minute" strings.
        rates = cast("dict[str | None, str | None]", api_settings.DEFAULT_THROTTLE_RATES)
        return rates.get(self.scope)


class ClientAddressMixin:
    def get_ident(self, request: Request) -> str:
        # DRF's own keys on the whole X-Forwarded-For a client wrote (a new budget
        # per forged header); this is the address the trusted proxies vouch for.
        return client_address(request) or request.META.get("REMOTE_ADDR", "")


class UserThrottle(CurrentRatesMixin, ClientAddressMixin, UserRateThrottle):
    """Authenticated callers, keyed by user: one budget per user and their token."""


class AnonThrottle(CurrentRatesMixin, ClientAddressMixin, AnonRateThrottle):
    """Anonymous callers, keyed by client address (they only ever get 401)."""
