"""What a message to one rider may say, and the emails built from it.

Every email to a rider is rendered from a ``RiderFacts``: the facts of one
case as they concern one employee — their own home ZIP and distance, their own
shift and the van's hours, their deadline — and nothing about any other rider
on the van (docs/design.md step 5: co-riders never see each other's data). The
templates live in ``templates/emails/<name>/`` as ``subject.txt``,
``body.txt`` and ``body.html``.
"""

import datetime as dt
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.template import Context, engines
from django.utils import timezone, translation
from django.utils.html import format_html

from audit.facts import shift_facts
from audit.location import shown_miles
from audit.shift.readings import Unreadable, WeeklySchedule, read_shift
from cases.models import Case, Verification
from outreach.localize import (
    day_range_text,
    deadline_text,
    full_date_text,
    hours_text,
    number_text,
    place_text,
)
from poolpatrol.languages import BY_CODE, SHIPPED
from vanpools.models import Employee, Shift, Vanpool
from vanpools.schedules import ScheduleError, parse_weekly

# The first letter a flagged rider receives, by the checks they fail.
INITIAL_TEMPLATES: dict[frozenset[str], str] = {
    frozenset({"shift"}): "shift_mismatch",
    frozenset({"location"}): "location_mismatch",
    frozenset({"location", "shift"}): "both_mismatch",
    frozenset({"ridership"}): "ridership_mismatch",
    frozenset({"parking"}): "parking_conflict",
}
# The checks a rider can fail (the vanpool rules judge the van, and write to no rider);
# any other mix of them gets the letter that names each finding.
RIDER_CHECKS = frozenset({"location", "shift", "ridership", "parking"})
SEVERAL_FINDINGS = "several_findings"
TEMPLATES: frozenset[str] = frozenset(
    {
        *INITIAL_TEMPLATES.values(),
        SEVERAL_FINDINGS,
        "answer",
        "still_shows",
        "reminder",
        "resolved",
        "cancelled",
        "holding_reply",
    }
)
# The languages every letter to a rider is written in (holding replies included);
# the rider-copy work (issue 31) adds the other shipped languages to this list.
RIDER_COPY_LANGUAGES: tuple[str, ...] = ("en", "es")
# Plain-text bodies are wrapped here; mail clients show longer lines unevenly.
TEXT_WIDTH = 72
# How much of a rider's question an answer quotes back.
EXCERPT_CHARS = 300
_WAITING = (Case.Status.OPEN, Case.Status.PENDING_REPLY)


@dataclass(frozen=True)
class RiderFacts:
    """Everything a message to one rider may say about their case.

    ``failed_checks`` are this rider's failing checks only. ``deadline`` is the
    last whole local day the rider has: the day before the case's reply
    deadline, because the timeout sweep acts at the deadline's moment and a
    rider told "by Monday" would otherwise lose Monday afternoon.
    """

    first_name: str
    employee_id: str
    case_id: str
    vanpool_id: str
    vanpool_name: str
    pickup_address: str
    work_site: str
    failed_checks: tuple[str, ...]
    home_zip: str
    home_source: str  # "stored_coordinates" | "zip_centroid" | "" (not measured)
    measured_to: str  # "pickup" | "work_site": what the distance was measured to
    miles: float | None  # commute miles, when measured
    max_miles: float
    shift_name: str
    rider_hours: str  # "Sun–Thu 22:00–06:30"
    van_hours: str  # "Mon–Fri 07:00–15:30": arrival at work – departure
    van_hours_from_riders: bool  # the van has no schedule: its riders' majority shift
    days_compared: int
    days_mismatched: int
    days_on_leave: int
    tolerance_minutes: int
    deadline: dt.date | None
    portal_url: str
    program_name: str
    contact_email: str
    # Ridership: the rider's days aboard against the days counted, and the rule.
    rides_aboard: int = 0
    rides_counted: int = 0  # the workdays counted that the data covers
    rides_required: int = 0
    rides_excused: int = 0  # leave, PTO and holidays left out
    rides_start: dt.date | None = None
    rides_end: dt.date | None = None
    rides_min_share: float | None = None  # the rule: a share of workdays…
    rides_min_days_per_week: float | None = None  # …or days a week
    rides_by_badge: bool = False  # only the gate's swipes covered the days counted
    swipe_window_minutes: int = 0
    # Parking: each permit in force beside the seat.
    permits: tuple["PermitFacts", ...] = ()

    @property
    def location_failed(self) -> bool:
        return "location" in self.failed_checks

    @property
    def ridership_failed(self) -> bool:
        return "ridership" in self.failed_checks

    @property
    def parking_failed(self) -> bool:
        return "parking" in self.failed_checks

    @property
    def shift_failed(self) -> bool:
        return "shift" in self.failed_checks

    @property
    def seat_findings_only(self) -> bool:
        """Only ridership or parking failed: nothing in the employee portal to correct."""
        return bool(self.failed_checks) and not (self.location_failed or self.shift_failed)

    @property
    def record_kind(self) -> str:
        """What the rider may need to correct: 'location', 'shift', 'both' or 'any'.

        The copy has a whole sentence for each (never a noun glued into one).
        """
        if self.location_failed and self.shift_failed:
            return "both"
        if self.location_failed:
            return "location"
        return "shift" if self.shift_failed else "any"

    # The facts in words of the active language (outreach.localize): the
    # templates read these inside the render's translation.override.

    @property
    def miles_text(self) -> str:
        """'84.7': rounded, but never onto the other side of the limit."""
        if self.miles is None:
            return ""
        return number_text(shown_miles(self.miles, self.max_miles))

    @property
    def max_miles_text(self) -> str:
        return number_text(f"{self.max_miles:g}")

    @property
    def deadline_text(self) -> str:
        """'Sunday, November 29', or '' when the rider has no deadline."""
        return deadline_text(self.deadline) if self.deadline else ""

    @property
    def measured_to_text(self) -> str:
        """What the distance runs to, in words a rider recognises."""
        return place_text(self.measured_to, self.work_site, self.pickup_address)

    @property
    def rider_hours_text(self) -> str:
        return hours_text(self.rider_hours)

    @property
    def van_hours_text(self) -> str:
        return hours_text(self.van_hours)

    @property
    def rides_window_text(self) -> str:
        """'October 26 – November 22': the days the ridership check looked at."""
        if self.rides_start is None or self.rides_end is None:
            return ""
        return day_range_text(self.rides_start, self.rides_end)

    @property
    def rides_percent_text(self) -> str:
        """'80': the share of workdays the rule asks for, as a percentage."""
        if self.rides_min_share is None:
            return ""
        return number_text(f"{self.rides_min_share * 100:g}")

    @property
    def rides_days_per_week_text(self) -> str:
        if self.rides_min_days_per_week is None:
            return ""
        return number_text(f"{self.rides_min_days_per_week:g}")


