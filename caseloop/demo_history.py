"""The demo's simulated past quarter, played through the real workflow on a frozen clock.

``load_demo`` opens on a program with a past: weeks of audits, emails, replies
and decisions before today's open cases, so the program page's figures and
weekly trend mean something on a first run. fixtures/demo/history.json says
who the quarter's riders are, what goes wrong for each, what they reply and
when, and what the coordinator decides. This module plays it:

- HR's roster files, through the importer (``vanpools.importing.import_data``);
- every Monday's audit of the quarter's vanpools (``caseloop.audits``), which
  writes to flagged riders as it always does;
- a daily deadline sweep (``caseloop.loop.deadlines.process_timeouts``): reminders,
  re-audits at the deadline, pre-cancel and the supervisor's review;
- each reply as a real email through the inbound path
  (``outreach.inbound.receive_raw``), read by the reply reader and acted on;
- each decision on the review queue through ``caseloop.decisions``.

Each step runs at its own moment on a frozen clock (time-machine) with the
task queue inline, so every row carries the time the product would have
given it, and nothing is written that the product could not write itself.
The quarter's riders are employees of their own on vans that pass today's
audit, and the story closes every case it opens: today's audit finds what it
finds without the history.
"""

import datetime as dt
import email.utils
import json
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal, get_args

import time_machine
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from caseloop.audits import audit_vanpools
from caseloop.decisions import approve, reject
from caseloop.loop.deadlines import process_timeouts
from cases.kinds import LabelReply, UnknownKind, payload_class
from cases.models import Case, PendingAction
from outreach.inbound import receive_raw
from outreach.models import Message
from poolpatrol.queue import run_inline
from vanpools.importing import import_data
from vanpools.models import Employee

DEMO_HISTORY = Path(settings.BASE_DIR) / "fixtures" / "demo" / "history.json"
# Kept on each reply's record (the inbound path's "received via"), so nobody
# mistakes a simulated email for one a rider sent.
PROVIDER = "demo-history"
# The roster importer refuses an employee row without these; a change names
# only what changed, so each row repeats them from the rider's current record.
IDENTITY_COLUMNS = ("employee_id", "first_name", "last_name", "email", "work_site", "home_zip")
# The story is scripted for the offline default: what the reader makes of each
# reply, which checks fail and when deadlines fall follow from these values.
# Elsewhere (a model configured, other thresholds) it would go its own way,
# and a model would be paid to read made-up mail; the history is skipped.
SCRIPTED_FOR: dict[str, object] = {
    "LLM_BACKEND": "rules",
    "REPLY_WAIT_DAYS": 7,
    "MAX_REAUDITS": 3,
    "REPLY_CONFIDENCE_THRESHOLD": 0.7,
    "REPLY_ESCALATION_THRESHOLD": None,
    "REPLY_REVIEW_THRESHOLD": None,
    "DEFAULT_MAX_COMMUTE_MILES": 50,
    "COMMUTE_CIRCUITY_FACTOR": 1.2,
    "SHIFT_TOLERANCE_MINUTES": 30,
    "AUDIT_WINDOW_DAYS": 7,
}

Day = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
DAYS: tuple[Day, ...] = get_args(Day)


class HistoryRefused(Exception):
    """The history cannot be played here; nothing was written."""


class ScenarioError(Exception):
    """The story expected something the workflow did not do (a scenario bug)."""


# --- The scenario file -----------------------------------------------------------------------


