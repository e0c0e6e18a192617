"""The program as HR and the vanpool operator describe it.

Vanpools, employees, their shifts and leave, and the memberships (Rider) that
tie them together. A cancelled membership is kept with who, when and why: the
audit trail depends on it, so riders are never deleted.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from poolpatrol.languages import CODES as LANGUAGE_CODES
from poolpatrol.languages import SHIPPED as SHIPPED_LANGUAGES
from vanpools.history import tracked
from vanpools.program import Holiday, ParkingPermit, VanpoolMonth
from vanpools.schedules import (
    ScheduleError,
    Span,
    describe_weekly,
    parse_rotation,
    parse_weekly,
)
from vanpools.trips import BadgeSwipe, DataCoverage, RideDay, Trip

__all__ = [
    "BadgeSwipe",
    "DataCoverage",
    "Employee",
    "Holiday",
    "Leave",
    "ParkingPermit",
    "RideDay",
    "Rider",
    "RosterUpload",
    "Shift",
    "Trip",
    "Vanpool",
    "VanpoolMonth",
]

ZIP_RE = r"^\d{5}(-\d{4})?$"
zip_validator = RegexValidator(ZIP_RE, "Enter a US ZIP code: 5 digits, or ZIP+4 like 02139-4307.")
vanpool_id_validator = RegexValidator(r"^VP-[A-Z0-9][A-Z0-9-]*$", "Vanpool IDs look like VP-101.")
employee_id_validator = RegexValidator(
    r"^[A-Z][A-Z0-9]*-?[A-Z0-9-]*$",
    "Employee IDs are upper-case letters and digits, e.g. EMP-1003.",
)
latitude_validators = [MinValueValidator(-90), MaxValueValidator(90)]
longitude_validators = [MinValueValidator(-180), MaxValueValidator(180)]

# Rider mail's languages, by the name staff pages use.
LANGUAGE_CHOICES = [(language.code, language.english_name) for language in SHIPPED_LANGUAGES]


def _check_coordinates_paired(lat_field: str, lng_field: str, name: str) -> models.CheckConstraint:
    both_or_neither = Q(**{f"{lat_field}__isnull": True, f"{lng_field}__isnull": True}) | Q(
        **{f"{lat_field}__isnull": False, f"{lng_field}__isnull": False}
    )
    return models.CheckConstraint(condition=both_or_neither, name=name)


class Shift(models.Model):
    shift_id = models.CharField(
        "shift ID",
        max_length=40,
        unique=True,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_-]*$", "Letters, digits, - and _.")],
    )
    name = models.CharField(max_length=100)
    schedule = models.JSONField(
        default=list,
        blank=True,
        help_text='Weekly days: [{"day": "Mon", "start": "07:00", "end": "16:00"}, …]. '
        "An end before the start crosses midnight.",
    )
    rotation = models.JSONField(
        null=True,
        blank=True,
        help_text='Rotating cycle: {"cycle_start": "2026-01-05", "days": [{"start": "06:00", '
        '"end": "18:00"}, null, …]} (null = day off).',
    )
    schedule_text = models.CharField(
        max_length=500, blank=True, help_text="The schedule as HR wrote it, when not as times."
    )
    overnight = models.BooleanField(
        default=False, help_text="Shift crosses midnight (end time is on the next day)."
    )
    history = tracked()

    class Meta:
        ordering = ["shift_id"]

    def __str__(self) -> str:
        return f"{self.shift_id} · {self.name}"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        try:
            spans = parse_weekly(self.schedule or [])
        except ScheduleError as exc:
            errors["schedule"] = str(exc)
            spans = []
        rotation_days: list[Span] = []
        if self.rotation:
            try:
                rotation_days = [day for day in parse_rotation(self.rotation).days if day]
            except ScheduleError as exc:
                errors["rotation"] = str(exc)
        if not (self.schedule or self.rotation or self.schedule_text.strip()):
            errors["schedule"] = "Give weekly days, a rotation, or the schedule as text."
        if any(span.crosses_midnight for span in spans) and not self.overnight:
            errors["overnight"] = "A day ends before it starts: tick overnight for such shifts."
        days = [*spans, *rotation_days]
        if self.overnight and days and not any(day.crosses_midnight for day in days):
            # The two facts contradict each other; the audit must not pick one silently.
            errors["overnight"] = (
                "No day of the schedule ends after midnight, so the shift is not overnight: "
                "untick overnight, or give hours that end the next day (e.g. 22:00-06:30)."
            )
        if errors:
            raise ValidationError(errors)

    @property
    def summary(self) -> str:
        if self.rotation:
            days = self.rotation.get("days", [])
            working = sum(1 for day in days if day)
            return f"rotating {working} on / {len(days) - working} off"
        if self.schedule:
            try:
                return describe_weekly(parse_weekly(self.schedule))
            except ScheduleError:
                return "invalid schedule"
        return f"“{self.schedule_text}”"


class Vanpool(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        INACTIVE = "inactive"
        SUSPENDED = "suspended"

    vanpool_id = models.CharField(
        "vanpool ID", max_length=20, unique=True, validators=[vanpool_id_validator]
    )
    name = models.CharField(max_length=120)
    work_site = models.CharField(max_length=100, db_index=True)
    work_site_address = models.CharField(max_length=255, blank=True)
    work_site_lat = models.FloatField(null=True, blank=True, validators=latitude_validators)
    work_site_lng = models.FloatField(null=True, blank=True, validators=longitude_validators)
    pickup_address = models.CharField("pickup point", max_length=255, blank=True)
    pickup_zip = models.CharField(
        "pickup ZIP", max_length=10, blank=True, validators=[zip_validator]
    )
    pickup_lat = models.FloatField(null=True, blank=True, validators=latitude_validators)
    pickup_lng = models.FloatField(null=True, blank=True, validators=longitude_validators)
    capacity = models.PositiveSmallIntegerField(
        default=12, validators=[MinValueValidator(1), MaxValueValidator(60)]
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    coordinator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="coordinated_vanpools",
    )
    schedule = models.JSONField(
        default=list,
        blank=True,
        help_text="Operating schedule, same shape as a weekly shift. "
        "Empty: the riders' majority shift is used.",
    )
    # IRS §132(f) counts adult seats not counting the driver; unknown until given.
    seats = models.PositiveSmallIntegerField(
        "seats (not counting the driver)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(60)],
    )
    miles_per_trip = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)], help_text="Route miles one way."
    )
    max_commute_miles = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Empty: the program default (DEFAULT_MAX_COMMUTE_MILES).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # updated_at: the history row has its own date.
    history = tracked(excluded=["updated_at"])

    class Meta:
        ordering = ["vanpool_id"]
        # COORDINATOR_SCOPE=sites limits everyone else to the vanpools they coordinate.
        permissions = [
            ("see_every_vanpool", "Can see every vanpool when coordinators are scoped to sites")
        ]
        constraints = [
            _check_coordinates_paired("pickup_lat", "pickup_lng", "vanpool_pickup_coords_paired"),
            _check_coordinates_paired(
                "work_site_lat", "work_site_lng", "vanpool_site_coords_paired"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.vanpool_id} · {self.name}"

    def clean(self) -> None:
        try:
            parse_weekly(self.schedule or [])
        except ScheduleError as exc:
            raise ValidationError({"schedule": str(exc)}) from None

    @property
    def effective_max_miles(self) -> int:
        return self.max_commute_miles or settings.DEFAULT_MAX_COMMUTE_MILES


class Employee(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        ON_LEAVE = "on_leave", "on leave"
        TERMINATED = "terminated"

    class TimeType(models.TextChoices):
        FULL_TIME = "full_time", "full time"
        PART_TIME = "part_time", "part time"

    employee_id = models.CharField(
        "employee ID", max_length=20, unique=True, validators=[employee_id_validator]
    )
    first_name = models.CharField(max_length=80)
    last_name = models.CharField(max_length=80)
    email = models.EmailField(db_index=True)
    # Set by a bounce: outreach stops writing to this address until HR fixes it.
    email_undeliverable_at = models.DateTimeField(null=True, blank=True)
    title = models.CharField(max_length=120, blank=True)
    work_site = models.CharField(max_length=100, db_index=True)
    home_address = models.CharField(max_length=255, blank=True)
    # A string: ZIPs keep their leading zeros (01810) and may carry +4.
    home_zip = models.CharField("home ZIP", max_length=10, validators=[zip_validator])
    # "7870" as a spreadsheet left it, when the import read it as 07870: the
    # location check weighs that guess instead of failing a rider on it.
    home_zip_as_given = models.CharField(
        "home ZIP as given",
        max_length=40,
        blank=True,
        default="",
        help_text="The roster's text when a leading zero was restored to read it.",
    )
    home_lat = models.FloatField(null=True, blank=True, validators=latitude_validators)
    home_lng = models.FloatField(null=True, blank=True, validators=longitude_validators)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    time_type = models.CharField(
        max_length=10, choices=TimeType.choices, default=TimeType.FULL_TIME
    )
    shift = models.ForeignKey(
        Shift, null=True, blank=True, on_delete=models.PROTECT, related_name="employees"
    )
    # The language rider mail is written in (outreach.rider_language): the
    # rider's own request first, then the roster's, then their replies'.
    preferred_language = models.CharField(
        max_length=8,
        choices=LANGUAGE_CHOICES,
        blank=True,
        default="",
        help_text="The roster's language for this employee's emails (blank: not given).",
    )
    requested_language = models.CharField(
        max_length=8,
        choices=LANGUAGE_CHOICES,
        blank=True,
        default="",
        help_text="The language the rider asked for by reply; it comes before the roster's.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = tracked(excluded=["updated_at"])

    class Meta:
        ordering = ["employee_id"]
        constraints = [
            _check_coordinates_paired("home_lat", "home_lng", "employee_home_coords_paired"),
            models.CheckConstraint(
                condition=Q(preferred_language__in=["", *LANGUAGE_CODES])
                & Q(requested_language__in=["", *LANGUAGE_CODES]),
                name="employee_languages_shipped",
            ),
        ]
        # Data minimisation: without it, staff see a rider's ZIP and distance,
        # never the street address (dashboard and API alike).
        permissions = [("view_home_address", "Can see employees' home street addresses")]

    def __str__(self) -> str:
        return f"{self.employee_id} · {self.full_name}"

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()

    @property
    def zip5(self) -> str:
        return self.home_zip[:5]


class Leave(models.Model):
    class Kind(models.TextChoices):
        PTO = "pto", "PTO"
        LEAVE = "leave", "leave of absence"

    employee = models.ForeignKey(Employee, on_delete=models.CASCADE, related_name="leaves")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PTO)
    start_date = models.DateField()
    end_date = models.DateField()
    note = models.CharField(max_length=255, blank=True)
    history = tracked()

    class Meta:
        ordering = ["employee", "start_date"]
        verbose_name = "leave / PTO"
        verbose_name_plural = "leave / PTO"
        constraints = [
            models.CheckConstraint(
                condition=Q(end_date__gte=models.F("start_date")),
                name="leave_ends_after_start",
                violation_error_message="Leave cannot end before it starts.",
            ),
            models.UniqueConstraint(
                fields=["employee", "start_date", "end_date", "kind"], name="leave_unique_span"
            ),
        ]

    def __str__(self) -> str:
        if self.start_date == self.end_date:
            return f"{self.get_kind_display()} {self.start_date}"
        return f"{self.get_kind_display()} {self.start_date} – {self.end_date}"


class Rider(models.Model):
    """A seat: an employee's membership of a vanpool."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        CANCELLED = "cancelled"

    vanpool = models.ForeignKey(Vanpool, on_delete=models.PROTECT, related_name="riders")
    employee = models.ForeignKey(Employee, on_delete=models.PROTECT, related_name="memberships")
    joined = models.DateField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    cancel_reason = models.TextField(blank=True)
    history = tracked()

    class Meta:
        ordering = ["vanpool", "employee"]
        constraints = [
            # One seat per employee: a second active membership is a data error.
            models.UniqueConstraint(
                fields=["employee"],
                condition=Q(status="active"),
                name="rider_one_active_seat_per_employee",
                violation_error_message="This employee already has an active seat.",
            ),
            models.CheckConstraint(
                condition=Q(status="active", cancelled_at__isnull=True)
                | Q(status="cancelled", cancelled_at__isnull=False),
                name="rider_cancelled_has_timestamp",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.employee.employee_id} in {self.vanpool.vanpool_id} ({self.status})"


class CoordinatorSite(models.Model):
    """A work site a staff user coordinates: they see its vanpools under COORDINATOR_SCOPE=sites.

    Besides the vanpools that name them as coordinator (vanpools/scope.py).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="coordinated_sites"
    )
    work_site = models.CharField(
        max_length=100, help_text="A vanpool work site, exactly as the vanpools name it."
    )

    class Meta:
        ordering = ["user__username", "work_site"]
        verbose_name = "site coordinator"
        constraints = [
            models.UniqueConstraint(fields=["user", "work_site"], name="coordinator_site_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.work_site}"


class RosterUpload(models.Model):
    """An export uploaded in the admin, kept between its preview and its confirmation.

    In the database, not on disk: the confirming request may reach another
    web host than the preview did.
    """

    token = models.CharField(max_length=64, unique=True)
    roster_name = models.CharField(max_length=200)
    roster = models.BinaryField()
    mapping_name = models.CharField(max_length=200, blank=True)
    mapping = models.BinaryField(null=True, blank=True)
    kind = models.CharField(max_length=20, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.roster_name} ({self.created_at:%Y-%m-%d %H:%M})"
