"""The vanpool map: the pickup, the work site and the riders' homes, placed in miles.

An equirectangular projection centred on the pickup point, with longitude
scaled by cos(latitude): within the few hundred miles a vanpool map covers,
distances on it are true to within a fraction of a percent.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from vanpools.geo import EARTH_RADIUS_MILES, Point

MILES_PER_DEGREE = EARTH_RADIUS_MILES * math.pi / 180
MarkerKind = Literal["pickup", "site", "home"]


@dataclass(frozen=True)
class Projection:
    """Miles east/north of ``centre`` onto SVG pixels (y grows downwards)."""

    centre: Point
    px_per_mile: float
    origin_x: float
    origin_y: float

    def miles_from_centre(self, point: Point) -> tuple[float, float]:
        east = (
            (point.lng - self.centre.lng)
            * MILES_PER_DEGREE
            * math.cos(math.radians(self.centre.lat))
        )
        north = (point.lat - self.centre.lat) * MILES_PER_DEGREE
        return east, north

    def to_xy(self, point: Point) -> tuple[float, float]:
        east, north = self.miles_from_centre(point)
        return self.origin_x + east * self.px_per_mile, self.origin_y - north * self.px_per_mile


@dataclass(frozen=True)
class MapPlace:
    """Something to put on the map, before projection."""

    kind: MarkerKind
    point: Point
    label: str
    flagged: bool = False
    miles: float | None = None  # commute miles, shown when the marker is clipped
    href: str = ""


@dataclass(frozen=True)
class Marker:
    kind: MarkerKind
    x: float
    y: float
    label: str
    flagged: bool
    clipped: bool  # outside the frame: drawn on its edge with an arrow pointing out
    angle: float  # degrees, SVG rotation pointing from the centre towards the place
    miles: float | None
    href: str
    label_anchor: Literal["start", "end"]


@dataclass(frozen=True)
class ScaleBar:
    x: float
    y: float
    length: float  # pixels
    label: str


@dataclass(frozen=True)
class MapChart:
    width: int
    height: int
    circle_x: float
    circle_y: float
    circle_r: float
    circle_label: str
    circle_label_y: float  # just above the circle, kept inside the frame
    markers: list[Marker]
    scale: ScaleBar
    clipped_count: int


def nice_distance(miles: float) -> float:
    """The largest 1, 2 or 5 × 10ⁿ not above ``miles`` (for scale bars)."""
    if miles <= 0 or not math.isfinite(miles):
        raise ValueError("a scale needs a positive distance")
    power: float = 10 ** math.floor(math.log10(miles))
    for step in (5, 2, 1):
        if step * power <= miles:
            return step * power
    return power  # unreachable: 1 × 10ⁿ ≤ miles by construction


def clip_to_frame(
    dx: float, dy: float, half_width: float, half_height: float
) -> tuple[float, float, bool]:
    """An offset from the centre, pulled back onto the frame's edge if it falls outside."""
    if abs(dx) <= half_width and abs(dy) <= half_height:
        return dx, dy, False
    scale = min(
        half_width / abs(dx) if dx else math.inf,
        half_height / abs(dy) if dy else math.inf,
    )
    return dx * scale, dy * scale, True


def straight_line_radius(limit_miles: float, circuity: float) -> float:
    """The circle to draw: commute miles are straight-line miles × circuity."""
    if circuity < 1:
        raise ValueError("circuity must be at least 1")
    return limit_miles / circuity


def map_chart(
    pickup: Point,
    places: Sequence[MapPlace],
    *,
    limit_miles: float,
    circuity: float,
    width: int = 640,
    height: int = 440,
    margin: int = 34,
    max_zoom_out: float = 2.4,
) -> MapChart:
    """Lay out the map: centred on the pickup, the threshold circle always in view.

    The frame shows at least 1.2 × the circle and stretches to fit every place
    up to ``max_zoom_out`` × the circle's radius; anything farther is drawn on
    the edge with an arrow and its miles, so one rider 300 miles away does not
    shrink everyone else to a dot.
    """
    radius = straight_line_radius(limit_miles, circuity)
    half_w, half_h = width / 2 - margin, height / 2 - margin
    probe = Projection(pickup, 1.0, 0.0, 0.0)
    reach = radius * 1.2
    for place in places:
        east, north = probe.miles_from_centre(place.point)
        # Reach in "frame units": how far the place pushes the shorter half-extent.
        needed = max(abs(east) * half_h / half_w, abs(north)) * 1.08
        reach = max(reach, min(needed, radius * max_zoom_out))
    px_per_mile = half_h / reach
    projection = Projection(pickup, px_per_mile, width / 2, height / 2)
    markers = [_marker(place, projection, half_w, half_h, width) for place in places]
    scale_miles = nice_distance(reach * half_w / half_h / 2.5)
    scale = ScaleBar(
        x=margin / 2,
        y=height - margin / 2,
        length=scale_miles * px_per_mile,
        label=f"{scale_miles:g} mi",
    )
    return MapChart(
        width=width,
        height=height,
        circle_x=width / 2,
        circle_y=height / 2,
        circle_r=radius * px_per_mile,
        circle_label=(
            f"{limit_miles:g} commute mi ≈ {radius:.1f} mi straight line (÷ {circuity:g} circuity)"
        ),
        circle_label_y=round(max(14.0, height / 2 - radius * px_per_mile - 7), 1),
        markers=markers,
        scale=scale,
        clipped_count=sum(marker.clipped for marker in markers),
    )


def _marker(
    place: MapPlace, projection: Projection, half_w: float, half_h: float, width: int
) -> Marker:
    x, y = projection.to_xy(place.point)
    dx, dy, clipped = clip_to_frame(
        x - projection.origin_x, y - projection.origin_y, half_w, half_h
    )
    x, y = projection.origin_x + dx, projection.origin_y + dy
    angle = math.degrees(math.atan2(dy, dx)) if (dx or dy) else 0.0
    # Labels point away from the nearer side edge so they stay inside the frame.
    anchor: Literal["start", "end"] = "end" if x > width * 0.62 else "start"
    return Marker(
        kind=place.kind,
        x=round(x, 1),
        y=round(y, 1),
        label=place.label,
        flagged=place.flagged,
        clipped=clipped,
        angle=round(angle, 1),
        miles=place.miles,
        href=place.href,
        label_anchor=anchor,
    )
