"""The bench's one scene: a weekday van from Union City BART to the Fremont campus.

``bench_outreach`` and ``bench_race`` (``evals.race``) build their vanpools
and riders here, so both measure the same van: its pickup, its hours, and a
rider who lives by the pickup or one who lives in Los Angeles.
"""

from vanpools.models import Employee, Shift, Vanpool

NEAR_ZIP, FAR_ZIP = "94587", "90026"  # Union City (the pickup), Los Angeles
WORK_SITE = "Fremont Campus"
WEEKDAYS = [
    {"day": day, "start": "08:00", "end": "17:00"} for day in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def day_shift(shift_id: str) -> Shift:
    """The van's own hours as a shift (stored once; a second call finds it)."""
    shift, _ = Shift.objects.get_or_create(
        shift_id=shift_id, defaults={"name": "Day", "schedule": WEEKDAYS}
    )
    return shift


def bench_vanpool(vanpool_id: str, name: str) -> Vanpool:
    """An unsaved vanpool on the bench's route (save it, or bulk-create many)."""
    return Vanpool(
        vanpool_id=vanpool_id,
        name=name,
        work_site=WORK_SITE,
        work_site_address="1 Campus Dr, Fremont, CA",
        work_site_lat=37.5485,
        work_site_lng=-121.9886,
        pickup_address="Union City BART, Union City, CA",
        pickup_lat=37.5906,
        pickup_lng=-122.0172,
        capacity=12,
        schedule=WEEKDAYS,
    )


def bench_employee(
    employee_id: str, *, first_name: str, last_name: str, email: str, home_zip: str, shift: Shift
) -> Employee:
    """An unsaved employee at the bench's work site, on ``shift``."""
    return Employee(
        employee_id=employee_id,
        first_name=first_name,
        last_name=last_name,
        email=email,
        work_site=WORK_SITE,
        home_zip=home_zip,
        shift=shift,
    )
