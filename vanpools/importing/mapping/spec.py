"""A mapping file's shape: per kind, where the rows are and a recipe per roster column."""

import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

KINDS: tuple[str, ...] = ("shifts", "vanpools", "employees")
# The rider list a vanpool may carry; the importer turns it into employees' seats.
RIDERS = "riders"
SCHEDULE_KEYS = ("days", "hours", "start", "end", "text")


class MappingError(ValueError):
    """The mapping file itself is wrong; ``where`` names the key."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(message)


class Recipe(BaseModel):
    """How one roster column is made from a source row.

    ``from`` is a column name, or a dotted path into a JSON row
    (``home.zip``, ``stops.0.zip``); a list of them is joined with ``sep``.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    source: str | list[str] | None = Field(default=None, alias="from")
    value: str | int | float | bool | None = None  # the same value on every row
    sep: str = ", "
    take: Literal["first_name", "last_name"] | None = None
    values: dict[str, str | int | bool] | None = None
    format: str | None = None  # e.g. "VP-{}": IDs another system keeps as bare numbers
    date_format: str | None = None
    # A schedule from parts: day list and hours, or text with both.
    days: str | None = None
    hours: str | None = None
    start: str | None = None
    end: str | None = None
    text: str | None = None
    # A vanpool's rider list: keys in each rider object.
    id: str | None = None
    joined: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _column_name_alone(cls, data: object) -> object:
        """``email = "Work Email"`` is short for ``email = { from = "Work Email" }``."""
        return {"from": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_origin(self) -> "Recipe":
        schedule = [key for key in SCHEDULE_KEYS if getattr(self, key) is not None]
        origins = [self.source is not None, self.value is not None, bool(schedule)]
        if sum(origins) != 1:
            raise ValueError(
                "give exactly one of from = COLUMN, value = CONSTANT, "
                "or a schedule's days/hours (or days/start/end, or text)"
            )
        if self.format is not None:
            _check_format(self.format)
        if schedule and not (
            self.text is not None
            or (self.days and self.hours and not (self.start or self.end))
            or (self.days and self.start and self.end and not self.hours)
        ):
            raise ValueError("a schedule needs days and hours, days with start and end, or text")
        return self

    def paths(self) -> list[str]:
        """Every source path the recipe reads."""
        if isinstance(self.source, list):
            return list(self.source)
        if self.source is not None:
            return [self.source]
        return [getattr(self, key) for key in SCHEDULE_KEYS if getattr(self, key) is not None]


class KindMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: str | None = None  # JSON: where the list of rows is (a dotted path)
    columns: dict[str, Recipe] = Field(default_factory=dict)


class RosterMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shifts: KindMapping | None = None
    vanpools: KindMapping | None = None
    employees: KindMapping | None = None
    source: str = ""  # the mapping file, for messages

    def for_kind(self, kind: str) -> KindMapping | None:
        found: KindMapping | None = getattr(self, kind)
        return found


def _check_format(template: str) -> None:
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ValueError(f"format '{template}': {exc}") from None
    if fields != [""]:
        raise ValueError(f"format '{template}' needs exactly one {{}} where the value goes")
