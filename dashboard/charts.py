"""Geometry for the dashboard's server-rendered SVG: vanpool map, week chart, bars, trend.

Pure functions of plain values (no database, no request): the templates only
draw what these return, so every coordinate is computed, and tested, here.

The map uses an equirectangular projection centred on the pickup point, with
longitude scaled by cos(latitude): within the few hundred miles a vanpool map
covers, distances on it are true to within a fraction of a percent.
"""

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from vanpools.geo import EARTH_RADIUS_MILES, Point

MILES_PER_DEGREE = EARTH_RADIUS_MILES * math.pi / 180
MINUTES_PER_DAY = 24 * 60


# --- Map ----------------------------------------------------------------------------------

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
    power = 10 ** math.floor(math.log10(miles))
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


# --- Week chart -----------------------------------------------------------------------------

DayState = Literal["match", "mismatch", "no_van", "leave", "off", "unknown"]
# Days a rider works that the van does not serve: both are mismatches on the chart.
MISMATCH_STATES: frozenset[str] = frozenset({"mismatch", "no_van"})


@dataclass(frozen=True)
class DaySpanOn:
    """Hours starting ``offset`` days after the chart's Monday (-1: the Sunday before)."""

    offset: int
    start: str  # "HH:MM"
    end: str  # "HH:MM"; before start means the span ends the next morning


@dataclass(frozen=True)
class Segment:
    day: int  # 0 = Monday … 6 = Sunday
    start: int  # minutes after midnight
    end: int  # minutes after midnight, up to 1440


def minutes(hhmm: str) -> int:
    hours, mins = hhmm.split(":")
    return int(hours) * 60 + int(mins)


def day_segments(span: DaySpanOn) -> list[Segment]:
    """The pieces of a span inside the chart's week: an overnight span is split at midnight."""
    start, end = minutes(span.start), minutes(span.end)
    if end > start:
        pieces = [(span.offset, start, end)]
    else:
        pieces = [(span.offset, start, MINUTES_PER_DAY), (span.offset + 1, 0, end)]
    return [Segment(day, a, b) for day, a, b in pieces if 0 <= day <= 6 and b > a]


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    title: str


# A marker beside the colour, so a mismatch reads without colour vision too.
STATE_MARKERS: dict[str, str] = {
    "match": "✓",
    "mismatch": "✕",
    "no_van": "✕",
    "leave": "L",
    "unknown": "?",
    "off": "",
}
STATE_TITLES: dict[str, str] = {
    "match": "matches the van",
    "mismatch": "shift does not match the van's hours",
    "no_van": "works, but the van does not run this day",
    "leave": "on leave: not a mismatch",
    "unknown": "cannot be compared",
    "off": "day off",
}


@dataclass(frozen=True)
class Cell:
    x: float
    width: float
    state: str
    marker: str
    title: str


@dataclass
class WeekRow:
    label: str
    sublabel: str
    href: str
    flagged: bool
    states: list[DayState]
    bars: list[Bar] = field(default_factory=list)
    note: str = ""  # a row without bars says why (schedule unreadable)
    y: int = 0
    cells: list[Cell] = field(default_factory=list)

    @property
    def mismatch_count(self) -> int:
        return sum(state in MISMATCH_STATES for state in self.states)


@dataclass(frozen=True)
class WeekLayout:
    width: int = 820
    label_width: int = 170
    header_height: int = 30
    row_height: int = 38

    @property
    def day_width(self) -> float:
        return (self.width - self.label_width) / 7

    def x(self, day: int, minute: int) -> float:
        return round(
            self.label_width + day * self.day_width + minute / MINUTES_PER_DAY * self.day_width, 1
        )

    def row_y(self, index: int) -> int:
        return self.header_height + index * self.row_height

    def height(self, rows: int) -> int:
        return self.header_height + rows * self.row_height + 22


def place_rows(rows: Sequence[WeekRow], layout: WeekLayout, first_index: int = 1) -> None:
    """Give each row its y and its seven day cells (index 0 is the van's own row)."""
    for index, row in enumerate(rows, start=first_index):
        row.y = layout.row_y(index)
        row.cells = [
            Cell(
                x=layout.x(day, 0),
                width=round(layout.day_width, 1),
                state=state,
                marker=STATE_MARKERS[state],
                title=STATE_TITLES[state],
            )
            for day, state in enumerate(row.states)
        ]


