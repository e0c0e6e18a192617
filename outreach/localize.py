"""A rider's facts in words of the active language: dates, miles, hours and places.

Every email and answer is rendered inside ``translation.override(language)``;
these helpers read the active language, so the same facts come out as each
language writes them. Dates go through Django's date formatting with a format
each catalog sets; numbers through the locale's separators (Django's, or
``poolpatrol/formats/``); ZIPs, IDs and times of day are written as the
records hold them. The words here are in the catalogs beside the templates'
(``makemessages`` reads this module).
"""

import datetime as dt
import re
from decimal import Decimal

from django.utils.formats import date_format, number_format
from django.utils.translation import gettext_noop, pgettext

# Django names weekdays and months through its own catalogs, which have no
# Tagalog or Haitian Creole; ours name them for every shipped language (and,
# being read first, decide how the others write them in a sentence).
DATE_NAMES = (
    gettext_noop("Monday"),
    gettext_noop("Tuesday"),
    gettext_noop("Wednesday"),
    gettext_noop("Thursday"),
    gettext_noop("Friday"),
    gettext_noop("Saturday"),
    gettext_noop("Sunday"),
    gettext_noop("January"),
    gettext_noop("February"),
    gettext_noop("March"),
    gettext_noop("April"),
    gettext_noop("May"),
    gettext_noop("June"),
    gettext_noop("July"),
    gettext_noop("August"),
    gettext_noop("September"),
    gettext_noop("October"),
    gettext_noop("November"),
    gettext_noop("December"),
)


def deadline_text(day: dt.date) -> str:
    """The last day a rider has, as the language writes it: 'Sunday, November 29'."""
    # Translators: Django's date format (https://docs.djangoproject.com/en/5.2/ref/templates/builtins/#date)
    # for the last day a rider has to act: the weekday (l), the month (F or n) and the
    # day (j), in this language's order, with literal words escaped by a backslash.
    return date_format(day, pgettext("date format of a deadline", "l, F j"))


def day_range_text(start: dt.date, end: dt.date) -> str:
    """The days a check looked at, first to last: 'October 26 – November 22'."""
    # Translators: Django's date format for the first and last day of a few weeks
    # (a month name or number and the day, no weekday, no year).
    day_format = pgettext("date format of a day in a range", "F j")
    # Translators: the first and last day of the weeks a check looked at, both included.
    return pgettext("a range of days", "%(start)s – %(end)s") % {
        "start": date_format(start, day_format),
        "end": date_format(end, day_format),
    }


def full_date_text(day: dt.date) -> str:
    """A day with its year, as a permit's first or last day: 'September 1, 2026'."""
    # Translators: Django's date format for a day with its year (no weekday).
    return date_format(day, pgettext("date format of a day with its year", "F j, Y"))


def number_text(value: str) -> str:
    """A number already rounded for people ('88.9'), with the language's decimal mark."""
    return number_format(Decimal(value))


def place_text(measured_to: str, work_site: str, pickup_address: str) -> str:
    """What a distance was measured to, as a noun phrase the copy's sentences take."""
    if measured_to == "work_site":
        if work_site:
            # Translators: this and the next three are noun phrases that sentences put
            # after "from" or "to" ("about 12 miles from <place>"). Write them as your
            # sentences need them: Spanish leaves out the article the sentences give ("del").
            return pgettext(
                "place a distance is measured to",
                "the %(site)s work site (the van has no pickup point on record)",
            ) % {"site": work_site}
        return pgettext(
            "place a distance is measured to",
            "the work site (the van has no pickup point on record)",
        )
    if pickup_address:
        return pgettext(
            "place a distance is measured to", "the van's pickup point at %(address)s"
        ) % {"address": pickup_address}
    return pgettext("place a distance is measured to", "the van's pickup point")


def _weekday_abbreviations() -> dict[str, str]:
    return {
        "Mon": pgettext("weekday, abbreviated", "Mon"),
        "Tue": pgettext("weekday, abbreviated", "Tue"),
        "Wed": pgettext("weekday, abbreviated", "Wed"),
        "Thu": pgettext("weekday, abbreviated", "Thu"),
        "Fri": pgettext("weekday, abbreviated", "Fri"),
        "Sat": pgettext("weekday, abbreviated", "Sat"),
        "Sun": pgettext("weekday, abbreviated", "Sun"),
    }


_DAY = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b")
_ROTATION = re.compile(r"\brotating (\d+) on / (\d+) off\b")
_CYCLE = re.compile(r", cycle from (\d{4}-\d{2}-\d{2})\b")


def hours_text(hours: str) -> str:
    """A schedule as the audit describes it ('Mon–Fri 07:00–15:30'), in the active language.

    The audit writes schedules in one fixed form (``WeeklySchedule.describe``,
    ``RotatingSchedule.describe``); its day names and rotation words are
    translated, times and ISO dates stay as they are. HR's own free text,
    shown when the rules could not read it, keeps its words but for day names.
    """
    days = _weekday_abbreviations()
    hours = _DAY.sub(lambda match: days[match.group(1)], hours)
    hours = _ROTATION.sub(
        lambda match: (
            pgettext(
                "shift rotation: days worked, then days off", "rotating %(on)s on / %(off)s off"
            )
            % {"on": match.group(1), "off": match.group(2)}
        ),
        hours,
    )
    return _CYCLE.sub(
        lambda match: (
            ", " + pgettext("shift rotation", "cycle from %(date)s") % {"date": match.group(1)}
        ),
        hours,
    )
