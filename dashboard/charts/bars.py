"""Horizontal bars for the program page: one labelled row per value."""

from collections.abc import Sequence
from dataclasses import dataclass


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
