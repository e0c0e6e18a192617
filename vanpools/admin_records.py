"""The admin pages of the ridership, parking and monthly records.

Trips, ride days and badge swipes are logs as the operator and the gate
exported them: shown, never edited or deleted here (a new import replaces
them), so the audit's fingerprint of a van's rides stays sound
(``audit.ride_facts``). Permits, a van's monthly report, holidays and what
each source covers are the program's own records, edited by auditors.
Every page stays inside a coordinator's scope (``ScopedAdmin``).
"""

from django.contrib import admin
from django.http import HttpRequest

from vanpools.admin_scope import ScopedAdmin
from vanpools.models import (
    BadgeSwipe,
    DataCoverage,
    Holiday,
    ParkingPermit,
    RideDay,
    Trip,
    VanpoolMonth,
)


class LogAdmin(ScopedAdmin):
    """A log exported by another system: read-only here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Trip)
class TripAdmin(LogAdmin):
    list_display = ["trip_ref", "vanpool", "date", "direction", "driver", "passengers"]
    list_filter = ["direction"]
    list_select_related = ["vanpool", "driver"]
    search_fields = ["trip_ref", "vanpool__vanpool_id"]
    date_hierarchy = "date"
    raw_id_fields = ["vanpool", "driver"]


@admin.register(RideDay)
class RideDayAdmin(LogAdmin):
    list_display = ["employee", "vanpool", "date", "source", "ref"]
    list_filter = ["source"]
    list_select_related = ["employee", "vanpool"]
    search_fields = ["employee__employee_id", "vanpool__vanpool_id", "ref"]
    date_hierarchy = "date"
    raw_id_fields = ["employee", "vanpool"]


@admin.register(BadgeSwipe)
class BadgeSwipeAdmin(LogAdmin):
    list_display = ["employee", "date", "time", "site", "gate", "direction"]
    list_filter = ["direction", "site"]
    list_select_related = ["employee"]
    search_fields = ["employee__employee_id", "gate"]
    date_hierarchy = "date"
    raw_id_fields = ["employee"]


@admin.register(DataCoverage)
class DataCoverageAdmin(ScopedAdmin):
    list_display = ["kind", "vanpool", "work_site", "start", "end", "source_name", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["vanpool"]
    search_fields = ["vanpool__vanpool_id", "work_site", "source_name"]
    raw_id_fields = ["vanpool"]


@admin.register(ParkingPermit)
class ParkingPermitAdmin(ScopedAdmin):
    list_display = ["permit_id", "employee", "lot", "valid_from", "valid_to", "status", "kind"]
    list_filter = ["status", "kind", "lot"]
    list_select_related = ["employee"]
    search_fields = ["permit_id", "employee__employee_id", "lot"]
    raw_id_fields = ["employee"]


@admin.register(VanpoolMonth)
class VanpoolMonthAdmin(ScopedAdmin):
    list_display = ["vanpool", "month", "seats", "vehicle_miles", "miles_per_trip", "commute_share"]
    list_select_related = ["vanpool"]
    search_fields = ["vanpool__vanpool_id"]
    date_hierarchy = "month"
    raw_id_fields = ["vanpool"]


@admin.register(Holiday)
class HolidayAdmin(ScopedAdmin):
    list_display = ["date", "name", "work_site"]
    list_filter = ["work_site"]
    search_fields = ["name"]
    date_hierarchy = "date"
