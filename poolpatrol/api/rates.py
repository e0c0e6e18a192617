"""Throttle rates from the environment, refused at start-up when malformed.

Kept free of DRF imports: settings.py imports it before Django is configured.
"""

import re

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_str

RATE_RE = re.compile(r"^[1-9]\d*/(s|sec|second|m|min|minute|h|hour|d|day)$")


def env_rate(name: str, default: str) -> str:
    """A DRF rate like ``1000/hour``; a bad value fails loudly, not on the first request."""
    rate = env_str(name, default).strip() or default
    if not RATE_RE.match(rate):
        raise ImproperlyConfigured(f"{name} must look like 100/minute or 1000/hour, not {rate!r}")
    return rate