def bars_for(spans: Sequence[DaySpanOn], layout: WeekLayout) -> list[Bar]:
    bars = []
    for span in spans:
        for segment in day_segments(span):
            x = layout.x(segment.day, segment.start)
            bars.append(
                Bar(
                    x=x,
                    width=round(layout.x(segment.day, segment.end) - x, 1),
                    title=f"{span.start}–{span.end}",
                )
            )
    return bars


def week_dates(any_day: dt.date) -> list[dt.date]:
    """Monday to Sunday of the week holding ``any_day``."""
    monday = any_day - dt.timedelta(days=any_day.weekday())
    return [monday + dt.timedelta(days=offset) for offset in range(7)]


# --- Bars for the program page -----------------------------------------------------------------


@dataclass(frozen=True)
class BarRow:
    label: str
    value: float
    text: str
    y: float
    width: float
    tone: str
    value_x: float  # where the number goes: just past the bar's end


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    label_width: int
    rows: list[BarRow]


def bar_chart(
    values: Sequence[tuple[str, float, str]],
    *,
    width: int = 380,
    label_width: int = 110,
    row_height: int = 30,
    value_room: int = 48,
) -> BarChart:
    """Horizontal bars scaled to the largest value: (label, value, tone) in, geometry out."""
    top = max((value for _, value, _ in values), default=0) or 1
    span = width - label_width - value_room
    rows = [
        BarRow(
            label=label,
            value=value,
            text=f"{value:g}",
            y=index * row_height,
            width=round(max(0.0, value) / top * span, 1),
            tone=tone,
            value_x=round(label_width + max(0.0, value) / top * span + 6, 1),
        )
        for index, (label, value, tone) in enumerate(values)
    ]
    return BarChart(
        width=width, height=max(1, len(rows)) * row_height, label_width=label_width, rows=rows
    )


# --- Week chart rows as markup ------------------------------------------------------------------
# A dozen riders × seven days × several shapes is a few thousand template nodes:
# built here with format_html (every value escaped) it is a fraction of the time.


def week_rows_svg(rows: Sequence[WeekRow], van_bars: Sequence[Bar], layout: WeekLayout) -> str:
    from django.utils.html import format_html, format_html_join

    parts = []
    for row in rows:
        y = row.y
        misses = format_html_join(
            "",
            '<rect class="wk-miss" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>',
            (
                (cell.x, y + 1, cell.width, layout.row_height - 2, cell.title)
                for cell in row.cells
                if cell.state in MISMATCH_STATES
            ),
        )
        ghosts = format_html_join(
            "",
            '<rect class="wk-van-ghost" x="{}" y="{}" width="{}" height="26" rx="3"/>',
            ((bar.x, y + 6, bar.width) for bar in van_bars),
        )
        shifts = format_html_join(
            "",
            '<rect class="wk-shift" x="{}" y="{}" width="{}" height="14" rx="2">'
            "<title>{} works {}</title></rect>",
            ((bar.x, y + 12, bar.width, row.label, bar.title) for bar in row.bars),
        )
        marks = format_html_join(
            "",
            '<text class="wk-mark wk-mark-{}" x="{}" y="{}"><title>{}</title>{}</text>',
            (
                (cell.state, round(cell.x + 4, 1), y + 14, cell.title, cell.marker)
                for cell in row.cells
                if cell.marker
            ),
        )
        note = (
            format_html(
                '<text class="wk-note" x="{}" y="{}">{}</text>',
                layout.label_width + 8,
                y + 23,
                row.note[:90],
            )
            if row.note
            else ""
        )
        parts.append(
            format_html(
                '<g class="wk-row{}"><line class="wk-sep" x1="0" x2="{}" y1="{}" y2="{}"/>'
                "{}{}{}{}"
                '<a href="{}"><text class="wk-label" x="8" y="{}">{}{}</text></a>'
                '<text class="wk-sub" x="8" y="{}">{}</text>{}</g>',
                " is-flagged" if row.flagged else "",
                layout.width,
                y,
                y,
                misses,
                ghosts,
                shifts,
                marks,
                row.href,
                y + 17,
                "✕ " if row.flagged else "",
                row.label,
                y + 31,
                row.sublabel if len(row.sublabel) <= 22 else row.sublabel[:21] + "…",
                note,
            )
        )
    return format_html_join("\n", "{}", ((part,) for part in parts))


