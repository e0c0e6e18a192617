"""Geography for the location check: great-circle miles, ZIP centroids, commute miles.

Everything here works offline. ZIP centroids come from the table bundled with
the ``zipcodes`` package, and the default commute distance is the great-circle
distance × a circuity factor, because roads are not straight. A routing
service can replace that by naming its class in the ``DISTANCE_PROVIDER``
setting.
"""

import functools
import math
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import zipcodes
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class Point:
    lat: float
    lng: float


# The mean Earth radius; fixtures/demo/seeded.json was computed with it too.
EARTH_RADIUS_MILES = 3958.8
DEFAULT_DISTANCE_PROVIDER = "vanpools.geo.OfflineDistanceProvider"

# ASCII digits only: \d would also accept Arabic-Indic or full-width digits,
# which no ZIP table knows. ZIP+4 may come with or without its hyphen.
_ZIP_RE = re.compile(r"([0-9]{5})(?:-?[0-9]{4})?")
SOUTHERNMOST_LATITUDE = -15.0
# "CA 94536", "ZIP: 94536", "…, Fremont, CA 94536-1234": a ZIP after a state
# code or a label, at the end of the text, is the ZIP whatever came before.
_STATES = (
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV "
    "NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP AA AE AP"
)
_LABELLED_ZIP = re.compile(
    rf"(?:^|[\s,])(?:zip(?:\s*code)?|{'|'.join(_STATES.split())})\.?[\s:#-]*"
    r"(?P<zip>[0-9]{3,5}(?:\s*-?\s*[0-9]{4})?-?)\s*$",
    re.IGNORECASE,
)
# 3-4 digits (a ZIP) or 8 (a ZIP+4) once a spreadsheet has dropped leading zeros.
# "02139 MA", "02139, MA": the state after the ZIP, as some exports write it.
_ZIP_THEN_STATE = re.compile(
    rf"\s*(?P<zip>[0-9]{{3,5}}(?:\s*-?\s*[0-9]{{4}})?)[\s,]+(?:{'|'.join(_STATES.split())})\.?\s*",
    re.IGNORECASE,
)
# "02139.0", "2118.0": a ZIP column read as a float and written back.
_FLOAT_ZIP = re.compile(r"([0-9]{3,5})\.0+")
# "9.4536E+04": Excel's scientific notation, readable only when no digit was lost.
_SCIENTIFIC_ZIP = re.compile(r"([0-9])\.([0-9]+)[eE]\+?0*([0-9])")
_DASHES = str.maketrans("\u2010\u2011\u2012\u2013\u2014\u2212", "------")
# Export noise around the ZIP: a leading "#", a trailing country.
_NOISE = re.compile(r"^\s*#\s*|[\s,]+(?:u\.?s\.?a?\.?|united states(?: of america)?)\s*$", re.I)
_DROPPED_ZEROS = re.compile(r"[0-9]{3,4}|[0-9]{8}")
_O_BETWEEN_DIGITS = re.compile(r"(?<=[0-9])[oO](?=[0-9])")
_ZIP_NOTE = re.compile(r"^(\s*[0-9]{5}(?:-[0-9]{4})?)\s*\([^()0-9]*\)\s*$")
_ZIP_THEN_WORDS = re.compile(
    r"\s*(?P<zip>[0-9]{5}(?:-[0-9]{4})?)[\s,]+(?P<words>[A-Za-z .'-]{3,40})"
)
# How a spreadsheet forces text: a leading apostrophe ('07042) or a formula (="07102").
_SPREADSHEET_TEXT = re.compile(r"^\s*(?:'|=\s*\")(?P<zip>[^\"]*)\"?\s*$")


def haversine_miles(a: Point, b: Point) -> float:
    """Great-circle distance in miles."""
    lat1, lng1, lat2, lng2 = map(math.radians, (a.lat, a.lng, b.lat, b.lng))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    )
    # Rounding can push h a hair above 1 for near-antipodal points.
    return 2 * EARTH_RADIUS_MILES * math.asin(math.sqrt(min(1.0, h)))


