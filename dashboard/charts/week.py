"""The week chart: each rider's shift and the van's hours, day by day, and where they miss."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

MINUTES_PER_DAY = 24 * 60
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