# --- Weekly trend on the program page -------------------------------------------------------

TREND_SERIES = ("opened", "resolved", "cancelled")


@dataclass(frozen=True)
class TrendWeek:
    """One week's figures, as the trend chart takes them."""

    label: str  # "Sep 7": the week's Monday
    opened: int
    resolved: int
    cancelled: int
    automation_rate: float | None  # None: nothing closed that week, no point drawn


@dataclass(frozen=True)
class TrendBar:
    series: str  # one of TREND_SERIES, also its CSS class
    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass(frozen=True)
class TrendPoint:
    x: float
    y: float
    title: str


@dataclass(frozen=True)
class AxisTick:
    y: float
    label: str


@dataclass(frozen=True)
class WeekLabel:
    x: float
    text: str


@dataclass(frozen=True)
class TrendChart:
    width: int
    height: int
    left: int  # the plot area: counts on the left axis, the rate on the right
    right: int
    top: int
    bottom: int
    bars: list[TrendBar]
    count_ticks: list[AxisTick]
    rate_ticks: list[AxisTick]
    labels: list[WeekLabel]
    lines: list[str]  # SVG polyline points, one per run of weeks that have a rate
    points: list[TrendPoint]


def count_scale(top: int) -> tuple[int, int]:
    """A round top for a count axis and its step: at most five steps, 1, 2 or 5 × 10ⁿ each."""
    if top <= 5:
        return 5, 1
    power = 10 ** math.floor(math.log10(top / 5))
    step = next(s * power for s in (1, 2, 5, 10) if top / (s * power) <= 5)
    return math.ceil(top / step) * step, step


def rate_runs(rates: Sequence[float | None]) -> list[list[int]]:
    """Indexes of consecutive weeks that have a rate: the line breaks where one has none."""
    runs: list[list[int]] = []
    for index, rate in enumerate(rates):
        if rate is None:
            continue
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def trend_chart(
    weeks: Sequence[TrendWeek],
    *,
    width: int = 760,
    height: int = 260,
    left: int = 40,
    right: int = 48,
    top: int = 14,
    bottom: int = 34,
) -> TrendChart:
    """Three bars a week (opened, resolved, cancelled) on a count axis, and the week's
    automation rate as a line on a 0–100 % axis; weeks without a rate break the line."""
    plot_bottom = height - bottom
    plot_height = plot_bottom - top
    group = (width - left - right) / max(1, len(weeks))
    bar_width = group * 0.72 / len(TREND_SERIES)
    axis_top, step = count_scale(
        max((getattr(w, s) for w in weeks for s in TREND_SERIES), default=0)
    )

    def count_y(value: float) -> float:
        return round(plot_bottom - value / axis_top * plot_height, 1)

    def rate_y(rate: float) -> float:
        return round(plot_bottom - rate * plot_height, 1)

    def centre(index: int) -> float:
        return round(left + (index + 0.5) * group, 1)

    bars = [
        TrendBar(
            series=series,
            x=round(left + index * group + group * 0.14 + n * bar_width, 1),
            y=count_y(getattr(week, series)),
            width=round(bar_width - 1, 1),
            height=round(plot_bottom - count_y(getattr(week, series)), 1),
            title=f"Week of {week.label}: {getattr(week, series)} {series}",
        )
        for index, week in enumerate(weeks)
        for n, series in enumerate(TREND_SERIES)
    ]
    rates = [week.automation_rate for week in weeks]
    points = [
        TrendPoint(
            centre(index),
            rate_y(rate),
            f"Week of {weeks[index].label}: {rate:.0%} closed without a human decision",
        )
        for index, rate in enumerate(rates)
        if rate is not None
    ]
    lines = [
        " ".join(f"{centre(i)},{rate_y(rates[i] or 0)}" for i in run)
        for run in rate_runs(rates)
        if len(run) > 1
    ]
    return TrendChart(
        width=width,
        height=height,
        left=left,
        right=width - right,
        top=top,
        bottom=plot_bottom,
        bars=bars,
        count_ticks=[AxisTick(count_y(v), str(v)) for v in range(0, axis_top + 1, step)],
        rate_ticks=[AxisTick(rate_y(r / 100), f"{r}%") for r in (0, 50, 100)],
        labels=[WeekLabel(centre(index), week.label) for index, week in enumerate(weeks)],
        lines=lines,
        points=points,
    )