def is_plausible(point: Point) -> bool:
    """A real place a US program serves: finite, in range, not (0, 0) ("no location").

    Nothing it serves lies south of 15°S (American Samoa is the southernmost);
    a point there is almost always a US location with latitude and longitude
    swapped (lat -74, lng 40.7 is Manhattan), which must not be measured.
    Nor in the Eastern Hemisphere, but for Guam, the Northern Marianas, Wake
    and the western Aleutians: elsewhere a positive longitude is a US one that
    lost its minus sign (40.8, 74.5 is Uzbekistan for Morristown, NJ).
    """
    lat, lng = point.lat, point.lng
    if not (math.isfinite(lat) and math.isfinite(lng)):
        return False
    in_range = -90 <= lat <= 90 and -180 <= lng <= 180
    in_hemisphere = lng <= 0 or _in_eastern_us(lat, lng)
    return in_range and in_hemisphere and lat >= SOUTHERNMOST_LATITUDE and (lat, lng) != (0, 0)


def _in_eastern_us(lat: float, lng: float) -> bool:
    pacific_islands = 10 <= lat <= 22 and 140 <= lng <= 170  # Guam, Marianas, Wake
    aleutians = 50 <= lat <= 56 and lng >= 170
    return pacific_islands or aleutians


# "47.674", "47.6740° N", "122.1215 W", "W122.1215", "47°40'26.6\"N": how exports
# write one coordinate. Degrees, optional minutes and seconds, a hemisphere letter.
_COORDINATE = re.compile(
    r"(?P<pre>[NSEW])?\s*(?P<sign>[+-])?\s*(?P<deg>[0-9]+(?:\.[0-9]+)?)\s*°?"
    r"(?:\s*(?P<min>[0-9]+(?:\.[0-9]+)?)\s*['′])?(?:\s*(?P<sec>[0-9]+(?:\.[0-9]+)?)\s*(?:\"|″|''))?"
    r"\s*(?P<post>[NSEW])?",
    re.IGNORECASE,
)
_HEMISPHERES = {"lat": ("N", "S"), "lng": ("E", "W")}
_AXIS_NAMES = {"lat": "latitude", "lng": "longitude"}


def parse_coordinate(raw: object, axis: str) -> float:
    """One latitude (``axis="lat"``) or longitude (``"lng"``) as a float, from a number or text.

    A hemisphere letter sets the sign (S and W are negative) and must suit the
    axis: "122.12° W" is no latitude. Raises ValueError saying what is wrong.
    Range is not checked here: the location check treats out-of-range points as junk.
    """
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ValueError(f"{raw!r} is not a coordinate")
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        match = _COORDINATE.fullmatch(raw.strip().translate(_DASHES))
        if match is None or (match["pre"] and match["post"]):
            raise ValueError(f"{raw!r} is not a coordinate (write 37.55, -122.1 or 37.55° N)")
        hemisphere = (match["pre"] or match["post"] or "").upper()
        if hemisphere and hemisphere not in _HEMISPHERES[axis]:
            raise ValueError(f"{raw!r} is {hemisphere}, which is no {_AXIS_NAMES[axis]}")
        if hemisphere and match["sign"]:
            raise ValueError(f"{raw!r} gives both a sign and a hemisphere")
        value = (
            float(match["deg"]) + float(match["min"] or 0) / 60 + float(match["sec"] or 0) / 3600
        )
        if match["sign"] == "-" or hemisphere in ("S", "W"):
            value = -value
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a coordinate (write 37.55, -122.1 or 37.55° N)")
    return value


