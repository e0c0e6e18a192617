"""What the check stage decides for one row: the write stage applies it, the preview shows it."""

from dataclasses import dataclass, field
from datetime import date

from django.db import models

from vanpools.models import Leave, Rider, Shift


@dataclass
class SeatChange:
    vanpool_key: str | None = None  # take a new seat in this vanpool
    joined: date | None = None
    leave: Rider | None = None  # the active seat given up for the new one
    retime: Rider | None = None  # the same seat, with a corrected start date


@dataclass
class Plan:
    instance: models.Model
    created: bool
    changed: set[str]
    where: str = ""  # the row it came from
    before: dict[str, object] = field(default_factory=dict)  # changed fields' stored values
    shift: Shift | None = None  # employees: set once the shift itself is saved
    seat: SeatChange | None = None
    leaves_to_delete: list[Leave] = field(default_factory=list)
    leaves_to_create: list[Leave] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        if self.created:
            return "created"
        dirty = self.changed or self.seat or self.leaves_to_delete or self.leaves_to_create
        return "updated" if dirty else "unchanged"