@dataclass(frozen=True)
class PermitFacts:
    """A parking permit in force beside the rider's seat, as the parking check cited it."""

    permit_id: str
    lot: str
    valid_from: dt.date | None
    valid_to: dt.date | None  # None: no end

    @property
    def valid_from_text(self) -> str:
        return full_date_text(self.valid_from) if self.valid_from else ""

    @property
    def valid_to_text(self) -> str:
        return full_date_text(self.valid_to) if self.valid_to else ""


@dataclass(frozen=True)
class RenderedEmail:
    subject: str
    text: str
    html: str


# --- Facts ---------------------------------------------------------------------------------


def latest_verifications(case: Case) -> dict[str, Verification]:
    """The case's newest Verification per check, in one query (none if prefetched)."""
    if "verifications" in getattr(case, "_prefetched_objects_cache", {}):
        rows = sorted(case.verifications.all(), key=lambda row: (row.created_at, row.pk))
        return {row.check_type: row for row in rows}  # the newest wins
    # A selective re-audit adds only the checks it ran, so each check's newest
    # row is picked on its own: the other check's older row still counts.
    newest = Window(
        RowNumber(),
        partition_by=[F("check_type")],
        order_by=[F("created_at").desc(), F("id").desc()],
    )
    newest_rows = Verification.objects.filter(case=case).annotate(newest=newest).filter(newest=1)
    return {row.check_type: row for row in newest_rows}


