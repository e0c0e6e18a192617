"""Who rode: trip logs, ride-day rows and gate badge swipes, and what each source covers.

Operators and badge systems export ridership in three shapes (docs/roster-format.md):
one row per trip with its passengers, one row per rider per day ridden, and the
work site's gate swipes. Trips keep their passenger count (occupancy, the monthly
report); each passenger's day aboard is a ``RideDay``. Swipes are kept as the gate
wrote them, in the site's wall-clock time: whether one counts as a ride depends on
the van's arrival, which the audit reads when it runs.

A source says nothing about a date it does not cover: a ``DataCoverage`` row
records the dates (and vans or site) an import was complete for, so that a rider
missing from a covered day was not aboard, and an uncovered day is a gap
(``unknown``), never a missed ride. Models refer to the roster by string so this
module needs nothing from ``vanpools.models``, which registers them.
"""

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q


class Trip(models.Model):
    """One run of a van as the operator logged it (passengers not counting the driver)."""

    class Direction(models.TextChoices):
        TO_WORK = "to_work", "to work"
        FROM_WORK = "from_work", "from work"
        UNSPECIFIED = "", "not given"

    vanpool = models.ForeignKey("vanpools.Vanpool", on_delete=models.CASCADE, related_name="trips")
    date = models.DateField()
    direction = models.CharField(max_length=10, choices=Direction.choices, blank=True)
    # The operator's trip ID, else one made from the van, date, direction and order.
    trip_ref = models.CharField("trip ID", max_length=80)
    driver = models.ForeignKey(
        "vanpools.Employee", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    passengers = models.PositiveSmallIntegerField(help_text="Passengers aboard, not the driver.")
    miles = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)], help_text="This trip's miles."
    )

    class Meta:
        ordering = ["vanpool", "date", "trip_ref"]
        constraints = [
            models.UniqueConstraint(fields=["vanpool", "trip_ref"], name="trip_unique_ref"),
        ]
        indexes = [models.Index(fields=["vanpool", "date"], name="trip_van_date")]

    def __str__(self) -> str:
        return f"{self.trip_ref} ({self.date})"


class RideDay(models.Model):
    """A rider aboard their van on a date, from a trip log or a ride-day row."""

    class Source(models.TextChoices):
        TRIP = "trip", "trip log"
        RIDE_DAY = "ride_day", "ride-day row"

    employee = models.ForeignKey(
        "vanpools.Employee", on_delete=models.CASCADE, related_name="ride_days"
    )
    vanpool = models.ForeignKey(
        "vanpools.Vanpool", on_delete=models.CASCADE, related_name="ride_days"
    )
    date = models.DateField()
    source = models.CharField(max_length=10, choices=Source.choices)
    # The record the day is read from (a trip ID, or the export's row reference).
    ref = models.CharField(max_length=80)

    class Meta:
        ordering = ["vanpool", "date", "employee"]
        constraints = [
            models.UniqueConstraint(
                fields=["vanpool", "date", "employee", "source"], name="ride_day_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.employee_id} aboard {self.vanpool_id} on {self.date}"


class BadgeSwipe(models.Model):
    """A gate swipe at a work site, in the site's own wall-clock time."""

    class Direction(models.TextChoices):
        IN = "in"
        OUT = "out"
        UNSPECIFIED = "", "not given"

    employee = models.ForeignKey(
        "vanpools.Employee", on_delete=models.CASCADE, related_name="badge_swipes"
    )
    date = models.DateField()
    time = models.TimeField()
    site = models.CharField(max_length=100, blank=True)
    gate = models.CharField(max_length=60, blank=True)
    direction = models.CharField(max_length=3, choices=Direction.choices, blank=True)

    class Meta:
        ordering = ["employee", "date", "time"]
        constraints = [
            models.UniqueConstraint(
                fields=["employee", "date", "time", "gate"], name="badge_swipe_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.employee_id} at {self.date} {self.time:%H:%M}"


class DataCoverage(models.Model):
    """The dates a source is complete for: a van's trip log, or a site's gate or permits.

    Trips and ride days cover one vanpool; badge swipes and permits a work
    site (blank: every site). Dates are inclusive; an open end runs on.
    """

    class Kind(models.TextChoices):
        TRIPS = "trips", "trip log"
        RIDE_DAYS = "ride_days", "ride-day rows"
        BADGE_SWIPES = "badge_swipes", "badge swipes"
        PERMITS = "permits", "parking permits"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    vanpool = models.ForeignKey(
        "vanpools.Vanpool",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="data_coverage",
    )
    work_site = models.CharField(max_length=100, blank=True)
    start = models.DateField(null=True, blank=True)
    end = models.DateField(null=True, blank=True)
    source_name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "vanpool", "work_site", "start"]
        verbose_name_plural = "data coverage"
        constraints = [
            models.CheckConstraint(
                condition=Q(end__isnull=True)
                | Q(start__isnull=True)
                | Q(end__gte=models.F("start")),
                name="coverage_ends_after_start",
            ),
        ]
        indexes = [models.Index(fields=["kind", "vanpool"], name="coverage_kind_van")]

    def __str__(self) -> str:
        where = (self.vanpool_id and f"vanpool {self.vanpool_id}") or self.work_site or "all sites"
        return f"{self.get_kind_display()} for {where}: {self.start or '…'} – {self.end or '…'}"
