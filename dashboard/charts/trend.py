"""The program page's weekly trend: cases opened, resolved and cancelled, and the rates."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

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