class When(BaseModel):
    """A moment of the quarter: a day of a week before this one, at a local time."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    weeks_ago: int = Field(ge=1)
    day: Day
    at: dt.time

    def moment(self, this_monday: dt.date) -> dt.datetime:
        day = this_monday - dt.timedelta(weeks=self.weeks_ago, days=-DAYS.index(self.day))
        return local(day, self.at)


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    sender: str = Field(alias="from")  # an employee ID
    text: str
    # An out-of-office answer: marked as one, so the inbound path sets it aside.
    auto_reply: bool = False


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    employee_id: str
    action: str  # a review kind (cases.kinds)
    decision: Literal["approve", "reject"]
    by: str = "coordinator"
    note: str = ""
    bucket: str = ""  # label_reply: what the person read the reply as
    rulings: dict[str, Literal["pass", "fail"]] = Field(default_factory=dict)
    text: str = ""  # review_email: the reviewer's own words instead of the draft

    @field_validator("action")
    @classmethod
    def _a_review_kind(cls, action: str) -> str:
        try:
            return payload_class(action).kind
        except UnknownKind as exc:
            raise ValueError(str(exc)) from None

    def edits(self) -> dict[str, Any]:
        edits: dict[str, Any] = {}
        if self.bucket:
            edits["bucket"] = self.bucket
        if self.rulings:
            edits["rulings"] = dict(self.rulings)
        if self.text:
            edits["text"] = self.text
        return edits


class Event(When):
    """One thing that happens: HR's file changes, a rider writes, or a person decides."""

    roster: dict[str, dict[str, Any]] | None = None  # employee ID → the columns that change
    reply: Reply | None = None
    decide: Decision | None = None

    @model_validator(mode="after")
    def _one_thing(self) -> "Event":
        if sum(part is not None for part in (self.roster, self.reply, self.decide)) != 1:
            raise ValueError("an event is exactly one of roster, reply or decide")
        return self


