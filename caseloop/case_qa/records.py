"""The case's citeable records: each one a key, a label and the text the faithfulness check reads.

The Q&A loads nothing itself: it reads the records the case page already
loaded (``dashboard.queries.case_records``), through the ``CaseRecords``
protocol below, so a question costs no second round of queries.
"""

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from django.conf import settings
from django.utils import timezone

from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import EmailThread, Message
from vanpools.models import Employee

Link = Callable[[str], str]


class CaseRecords(Protocol):
    """What the Q&A reads about one case (``dashboard.queries.CaseRecords`` is one)."""

    @property
    def case(self) -> Case: ...
    @property
    def latest(self) -> dict[str, Verification]: ...
    @property
    def thread(self) -> EmailThread | None: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def events(self) -> list[CaseEvent]: ...
    @property
    def pending(self) -> list[PendingAction]: ...
    @property
    def employees(self) -> dict[str, Employee]: ...


def no_link(key: str) -> str:
    """Records shown nowhere: the citation has a label and no link."""
    return ""


@dataclass(frozen=True)
class Record:
    """One citeable record of the case, as the text the faithfulness check reads."""

    key: str  # "case", "verification:12", "MSG-…", "event:40", "employee:EMP-1", "policy"
    label: str
    text: str
    href: str = ""


def iso(value: dt.datetime | dt.date | None) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")
    return value.isoformat()


def build_records(records: CaseRecords, link: Link = no_link) -> dict[str, Record]:
    """Every record of the case by key, each linked to where ``link`` says it is shown."""
    case = records.case
    found: dict[str, Record] = {}

    def add(record: Record) -> None:
        found[record.key] = replace(record, href=link(record.key))

    flags = case.meta.get("rider_flags", {})
    flagged = "; ".join(
        f"{emp}: " + ", ".join(f"{check} {verdict}" for check, verdict in sorted(checks.items()))
        for emp, checks in sorted(flags.items())
    )
    pending = "; ".join(pending_text(action) for action in records.pending) or "none"
    add(
        Record(
            "case",
            f"{case.case_id} summary",
            f"{case.case_id} vanpool {case.vanpool.vanpool_id} ({case.vanpool.name}, "
            f"work site {case.vanpool.work_site}). Status {case.status}"
            f"{' outcome ' + case.outcome if case.outcome else ''}. "
            f"Reason {case.reason or 'none'}; failed checks "
            f"{', '.join(case.failed_checks) or 'none'}. "
            f"Flagged riders: {flagged or 'none'}. Opened {iso(case.created_at)}. "
            f"Reply deadline {iso(case.reply_deadline) or 'none'}. "
            f"Re-audits {case.reaudit_count}. Closed {iso(case.closed_at) or 'no'}. "
            f"Waiting for a person: {pending}. Details: {case.meta.get('details', '')}",
        )
    )
    vanpool = case.vanpool
    add(
        Record(
            f"vanpool:{vanpool.vanpool_id}",
            f"vanpool {vanpool.vanpool_id}",
            f"{vanpool.vanpool_id} {vanpool.name}, work site {vanpool.work_site}, pickup "
            f"{vanpool.pickup_address} {vanpool.pickup_zip}; limit {vanpool.effective_max_miles} "
            f"commute miles; status {vanpool.status}.",
        )
    )
    add(
        Record(
            "policy",
            "program policy",
            f"Riders get {settings.REPLY_WAIT_DAYS} days to reply. With no reply by the "
            "deadline the case is re-audited: a pass closes it resolved, a failure moves it "
            f"to pre-cancel. At most {settings.MAX_REAUDITS} re-audits per case. In "
            "pre-cancel a coordinator approves or rejects each rider's cancellation: approve "
            "cancels the seat and closes the case cancelled, reject closes it dismissed.",
        )
    )
    for verification in records.latest.values():
        add(
            Record(
                f"verification:{verification.pk}",
                f"{verification.check_type} check ({verification.verdict})",
                f"{verification.check_type} check verdict {verification.verdict}, confidence "
                f"{verification.confidence}/5, {verification.backend} {verification.model}, "
                f"audit date {iso(verification.audit_date)}. {verification.reasoning} "
                f"Evidence: {json.dumps(verification.evidence, ensure_ascii=False)}",
            )
        )
    for message in records.messages:
        who = message.employee.employee_id if message.employee is not None else message.from_email
        stamp = message.received_at or message.sent_at or message.created_at
        add(
            Record(
                message.message_id,
                f"{message.message_id} ({message.direction})",
                f"{message.message_id} {message.direction} {message.status} "
                f"{'from' if message.direction == 'inbound' else 'to'} {who}, "
                f"{iso(stamp)}, kind {message.kind or 'email'}, template "
                f"{message.template or 'none'}, bucket {message.bucket or 'none'}, flags "
                f"{', '.join(message.flags) or 'none'}. Subject: {message.subject}\n"
                f"{message.readable_text()}",
            )
        )
    for event in records.events:
        add(
            Record(
                f"event:{event.pk}",
                f"event {iso(event.created_at)}",
                f"{iso(event.created_at)} {event.actor}: {event.from_status or 'new'} → "
                f"{event.to_status}. {event.note} {json.dumps(event.data, ensure_ascii=False)}",
            )
        )
    for employee in records.employees.values():
        shift = employee.shift
        add(
            Record(
                f"employee:{employee.employee_id}",
                f"employee {employee.employee_id}",
                f"{employee.employee_id} {employee.full_name}, {employee.title}, work site "
                f"{employee.work_site}, home ZIP {employee.home_zip}, status {employee.status}, "
                f"{employee.time_type}, shift "
                f"{f'{shift.shift_id} {shift.name} {shift.summary}' if shift else 'none'}.",
            )
        )
    return found


def pending_text(action: PendingAction) -> str:
    who = action.ask.about()
    return f"{action.get_kind_display()}{' for ' + who if who else ''}"