def clean_zip(raw: str | None) -> str | None:
    """A US ZIP as it should be stored, ``02139`` or ``02139-4307``; None if it is not one.

    Reads a ZIP after a state code or label at the end of the text ("CA
    94536", "ZIP 94536", a whole address ending "…, CA 94536") or just before
    a state ("02139 MA", "CA-94536"), and drops a trailing hyphen, a float's
    ".0", a leading "#" or a trailing "USA"; any dash counts as a hyphen;
    Excel's "9.4536E+04" is read only when it kept every digit.
    Restores what spreadsheets do to ZIPs read as numbers: the leading zeros
    of New England, New Jersey and Puerto Rico ZIPs (``2139`` → ``02139``,
    ``601`` → ``00601``, ``21394307`` → ``02139-4307``), a ZIP+4 without its
    hyphen, and stray whitespace. The importer stores this; the location check
    reads any stored value through it too.
    """
    if not isinstance(raw, str):
        return None
    return _clean_zip_text(raw)


# Pure in its text, and a program's homes share a few thousand ZIPs: a bulk
# audit reads each rider's twice, and the regular expressions were most of it.
@functools.lru_cache(maxsize=65_536)
def _clean_zip_text(raw: str) -> str | None:
    raw = _NOISE.sub("", _SPREADSHEET_TEXT.sub(r"\g<zip>", raw.translate(_DASHES)))
    # A letter O typed between digits is a zero ("6O193"); one at the start is left alone.
    raw = _O_BETWEEN_DIGITS.sub("0", raw)
    raw = _ZIP_NOTE.sub(r"\1", raw)  # "60647 (Logan Square)": a note after the ZIP
    if (named := _ZIP_THEN_WORDS.fullmatch(raw)) and _names_its_town(named["zip"], named["words"]):
        raw = named["zip"]  # "48124 Dearborn": the ZIP's own town, not a street
    labelled = _LABELLED_ZIP.search(raw) or _ZIP_THEN_STATE.fullmatch(raw)
    value = "".join((labelled["zip"] if labelled else raw).split()).rstrip("-")
    if floated := _FLOAT_ZIP.fullmatch(value):
        value = floated[1]
    elif scientific := _SCIENTIFIC_ZIP.fullmatch(value):
        digits = scientific[1] + scientific[2]
        # 9.45E+04 kept three digits of five: the ZIP is lost, not rounded.
        value = digits if len(digits) == int(scientific[3]) + 1 else "lost"
    head, _, tail = value.partition("-")
    if tail and re.fullmatch(r"[0-9]{3,4}", head):
        value = head.zfill(5) + tail  # "2139-0000"
    if _DROPPED_ZEROS.fullmatch(value):
        value = value.zfill(5 if len(value) < 5 else 9)
    match = _ZIP_RE.fullmatch(value)
    if match is None:
        return None
    return match[1] + (f"-{value[-4:]}" if len(value) > 5 else "")


def restored_leading_zeros(raw: str | None) -> bool:
    """Whether ``clean_zip`` read this ZIP by putting back zeros a spreadsheet dropped.

    "7870" → "07870", "2138.0" → "02138" and "21394307" → "02139-4307" are
    restored; "02139", "CA 94536" and "9.4536E+04" are not. A restored ZIP is
    a reading, not a record: the same digits may be a ZIP that lost its last
    digit instead.
    """
    return bool(digits_given(raw))


def digits_given(raw: str | None) -> str:
    """The digits a restored ZIP was read from ("7870" → "7870"), else ""."""
    cleaned = clean_zip(raw)
    if cleaned is None or not isinstance(raw, str) or not cleaned.startswith("0"):
        return ""
    zip5 = cleaned[:5]
    given = zip5.lstrip("0")
    return given if zip5 not in raw and given in raw else ""


def zip_as_given(raw: str | None) -> str:
    """The ZIP text as the roster gave it, kept only when a leading zero was restored."""
    return raw.strip()[:40] if isinstance(raw, str) and restored_leading_zeros(raw) else ""