class Story(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str
    events: list[Event]


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    about: str = ""
    weeks: int = Field(ge=1, le=52)
    audit_at: dt.time  # every Monday, the quarter's vanpools are audited
    sweep_at: dt.time  # every day, the deadline sweep runs
    vanpools: list[str]
    roster_at: When  # HR's file first lists the quarter's riders
    riders: list[dict[str, Any]]
    stories: list[Story]

    @model_validator(mode="after")
    def _inside_the_quarter(self) -> "Scenario":
        late = [
            event
            for story in self.stories
            for event in story.events
            if event.weeks_ago > self.weeks
        ]
        if late or self.roster_at.weeks_ago > self.weeks + 1:
            raise ValueError(f"every event falls within the {self.weeks} weeks of the quarter")
        return self

    @property
    def employee_ids(self) -> list[str]:
        return [str(row["employee_id"]) for row in self.riders]


def load_scenario(path: Path = DEMO_HISTORY) -> Scenario:
    return Scenario.model_validate(json.loads(path.read_text(encoding="utf-8")))


# --- What the quarter produced ---------------------------------------------------------------


@dataclass(frozen=True)
class HistoryResult:
    built: bool  # False: it was already there, and nothing changed
    weeks: int
    first_day: dt.date | None = None
    last_day: dt.date | None = None
    opened: int = 0
    resolved: int = 0
    cancelled: int = 0
    dismissed: int = 0
    emails: int = 0
    replies: int = 0
    decisions: int = 0


def unsuitable_settings() -> list[str]:
    """The settings that differ from those the story is scripted for, as NAME=value."""
    return [
        f"{name}={getattr(settings, name)}"
        for name, value in SCRIPTED_FOR.items()
        if getattr(settings, name) != value
    ]


def history_present(scenario: Scenario) -> bool:
    """Built before: its riders are on the roster (they arrive with its first step)."""
    return Employee.objects.filter(employee_id__in=scenario.employee_ids).exists()


def build_history(
    scenario: Scenario | None = None, *, today: dt.date | None = None
) -> HistoryResult:
    """Play the quarter before the week of ``today``, once; a second call changes nothing."""
    scenario = scenario or load_scenario()
    if history_present(scenario):
        return HistoryResult(built=False, weeks=scenario.weeks)
    unsuitable = unsuitable_settings()
    if unsuitable:
        raise HistoryRefused(
            "it is scripted for the offline defaults, and here " + ", ".join(unsuitable)
        )
    this_monday = monday_of(today or timezone.localdate())
    with run_inline():
        play(timeline(scenario, this_monday))
    return summarise(scenario, this_monday)


def monday_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def summarise(scenario: Scenario, this_monday: dt.date) -> HistoryResult:
    """Count what the workflow wrote in the quarter (a few queries)."""
    start = scenario.roster_at.moment(this_monday)
    end = local(this_monday, dt.time())
    window = {"gte": start, "lt": end}
    in_window = {f"created_at__{op}": value for op, value in window.items()}
    closed_in_window = {f"closed_at__{op}": value for op, value in window.items()}
    cases = Case.objects.aggregate(
        opened=Count("pk", filter=Q(**in_window)),
        resolved=Count("pk", filter=Q(outcome=Case.Outcome.RESOLVED, **closed_in_window)),
        cancelled=Count("pk", filter=Q(outcome=Case.Outcome.CANCELLED, **closed_in_window)),
        dismissed=Count("pk", filter=Q(outcome=Case.Outcome.DISMISSED, **closed_in_window)),
    )
    messages = Message.objects.filter(**in_window).aggregate(
        emails=Count("pk", filter=Q(direction=Message.Direction.OUTBOUND)),
        replies=Count("pk", filter=Q(direction=Message.Direction.INBOUND)),
    )
    decisions = PendingAction.objects.filter(
        decided_by__isnull=False, decided_at__gte=start, decided_at__lt=end
    ).count()
    return HistoryResult(
        built=True,
        weeks=scenario.weeks,
        first_day=this_monday - dt.timedelta(weeks=scenario.weeks),
        last_day=this_monday - dt.timedelta(days=1),
        decisions=decisions,
        **cases,
        **messages,
    )


# --- The timeline ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    at: dt.datetime
    # At one moment: HR's file first, then the audit, the sweep, riders, people.
    rank: int
    run: Callable[[], object]
    what: str

    def sort_key(self) -> tuple[dt.datetime, int]:
        return (self.at, self.rank)


def timeline(scenario: Scenario, this_monday: dt.date) -> list[Step]:
    """Every step of the quarter in the order it happens (ties keep the file's order)."""
    roster = RosterBook(scenario.riders)
    steps = [
        Step(
            scenario.roster_at.moment(this_monday),
            0,
            lambda: roster.import_rows(scenario.employee_ids, "HR roster: the quarter's riders"),
            "HR roster",
        )
    ]
    steps += weekly_audits(scenario, this_monday)
    steps += daily_sweeps(scenario, this_monday)
    for story in scenario.stories:
        steps += [story_step(event, roster, this_monday) for event in story.events]
    # sorted() is stable: steps at one moment and rank keep the file's order.
    return sorted(steps, key=Step.sort_key)


def weekly_audits(scenario: Scenario, this_monday: dt.date) -> list[Step]:
    vanpools = list(scenario.vanpools)
    return [
        Step(
            When(weeks_ago=weeks_ago, day="Mon", at=scenario.audit_at).moment(this_monday),
            1,
            lambda: audit_vanpools(vanpools),
            "weekly audit",
        )
        for weeks_ago in range(scenario.weeks, 0, -1)
    ]


def daily_sweeps(scenario: Scenario, this_monday: dt.date) -> list[Step]:
    first = this_monday - dt.timedelta(weeks=scenario.weeks)
    days = (first + dt.timedelta(days=n) for n in range(scenario.weeks * 7))
    return [
        Step(local(day, scenario.sweep_at), 2, process_timeouts, "deadline sweep") for day in days
    ]


def local(day: dt.date, time: dt.time) -> dt.datetime:
    """``time`` on ``day`` in the program's time zone (TIME_ZONE)."""
    return timezone.make_aware(dt.datetime.combine(day, time))


def story_step(event: Event, roster: "RosterBook", this_monday: dt.date) -> Step:
    at = event.moment(this_monday)
    if event.roster is not None:
        changes = event.roster
        source = f"HR roster of {at:%b} {at.day}"
        return Step(at, 0, lambda: roster.change(changes, source), "roster")
    if event.reply is not None:
        reply = event.reply
        return Step(at, 3, lambda: deliver_reply(reply), f"reply from {reply.sender}")
    assert event.decide is not None  # the validator allows exactly one of the three
    decision = event.decide
    return Step(at, 4, lambda: decide(decision), f"{decision.action} {decision.employee_id}")


def play(steps: list[Step]) -> None:
    for step in steps:
        # tick=False: everything a step sets off (sends, re-audits, the
        # supervisor) happens at its moment, as inline tasks would.
        with time_machine.travel(step.at, tick=False):
            try:
                step.run()
            except Exception as exc:  # say where in the story it broke, then let it out
                exc.add_note(f"demo history: {step.what} at {step.at:%Y-%m-%d %H:%M}")
                raise


# --- HR's roster -----------------------------------------------------------------------------


class RosterBook:
    """HR's record of the quarter's riders, sent to the importer as it changes."""

    def __init__(self, riders: list[dict[str, Any]]) -> None:
        self.rows = {str(row["employee_id"]): dict(row) for row in riders}

    def import_rows(self, employee_ids: list[str], source: str) -> None:
        import_data({"employees": [self.rows[e] for e in employee_ids]}, source=source)

    def change(self, changes: dict[str, dict[str, Any]], source: str) -> None:
        """Send only what changed (and the columns every row needs): a seat is
        never given back by a row that merely repeats its old vanpool."""
        rows = []
        for employee_id, columns in changes.items():
            current = self.rows[employee_id]
            current.update(columns)
            rows.append({name: current[name] for name in IDENTITY_COLUMNS} | columns)
        import_data({"employees": rows}, source=source)


# --- A rider writes --------------------------------------------------------------------------


def deliver_reply(reply: Reply) -> Message:
    """The rider answers our latest email to them, as their mail program would send it."""
    employee = Employee.objects.get(employee_id=reply.sender)
    answered = (
        Message.objects.filter(direction=Message.Direction.OUTBOUND, employee=employee)
        .order_by("-created_at", "-pk")
        .first()
    )
    if answered is None:
        raise ScenarioError(f"{reply.sender} replies, but nobody has written to them")
    message, _ = receive_raw(reply_email(employee, answered, reply), provider=PROVIDER)
    return message


def reply_email(employee: Employee, answered: Message, reply: Reply) -> bytes:
    now = timezone.now()
    mail = EmailMessage()
    mail["From"] = email.utils.formataddr((employee.full_name, employee.email))
    mail["To"] = answered.reply_to
    prefix = "Automatic reply: " if reply.auto_reply else "Re: "
    mail["Subject"] = prefix + answered.subject
    mail["Date"] = email.utils.format_datetime(now)
    # Deterministic: the same reply delivered twice is one message (the inbound dedupe).
    domain = employee.email.rpartition("@")[2] or "mail.example"
    mail["Message-ID"] = f"<{employee.employee_id.lower()}.{now:%Y%m%dT%H%M}@{domain}>"
    mail["In-Reply-To"] = f"<{answered.rfc_message_id}>"
    mail["References"] = f"<{answered.rfc_message_id}>"
    if reply.auto_reply:
        mail["Auto-Submitted"] = "auto-replied"
        mail.set_content(reply.text + "\n")
    else:
        mail.set_content(f"{reply.text}\n\n{quoted(answered)}")
    return mail.as_bytes()


def quoted(answered: Message) -> str:
    """The first lines of our email under the reply, as mail programs quote it."""
    sent = timezone.localtime(answered.sent_at or answered.created_at)
    lines = [line for line in answered.text_body.splitlines() if line.strip()][:4]
    header = f"On {sent:%a, %b} {sent.day}, {sent:%Y at %H:%M} {answered.from_email} wrote:"
    return "\n".join([header, *(f"> {line}" for line in lines)])


# --- A person decides ------------------------------------------------------------------------


# Cards that wait only when the reader was unsure: a retrained reader may read the
# scripted reply confidently, and then there is nothing for the person to decide.
ONLY_IF_UNSURE = {LabelReply.kind}


def decide(decision: Decision) -> PendingAction | None:
    action = waiting_action(decision.action, decision.employee_id)
    if action is None and decision.action in ONLY_IF_UNSURE:
        return None
    if action is None:
        raise ScenarioError(
            f"no {decision.action} is waiting for {decision.employee_id} at {timezone.now()}"
        )
    user = decider(decision.by)
    if decision.decision == "reject":
        return reject(action, by=user, note=decision.note)
    return approve(action, by=user, note=decision.note, edits=decision.edits())


def waiting_action(kind: str, employee_id: str) -> PendingAction | None:
    """The oldest card of ``kind`` on the queue about ``employee_id``."""
    waiting = PendingAction.objects.filter(kind=kind, status=PendingAction.Status.PENDING)
    for action in waiting.order_by("created_at", "pk"):
        if employee_id in action.ask.employee_ids():
            return action
    return None


def decider(username: str) -> User:
    try:
        return User.objects.get(username=username)
    except User.DoesNotExist:
        raise ScenarioError(f"no user {username!r} to decide (load_demo creates them)") from None
