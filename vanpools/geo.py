"""Geography for the location check: ZIP centroids, great-circle miles, providers.

ZIP centroids come from the offline ``zipcodes`` table (no network, no
download at run time). Commute miles are straight-line miles times a
circuity factor by default; ``DISTANCE_PROVIDER`` names another provider
(e.g. a routing service) with the same interface.
"""

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import zipcodes
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

EARTH_RADIUS_MILES = 3958.8
_ZIP = re.compile(r"^(\d{5})(?:-?\d{4})?$")


@dataclass(frozen=True)
class Point:
    lat: float
    lng: float


def haversine_miles(a: Point, b: Point) -> float:
    lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
    dlat = lat2 - lat1
    dlng = math.radians(b.lng - a.lng)
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlng / 2) ** 2
    return 2 * EARTH_RADIUS_MILES * math.asin(min(1.0, math.sqrt(h)))


def normalise_zip(raw: object) -> str | None:
    """The 5-digit ZIP of '01810', '01810-4321' or '018104321'; None for anything else."""
    if not isinstance(raw, str):
        return None
    match = _ZIP.match(raw.strip())
    return match[1] if match else None


@lru_cache(maxsize=65536)
def zip_centroid(zip_code: str) -> Point | None:
    """Centroid of a real US ZIP, or None when the ZIP is malformed or does not exist."""
    zip5 = normalise_zip(zip_code)
    if zip5 is None:
        return None
    try:
        matches = zipcodes.matching(zip5)
    except (ValueError, TypeError):
        return None
    for match in matches:
        try:
            return Point(float(match["lat"]), float(match["long"]))
        except (KeyError, TypeError, ValueError):
            continue
    return None


class DistanceProvider(Protocol):
    name: str

    def commute_miles(self, home: Point, pickup: Point) -> tuple[float, float]:
        """(straight-line miles, commute miles) from home to the pickup point."""


class OfflineDistanceProvider:
    """Great-circle miles × a circuity factor: roads are longer than the crow flies."""

    def __init__(self, circuity: float | None = None) -> None:
        self.circuity = circuity if circuity is not None else settings.COMMUTE_CIRCUITY_FACTOR
        self.name = f"great_circle×{self.circuity:g}"

    def commute_miles(self, home: Point, pickup: Point) -> tuple[float, float]:
        straight = haversine_miles(home, pickup)
        return straight, straight * self.circuity


def get_distance_provider() -> DistanceProvider:
    path = settings.DISTANCE_PROVIDER
    try:
        provider_class = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"DISTANCE_PROVIDER={path!r} cannot be imported: {exc}"
        ) from None
    return provider_class()
