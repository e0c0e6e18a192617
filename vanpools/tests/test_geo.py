"""vanpools.geo: great-circle miles, ZIP normalisation and centroids, distance providers."""

import math
import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from audit.facts import Point
from vanpools import geo
from vanpools.geo import (
    EARTH_RADIUS_MILES,
    DistanceProvider,
    OfflineDistanceProvider,
    clean_zip,
    get_distance_provider,
    haversine_miles,
    is_plausible,
    normalise_zip,
    parse_coordinate,
    restored_leading_zeros,
    zip_as_given,
    zip_centroid,
    zips_starting_with,
)

SFO = Point(37.6213, -122.3790)
LAX = Point(33.9416, -118.4085)
JFK = Point(40.6413, -73.7781)


class FixedProvider:
    """A stand-in routing service: every home is 12 straight miles, 20 by road."""

    name = "fixed-test-router"

    def commute_miles(self, home: Point, pickup: Point) -> tuple[float, float]:
        return 12.0, 20.0


class NotAProvider:
    name = "no commute_miles method"


NOT_A_CLASS = "just a string"


# --- haversine -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "miles"),
    [
        (SFO, LAX, 337.0),  # published great-circle distance SFO–LAX
        (JFK, LAX, 2475.0),  # and JFK–LAX
        (SFO, SFO, 0.0),
    ],
)
def test_it_measures_known_great_circle_distances(a: Point, b: Point, miles: float):
    # Published figures are on the ellipsoid; a sphere is within half a percent.
    assert haversine_miles(a, b) == pytest.approx(miles, rel=0.005, abs=1e-9)
    assert haversine_miles(b, a) == pytest.approx(haversine_miles(a, b))


def test_it_measures_one_degree_of_latitude_on_the_demo_earth():
    # 3958.8 mi radius: the figure fixtures/demo/seeded.json was computed with.
    one_degree = haversine_miles(Point(40, -100), Point(41, -100))
    assert one_degree == pytest.approx(EARTH_RADIUS_MILES * math.pi / 180)


def test_it_measures_antipodes_without_a_domain_error():
    assert haversine_miles(Point(0, 0), Point(0, 180)) == pytest.approx(
        math.pi * EARTH_RADIUS_MILES
    )


@pytest.mark.parametrize(
    ("point", "plausible"),
    [
        (Point(37.5, -122.0), True),
        (Point(-33.9, 151.2), False),  # south of 15°S: swapped coordinates, not a commute
        (Point(0, 0), False),  # the usual "no location" sentinel
        (Point(91, 0), False),
        (Point(45, -181), False),
        (Point(math.nan, 10), False),
        (Point(10, math.inf), False),
        (Point(40.799, 74.478), False),  # Morristown, NJ with its minus sign lost
        (Point(13.47, 144.75), True),  # Guam
        (Point(52.9, 173.1), True),  # Attu, in the western Aleutians
    ],
)
def test_it_knows_a_real_place_from_a_sentinel(point: Point, plausible: bool):
    assert is_plausible(point) is plausible