def rider_facts(case: Case, employee: Employee) -> RiderFacts:
    """This employee's facts on this case, and nothing about anyone else.

    Queries: the case's verifications (none when prefetched), plus the case's
    vanpool and the employee's shift unless they were loaded with
    select_related. Evidence items are picked by employee ID, so another
    rider's ZIP, miles or hours can never reach this rider's message.
    """
    vanpool: Vanpool = case.vanpool
    latest = latest_verifications(case)
    eid = employee.employee_id
    distance = _evidence(latest.get("location"), eid, "distance_check")
    summary = _evidence(latest.get("shift"), eid, "shift_summary")
    day = _evidence(latest.get("shift"), eid, "shift_day")
    flags = case.meta.get("rider_flags", {}).get(eid, {})
    shift = employee.shift
    rides = _evidence(latest.get("ridership"), eid, "ridership_summary")
    permits = [
        item
        for item in (latest["parking"].evidence if "parking" in latest else []) or []
        if isinstance(item, dict)
        and item.get("employee_id") == eid
        and item.get("type") == "parking_permit"
        and item.get("conflict")
    ]
    return RiderFacts(
        first_name=employee.first_name,
        employee_id=eid,
        case_id=case.case_id,
        vanpool_id=vanpool.vanpool_id,
        vanpool_name=vanpool.name,
        pickup_address=vanpool.pickup_address,
        work_site=vanpool.work_site,
        failed_checks=tuple(sorted(check for check, v in flags.items() if v == "fail")),
        home_zip=str(distance.get("home_zip") or employee.home_zip),
        home_source=str(distance.get("home_source", "")),
        measured_to="work_site" if distance.get("pickup_source") == "work_site" else "pickup",
        miles=_float(distance.get("miles")),
        max_miles=_float(distance.get("threshold_miles")) or float(vanpool.effective_max_miles),
        shift_name=_shift_name(shift, summary),
        rider_hours=str(summary.get("rider_schedule") or _shift_hours(shift)),
        van_hours=str(summary.get("van_schedule") or _van_hours(vanpool)),
        van_hours_from_riders=summary.get("van_schedule_source") == "majority_shift",
        days_compared=int(summary.get("days_compared") or 0),
        days_mismatched=int(summary.get("days_mismatched") or 0),
        days_on_leave=int(summary.get("days_on_leave") or 0),
        tolerance_minutes=int(day.get("tolerance_minutes") or settings.SHIFT_TOLERANCE_MINUTES),
        deadline=_deadline(case),
        portal_url=settings.EMPLOYEE_PORTAL_URL,
        program_name=settings.PROGRAM_NAME,
        contact_email=settings.PROGRAM_CONTACT_EMAIL,
        **_ride_facts(rides),
        permits=tuple(_permit_facts(item) for item in permits),
    )


def _ride_facts(item: dict[str, Any]) -> dict[str, Any]:
    """The ridership finding as the letter needs it: counts, the window's days, the rule."""
    if not item:
        return {}
    # The days the letter speaks of: the first to the last workday the data covered
    # (aboard or missed), not the window's ends when the records stop short of them.
    calendar = item.get("calendar") or {}
    counted = sorted(day for day, mark in calendar.items() if mark in ("aboard", "missed"))
    share, per_week = _float(item.get("min_share")), _float(item.get("min_days_per_week"))
    if share is None and per_week is None:  # evidence from before the rule was kept as numbers
        share, per_week = settings.RIDERSHIP_MIN_SHARE, settings.RIDERSHIP_MIN_DAYS_PER_WEEK
    return {
        "rides_aboard": int(item.get("aboard") or 0),
        "rides_counted": int(item.get("covered") or 0),
        "rides_required": int(item.get("required") or 0),
        "rides_excused": int(item.get("scheduled") or 0) - int(item.get("counted") or 0),
        "rides_start": _day(counted[0] if counted else item.get("window_start")),
        "rides_end": _day(counted[-1] if counted else item.get("window_end")),
        "rides_min_share": share,
        "rides_min_days_per_week": per_week if share is None else None,
        "rides_by_badge": item.get("sources") == ["badge_swipes"],
        "swipe_window_minutes": settings.RIDERSHIP_SWIPE_WINDOW_MINUTES,
    }


def _permit_facts(item: dict[str, Any]) -> PermitFacts:
    return PermitFacts(
        permit_id=str(item.get("permit_id") or ""),
        lot=str(item.get("lot") or ""),
        valid_from=_day(item.get("valid_from")),
        valid_to=_day(item.get("valid_to")),
    )


def _day(iso: object) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(iso))
    except ValueError:
        return None


def _evidence(verification: Verification | None, employee_id: str, kind: str) -> dict[str, Any]:
    """The first evidence item of this type about this employee ({} if none)."""
    if verification is None:
        return {}
    for item in verification.evidence or []:
        if (
            isinstance(item, dict)
            and item.get("employee_id") == employee_id
            and item.get("type") == kind
        ):
            return item
    return {}


def _float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _shift_name(shift: Shift | None, summary: dict[str, Any]) -> str:
    # The name only when it is the shift the audit compared: a shift changed
    # since must not lend its name to the old hours.
    if shift is None or (summary.get("shift_id") and summary["shift_id"] != shift.shift_id):
        return ""
    return shift.name


def _shift_hours(shift: Shift | None) -> str:
    """The rider's hours from the shift record, when no shift check describes them."""
    try:
        return read_shift(shift_facts(shift)).schedule.describe()
    except Unreadable as problem:
        return problem.value


def _van_hours(vanpool: Vanpool) -> str:
    try:
        spans = parse_weekly(vanpool.schedule or [])
    except ScheduleError:
        return ""
    return WeeklySchedule(tuple(spans)).describe() if spans else ""


def _deadline(case: Case) -> dt.date | None:
    moment = case.reply_deadline
    if moment is None and case.status in _WAITING:
        # Outreach renders the first letters just before it sets the deadline
        # (in the same transaction): it will be REPLY_WAIT_DAYS from now.
        moment = timezone.now() + dt.timedelta(days=settings.REPLY_WAIT_DAYS)
    if moment is None:
        return None
    return timezone.localtime(moment).date() - dt.timedelta(days=1)