def zips_starting_with(digits: str) -> list[tuple[str, Point]]:
    """Placeable 5-digit ZIPs that begin with these digits ("7870" → 78701, 78702, …)."""
    if not re.fullmatch(r"[0-9]{1,4}", digits):
        return []
    found = []
    for row in zipcodes.similar_to(digits):
        point = _centroid(str(row.get("zip_code", "")))
        if point is not None:
            found.append((str(row["zip_code"]), point))
    return found


def _names_its_town(zip_code: str, words: str) -> bool:
    """Whether the words after a ZIP are its town ("48124 Dearborn"), not a street."""
    try:
        rows = zipcodes.matching(zip_code[:5])
    except (ValueError, TypeError):
        return False
    town = " ".join(words.replace(".", " ").split()).casefold()
    return any(str(row.get("city", "")).casefold() == town for row in rows)


def normalise_zip(raw: str | None) -> str | None:
    """The 5-digit ZIP of a ZIP or ZIP+4 ("02139-4307" → "02139"); anything else → None."""
    cleaned = clean_zip(raw)
    return cleaned[:5] if cleaned else None


def zip_centroid(zip_code: str | None) -> Point | None:
    """The centre of a ZIP (or ZIP+4) from the offline table; None when it cannot be placed."""
    zip5 = normalise_zip(zip_code)
    return _centroid(zip5) if zip5 else None


# Keyed by the normalised 5-digit ZIP, so at most 100,000 entries: no eviction needed.
@functools.cache  # lru_cache without a bound
def _centroid(zip5: str) -> Point | None:
    try:
        rows = zipcodes.matching(zip5)
    except (ValueError, TypeError):
        return None
    for row in rows:
        try:
            point = Point(float(row["lat"]), float(row["long"]))
        except (KeyError, TypeError, ValueError):
            continue
        # Military APO/FPO ZIPs are listed at (0, 0): in the table, not on a map.
        if is_plausible(point):
            return point
    return None


@runtime_checkable
class DistanceProvider(Protocol):
    """How far a home is from a pickup point.

    ``name`` is recorded on every piece of distance evidence, so an auditor can
    tell which method produced a number. Providers are built with no arguments
    by ``get_distance_provider``; they read their own settings.
    """

    name: str

    def commute_miles(self, home: Point, pickup: Point) -> tuple[float, float]:
        """(straight-line miles, commute miles) from home to pickup."""
        ...


class OfflineDistanceProvider:
    """Great-circle miles × a circuity factor: no network, and the same answer every time."""

    def __init__(self, circuity: float | None = None) -> None:
        circuity = settings.COMMUTE_CIRCUITY_FACTOR if circuity is None else circuity
        # Below 1 a road would be shorter than the straight line between its ends.
        if not circuity >= 1:
            raise ValueError(f"circuity must be at least 1, not {circuity!r}")
        self.circuity = circuity
        self.name = f"offline great-circle × {circuity:g}"

    def commute_miles(self, home: Point, pickup: Point) -> tuple[float, float]:
        straight = haversine_miles(home, pickup)
        return straight, straight * self.circuity


def get_distance_provider() -> DistanceProvider:
    """The provider named by the DISTANCE_PROVIDER setting (the offline one by default)."""
    path = getattr(settings, "DISTANCE_PROVIDER", "") or DEFAULT_DISTANCE_PROVIDER
    try:
        provider_class = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"DISTANCE_PROVIDER={path!r} cannot be imported ({exc}). Give the dotted path "
            f"to a distance provider class, e.g. {DEFAULT_DISTANCE_PROVIDER!r}."
        ) from None
    provider = provider_class() if isinstance(provider_class, type) else None
    if not isinstance(provider, DistanceProvider):
        raise ImproperlyConfigured(
            f"DISTANCE_PROVIDER={path!r} is not a distance provider class: it needs a "
            "`name` and a `commute_miles(home, pickup)` method (see vanpools.geo)."
        )
    return provider