# --- ZIPs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("94538", "94538"),
        ("01810", "01810"),  # leading zeros kept
        ("00901", "00901"),
        ("02139-4307", "02139"),  # ZIP+4
        ("021394307", "02139"),  # ZIP+4 without its hyphen
        (" 94538 ", "94538"),
        ("94538 - 1234", "94538"),
        ("", None),
        ("   ", None),
        ("ABCDE", None),
        ("2139", "02139"),  # a spreadsheet dropped the leading zero: the only reading
        ("601", "00601"),
        ("21394307", "02139"),
        ("12", None),
        ("123456", None),
        ("94538-12", None),
        ("94538-", "94538"),  # a trailing hyphen with no add-on
        ("９４５３８", None),  # full-width digits are not ASCII digits
        (None, None),
        (94538, None),
    ],
)
def test_it_normalises_zips(raw, expected):
    assert normalise_zip(raw) == expected


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("02139", "02139"),
        ("2139", "02139"),
        ("021394307", "02139-4307"),
        ("21394307", "02139-4307"),
        ("\t94536-1234 ", "94536-1234"),
        ("02139 4307", "02139-4307"),
        ("945366", None),
        ("9453x", None),
        ("94536-", "94536"),
        ("2139-0000", "02139-0000"),
        ("CA 94536", "94536"),
        ("ZIP: 94536", "94536"),
        ("123 Main St, Fremont, CA 94536-1234", "94536-1234"),
        ("10001 Mission Blvd, Fremont, CA", None),  # a street number is no ZIP
        ("O2139", None),  # a letter O is not read as a zero
        ("M5V 3L9", None),
        ("02139 MA", "02139"),
        ("06103, CT", "06103"),
        ("02139-4307 MA", "02139-4307"),
        ("94536 XX", None),  # not a state
        ("02139.0", "02139"),  # a ZIP column read as a float
        ("2118.0", "02118"),
        ("94536.5", None),
        ("94587–0042", "94587-0042"),  # an en dash
        ("94536 - 1234", "94536-1234"),
        ("#95112", "95112"),
        ("94550 USA", "94550"),
        ("CA-95630", "95630"),
        ("9.4536E+04", "94536"),  # Excel kept every digit
        ("2.139E+03", "02139"),
        ("9.45E+04", None),  # digits lost: 94450 to 94549
        ("'07042", "07042"),  # a spreadsheet's text marker
        ('="07102"', "07102"),  # a spreadsheet formula keeping the zero
        ("6O193", "60193"),  # a letter O typed between digits
        ("60647 (Logan Square)", "60647"),  # a note after the ZIP
        ("48124 Dearborn", "48124"),  # the ZIP's own town
        ("48124 Elm", None),  # not its town: maybe a street number and a street
    ],
)
def test_it_cleans_a_zip_into_its_stored_form(raw, stored):
    assert clean_zip(raw) == stored


@pytest.mark.parametrize(
    ("raw", "axis", "value"),
    [
        (37.59, "lat", 37.59),
        (-122, "lng", -122.0),
        (" 37.59 ", "lat", 37.59),
        ("47.6740° N", "lat", 47.674),
        ("122.1215° W", "lng", -122.1215),
        ("W122.5", "lng", -122.5),
        ("33.9 S", "lat", -33.9),
        ("47°40'30\"N", "lat", 47.675),
        ("−73.98", "lng", -73.98),  # a typographic minus sign
    ],
)
def test_it_reads_a_coordinate_as_exports_write_it(raw: object, axis: str, value: float):
    assert parse_coordinate(raw, axis) == pytest.approx(value)


@pytest.mark.parametrize(
    ("raw", "axis", "message"),
    [
        ("north", "lat", "'north' is not a coordinate"),
        ("nan", "lat", "'nan' is not a coordinate"),
        (True, "lat", "True is not a coordinate"),
        (None, "lng", "None is not a coordinate"),
        ("122.1 W", "lat", "'122.1 W' is W, which is no latitude"),
        ("-33.9 S", "lat", "'-33.9 S' gives both a sign and a hemisphere"),
        ("N 40 N", "lat", "'N 40 N' is not a coordinate"),
    ],
)
def test_it_refuses_a_coordinate_it_cannot_read(raw: object, axis: str, message: str):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_coordinate(raw, axis)


def test_swapped_latitude_and_longitude_is_not_a_place():
    assert not is_plausible(Point(-73.99, 40.75))  # Manhattan, swapped: Antarctica
    assert is_plausible(Point(-14.28, -170.70))  # American Samoa


@pytest.mark.parametrize(
    ("raw", "restored"),
    [
        ("7870", True),
        ("601", True),
        ("21394307", True),
        ("2139-0000", True),
        ("02139", False),
        ("CA 94536", False),
        ("2138.0", True),
        ("02138.0", False),
        ("9.4536E+04", False),
        ("junk", False),
    ],
)
def test_it_tells_a_zip_read_by_restoring_a_leading_zero(raw, restored):
    assert restored_leading_zeros(raw) is restored
    assert zip_as_given(raw) == (raw if restored else "")


def test_it_lists_the_zips_a_shortened_zip_could_be():
    found = [zip5 for zip5, _ in zips_starting_with("7870")]
    assert "78701" in found and all(zip5.startswith("7870") for zip5 in found)
    assert zips_starting_with("78701") == []  # five digits lost nothing


