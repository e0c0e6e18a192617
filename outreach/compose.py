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
from django.utils import timezone
from django.utils.dateformat import format as format_date

from audit.facts import shift_facts
from audit.location import shown_miles
from audit.shift.readings import Unreadable, WeeklySchedule, read_shift
from cases.models import Case, Verification
from vanpools.models import Employee, Shift, Vanpool
from vanpools.schedules import ScheduleError, parse_weekly

# The first letter a flagged rider receives, by the checks they fail.
INITIAL_TEMPLATES: dict[frozenset[str], str] = {
    frozenset({"shift"}): "shift_mismatch",
    frozenset({"location"}): "location_mismatch",
    frozenset({"location", "shift"}): "both_mismatch",
}
TEMPLATES: frozenset[str] = frozenset(
    {
        *INITIAL_TEMPLATES.values(),
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

    @property
    def location_failed(self) -> bool:
        return "location" in self.failed_checks

    @property
    def shift_failed(self) -> bool:
        return "shift" in self.failed_checks

    @property
    def miles_text(self) -> str:
        """'84.7': rounded, but never onto the other side of the limit."""
        return "" if self.miles is None else shown_miles(self.miles, self.max_miles)

    @property
    def max_miles_text(self) -> str:
        return f"{self.max_miles:g}"

    @property
    def deadline_text(self) -> str:
        """'Sunday, November 29', or '' when the rider has no deadline."""
        return format_date(self.deadline, "l, F j") if self.deadline else ""

    @property
    def measured_to_text(self) -> str:
        """What the distance runs to, in words a rider recognises."""
        if self.measured_to == "work_site":
            site = f"the {self.work_site} work site" if self.work_site else "the work site"
            return f"{site} (the van has no pickup point on record)"
        if self.pickup_address:
            return f"the van's pickup point at {self.pickup_address}"
        return "the van's pickup point"

    @property
    def days_text(self) -> str:
        """'all 5 workdays we compared', '2 of the 5 workdays we compared'."""
        compared, mismatched = self.days_compared, self.days_mismatched
        if compared == 1:
            return "the one workday we compared"
        if mismatched == compared:
            return f"all {compared} workdays we compared"
        return f"{mismatched} of the {compared} workdays we compared"

    @property
    def record_text(self) -> str:
        """What the rider may need to correct: 'home address', 'shift', or both."""
        parts = [
            name
            for check, name in (("location", "home address"), ("shift", "shift"))
            if check in self.failed_checks
        ]
        return " or ".join(parts) or "record"


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
    )


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
    template = INITIAL_TEMPLATES.get(frozenset(failed_checks))
    if template is None:
        raise ValueError(f"no first letter for failed checks {sorted(failed_checks)!r}")
    return template


def render_email(template: str, facts: RiderFacts, **extra: object) -> RenderedEmail:
    """Render templates/emails/<template>/ for one rider.

    The subject is one stripped line; the text body is rendered without HTML
    escaping and wrapped for mail clients; the HTML body is escaped as usual.
    """
    if template not in TEMPLATES:
        raise ValueError(f"unknown email template {template!r}")
    if "question_excerpt" in extra:
        extra["question_excerpt"] = excerpt(str(extra["question_excerpt"] or ""))
    context = {**extra, "facts": facts}
    subject = _render(f"emails/{template}/subject.txt", context, autoescape=False)
    text = _render(f"emails/{template}/body.txt", context, autoescape=False)
    html = _render(f"emails/{template}/body.html", context, autoescape=True)
    return RenderedEmail(subject=" ".join(subject.split()), text=tidy_text(text), html=html.strip())


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The rider's words on one line, cut at a word: quoted back, never the whole email."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def _render(name: str, context: dict[str, Any], *, autoescape: bool) -> str:
    engine = engines["django"].engine  # type: ignore[attr-defined]
    return engine.get_template(name).render(Context(context, autoescape=autoescape))


_BULLET = re.compile(r"^(\s*(?:[-*•]|\d+\.)\s+|\s+)")


def tidy_text(text: str) -> str:
    """Blank lines left by template tags collapsed, long lines wrapped, bullets hanging."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        if not line and (not lines or not lines[-1]):
            continue  # no leading or doubled blank lines
        if len(line) <= TEXT_WIDTH:
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
