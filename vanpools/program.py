"""The program's other records: parking permits, each van's monthly facts, holidays.

Permits come from the parking office (a seat and a permit at once are two
commuter benefits); a van's month holds what its operator reports (seats not
counting the driver, odometer miles, miles per trip, the commute share) for the
§132(f) rules and the NTD-style monthly report; holidays excuse a workday from
the ridership rule. Registered by ``vanpools.models``.
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class ParkingPermit(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        RETURNED = "returned"
        REVOKED = "revoked"

    class Kind(models.TextChoices):
        STANDARD = "standard"
        # A space for the van or its driver: not a second commuter benefit.
        VANPOOL = "vanpool"

    permit_id = models.CharField("permit ID", max_length=40, unique=True)
    employee = models.ForeignKey(
        "vanpools.Employee", on_delete=models.CASCADE, related_name="parking_permits"
    )
    lot = models.CharField(max_length=100)
    valid_from = models.DateField()
    valid_to = models.DateField(null=True, blank=True, help_text="Blank: no end.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.STANDARD)

    class Meta:
        ordering = ["permit_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gte=models.F("valid_from")),
                name="permit_ends_after_start",
                violation_error_message="A permit cannot end before it starts.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.permit_id} · {self.lot}"


def share_validators() -> list:
    return [MinValueValidator(0), MaxValueValidator(1)]


class VanpoolMonth(models.Model):
    """What the operator reports for one van and one calendar month."""

    vanpool = models.ForeignKey("vanpools.Vanpool", on_delete=models.CASCADE, related_name="months")
    month = models.DateField(help_text="The first day of the month.")
    seats = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(60)],
        help_text="Adult seats not counting the driver; blank: the vanpool's.",
    )
    vehicle_miles = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)], help_text="Odometer miles."
    )
    miles_per_trip = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)], help_text="Blank: the vanpool's."
    )
    commute_share = models.FloatField(
        null=True,
        blank=True,
        validators=share_validators(),
        help_text="Commute miles ÷ all miles (0–1), when the operator knows it.",
    )

    class Meta:
        ordering = ["vanpool", "month"]
        constraints = [
            models.UniqueConstraint(fields=["vanpool", "month"], name="vanpool_month_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.vanpool_id} {self.month:%Y-%m}"


class Holiday(models.Model):
    """A day off on the program calendar, at one work site or (blank) every site."""

    date = models.DateField()
    name = models.CharField(max_length=100)
    work_site = models.CharField(max_length=100, blank=True, help_text="Blank: every site.")

    class Meta:
        ordering = ["date", "work_site"]
        constraints = [
            models.UniqueConstraint(fields=["date", "work_site"], name="holiday_unique_day"),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.name}"