def test_a_restored_zip_that_does_not_exist_is_still_unplaced():
    assert zip_centroid("1234") is None  # 01234 is no ZIP


def test_it_places_a_real_zip_at_its_centroid():
    assert zip_centroid("94538") == Point(37.5308, -121.9712)
    assert zip_centroid("02139") == Point(42.3647, -71.1042)


def test_it_places_a_zip_plus_four_at_its_five_digit_centroid():
    assert zip_centroid("02139-4307") == zip_centroid("02139")
    assert zip_centroid("94538 ") == zip_centroid("94538")


@pytest.mark.parametrize(
    "raw",
    [
        "00000",  # well-formed, not a ZIP
        "99999",
        "02999",
        "09001",  # military APO: listed at (0, 0)
        "ABCDE",
        "",
        "1234",
        "9021",
        None,
    ],
)
def test_it_cannot_place_junk_or_unknown_zips(raw):
    assert zip_centroid(raw) is None


def test_it_looks_each_zip_up_once(monkeypatch):
    calls = []
    real = geo.zipcodes.matching

    def counting(zip_code: str) -> list[dict]:
        calls.append(zip_code)
        return real(zip_code)

    geo._centroid.cache_clear()
    monkeypatch.setattr(geo.zipcodes, "matching", counting)
    try:
        for raw in ("94538", "94538-1234", "94538", "ABCDE"):
            zip_centroid(raw)
    finally:
        geo._centroid.cache_clear()
    assert calls == ["94538"]


# --- distance providers -----------------------------------------------------------------


def test_it_measures_offline_commutes_as_great_circle_times_circuity():
    straight, commute = OfflineDistanceProvider(1.25).commute_miles(SFO, LAX)
    assert straight == pytest.approx(haversine_miles(SFO, LAX))
    assert commute == pytest.approx(straight * 1.25)


@override_settings(COMMUTE_CIRCUITY_FACTOR=1.5)
def test_it_takes_the_circuity_from_settings():
    provider = OfflineDistanceProvider()
    assert provider.circuity == 1.5
    assert provider.name == "offline great-circle × 1.5"


@pytest.mark.parametrize("circuity", [0.9, 0, -1, math.nan])
def test_it_refuses_a_circuity_below_one(circuity: float):
    with pytest.raises(ValueError, match="circuity"):
        OfflineDistanceProvider(circuity)


def test_it_builds_the_offline_provider_by_default():
    provider = get_distance_provider()
    assert isinstance(provider, OfflineDistanceProvider)
    assert provider.circuity == 1.2
    assert isinstance(provider, DistanceProvider)


@override_settings(DISTANCE_PROVIDER="")
def test_it_falls_back_to_the_offline_provider_when_the_setting_is_blank():
    assert isinstance(get_distance_provider(), OfflineDistanceProvider)


@override_settings(DISTANCE_PROVIDER="vanpools.tests.test_geo.FixedProvider")
def test_it_builds_the_provider_named_in_settings():
    provider = get_distance_provider()
    assert isinstance(provider, FixedProvider)
    assert provider.commute_miles(SFO, LAX) == (12.0, 20.0)


@pytest.mark.parametrize(
    "path",
    ["nowhere.Provider", "vanpools.geo.NoSuchProvider", "not-a-dotted-path"],
)
def test_it_explains_a_provider_path_it_cannot_import(path: str):
    with (
        override_settings(DISTANCE_PROVIDER=path),
        pytest.raises(ImproperlyConfigured, match=re.escape(f"'{path}' cannot be imported")),
    ):
        get_distance_provider()


@pytest.mark.parametrize(
    "path",
    [
        "vanpools.tests.test_geo.NotAProvider",
        "vanpools.tests.test_geo.NOT_A_CLASS",
    ],
)
def test_it_refuses_a_path_that_is_not_a_provider_class(path: str):
    with (
        override_settings(DISTANCE_PROVIDER=path),
        pytest.raises(ImproperlyConfigured, match="is not a distance provider class"),
    ):
        get_distance_provider()
