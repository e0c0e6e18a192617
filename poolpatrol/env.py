"""Typed readers for environment variables that fail loudly on a bad value.

Settings read the environment only through these helpers, so a typo in a
deployment ("ture", "50 miles") stops the process at start-up with the name of
the variable instead of silently falling back to a default.
"""

import ipaddress
import json
import os
import re
from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """Comma-separated list; blank items are dropped."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str) -> list[str]:
    """Comma-separated addresses or networks (``10.0.0.5``, ``10.0.0.0/8``, ``::1``)."""
    entries = env_list(name)
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not an address or a network (10.0.0.5, 10.0.0.0/8)"
            ) from None
    return entries


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


RATE_RE = re.compile(r"^[1-9]\d*/(s|sec|second|m|min|minute|h|hour|d|day)$")


def env_rate(name: str, default: str) -> str:
    """A DRF rate like ``1000/hour``; a bad value fails loudly, not on the first request."""
    rate = env_str(name, default).strip() or default
    if not RATE_RE.match(rate):
        raise ImproperlyConfigured(f"{name} must look like 100/minute or 1000/hour, not {rate!r}")
    return rate


def env_prices(name: str) -> dict[str, dict[str, Decimal]]:
    """Model prices as JSON, refused unless every price is a finite, non-negative number."""
    raw = env_str(name)
    try:
        prices = {
            model: {kind: Decimal(str(price[kind])) for kind in ("input", "output")}
            for model, price in json.loads(raw or "{}").items()
        }
    except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError):
        prices = None
    if prices is None or any(
        not value.is_finite() or value < 0 for price in prices.values() for value in price.values()
    ):
        raise ImproperlyConfigured(
            f"{name}={raw!r} must look like "
            '{"model": {"input": 2.0, "output": 8.0}} (USD per 1M tokens, not negative)'
        )
    return prices