# --- Templates -----------------------------------------------------------------------------


def initial_template_for(failed_checks: list[str]) -> str:
    """The first letter for a rider failing these checks."""
    failed = frozenset(failed_checks)
    template = INITIAL_TEMPLATES.get(failed)
    if template is None and failed and failed <= RIDER_CHECKS:
        template = SEVERAL_FINDINGS
    if template is None:
        raise ValueError(f"no first letter for failed checks {sorted(failed_checks)!r}")
    return template


def render_email(
    template: str, facts: RiderFacts, *, lang: str | None = None, **extra: object
) -> RenderedEmail:
    """Render templates/emails/<template>/ for one rider, in ``lang``.

    ``lang`` is a shipped language's code (``outreach.rider_language`` picks
    the rider's); by default the program's. Everything is rendered inside
    ``translation.override``: the catalogs' words, the locale's dates and
    numbers, and right-to-left layout for a right-to-left language. The
    subject is one stripped line; the text body is rendered without HTML
    escaping and wrapped for mail clients; the HTML body is escaped as usual.
    """
    if template not in TEMPLATES:
        raise ValueError(f"unknown email template {template!r}")
    lang = lang or settings.PROGRAM_LANGUAGE
    if lang not in BY_CODE:
        raise ValueError(f"no catalog for language {lang!r}")
    if "question_excerpt" in extra:
        extra["question_excerpt"] = excerpt(str(extra["question_excerpt"] or ""))
    with translation.override(lang):
        context = {**extra, "facts": facts, **_layout(facts)}
        subject = _render(f"emails/{template}/subject.txt", context, autoescape=False)
        text = _render(f"emails/{template}/body.txt", context, autoescape=False)
        html = _render(f"emails/{template}/body.html", context, autoescape=True)
    text, html = _joined(text), _joined(html)
    return RenderedEmail(subject=" ".join(subject.split()), text=tidy_text(text), html=html.strip())


# The templates join whole sentences with a space; Chinese and Japanese run
# sentences together, so a space after their full stop (or closing bracket)
# before more of their script is dropped, and so is one between their script
# and an opening full-width bracket ("5天中的5天（未计入2天休假）").
_CJK_GAP = re.compile(
    r"(?<=[。！？；：）」』])[ ]+(?=[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef])"
    r"|(?<=[\u3000-\u30ff\u3400-\u9fff])[ ]+(?=[（「『])"
)


def _joined(text: str) -> str:
    return _CJK_GAP.sub("", text)


def _layout(facts: RiderFacts) -> dict[str, object]:
    """What the HTML needs beside the words: direction, and links the sentences take whole.

    A link is handed to a translated sentence as one value, so the sentence
    reads the same in the text body (the address) and in HTML (the link).
    """
    rtl = translation.get_language_bidi()
    current = translation.get_language()
    return {
        "rtl": rtl,
        # How to get the email in another language: an English email offers
        # every other one, each in its own words; any other offers English.
        "english": BY_CODE["en"],
        "other_languages": [lang for lang in SHIPPED if lang.code != current],
        "start": "right" if rtl else "left",  # where a line starts, for inline styles
        "row_padding": "8px 0 8px 12px" if rtl else "8px 12px 8px 0",  # a table row's heading
        "contact_link": format_html(
            '<a href="mailto:{0}" style="color:#0b5cad;">{0}</a>', facts.contact_email
        ),
        # The opening tag only: the sentence holds the link's words and its "</a>".
        "portal_link": format_html('<a href="{}" style="color:#0b5cad;">', facts.portal_url),
    }


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The rider's words on one line, cut at a word: quoted back, never the whole email."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def _render(name: str, context: dict[str, Any], *, autoescape: bool) -> str:
    engine = engines["django"].engine  # type: ignore[attr-defined]
    return engine.get_template(name).render(Context(context, autoescape=autoescape))


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_BULLET = re.compile(r"^(\s*(?:[-*•]|\d+\.)\s+|\s+)")


def tidy_text(text: str) -> str:
    """Blank lines left by template tags collapsed, long lines wrapped, bullets hanging."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        if not line and (not lines or not lines[-1]):
            continue  # no leading or doubled blank lines
        if len(line) <= TEXT_WIDTH or _UNSPACED.search(line):
            # Chinese runs its words together: broken only at its rare spaces,
            # a line reads worse than one the reader's mail program wraps.
            lines.append(line)
            continue
        bullet = _BULLET.match(line)
        indent = " " * len(bullet.group(1)) if bullet else ""
        lines.extend(
            textwrap.wrap(
                line,
                width=TEXT_WIDTH,
                subsequent_indent=indent,
                break_long_words=False,  # URLs stay whole
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines).strip() + "\n"
