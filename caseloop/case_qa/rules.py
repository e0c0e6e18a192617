"""The rules backend: an answer per intent, from templates filled with the records' values.

Each handler returns a ``Draft``: the sentences and the keys of the records
they came from, which ``answer.checked`` then holds to those records.
"""

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings

from caseloop.case_qa.questions import WORD
from caseloop.case_qa.records import CaseRecords, Record, iso, pending_text
from cases.models import Case
from outreach.replies.own_words import strip_quoted

EXCERPT = 280

REASONS: dict[str, str] = {
    Case.Reason.SHIFT: "a shift mismatch",
    Case.Reason.LOCATION: "a location mismatch",
    Case.Reason.BOTH: "a shift and a location mismatch",
    Case.Reason.UNKNOWN: "a check the rules could not decide",
}


@dataclass
class Draft:
    sentences: list[str]
    cites: list[str]


def number(value: object) -> str:
    try:
        return format(Decimal(str(value)).normalize(), "f")
    except (InvalidOperation, ValueError):
        return str(value)


def rules_answer(
    records: CaseRecords, found: dict[str, Record], intent: str, question: str
) -> Draft:
    handlers = {
        "why_failed": _why_failed,
        "rider_said": _rider_said,
        "what_sent": _what_sent,
        "deadline": _deadline,
        "next_step": _next_step,
        "history": _history,
        "riders": _riders,
    }
    return handlers[intent](records, found, question)


def _mentioned_employees(records: CaseRecords, question: str) -> set[str]:
    lowered = question.lower()
    words = {w.lower() for w in WORD.findall(question)}
    return {
        emp
        for emp, e in records.employees.items()
        if emp.lower() in lowered or e.first_name.lower() in words or e.last_name.lower() in words
    }


def _name(records: CaseRecords, employee_id: str) -> str:
    employee = records.employees.get(employee_id)
    return f"{employee_id} ({employee.full_name})" if employee else employee_id


def _evidence_for(records: CaseRecords, check: str, employee_id: str, kind: str) -> dict[str, Any]:
    verification = records.latest.get(check)
    for item in (verification.evidence if verification else []) or []:
        if isinstance(item, dict) and (item.get("employee_id"), item.get("type")) == (
            employee_id,
            kind,
        ):
            return item
    return {}


def _why_failed(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    case = records.case
    sentences = [
        f"{case.case_id} ({case.get_status_display()}) is about vanpool "
        f"{case.vanpool.vanpool_id}: {REASONS.get(case.reason, 'no finding recorded')}."
    ]
    cites = ["case"]
    flags = case.meta.get("rider_flags", {})
    wanted = _mentioned_employees(records, question) & set(flags) or set(flags)
    for employee_id in sorted(wanted):
        for check, verdict in sorted(flags[employee_id].items()):
            verification = records.latest.get(check)
            if verification is None:
                continue
            cites += [f"verification:{verification.pk}", f"employee:{employee_id}"]
            unknown = _evidence_for(records, check, employee_id, "unknown_input")
            if verdict == "unknown" or unknown:
                sentences.append(
                    f"The rules could not decide the {check} check for "
                    f"{_name(records, employee_id)}: "
                    f"{unknown.get('reason', 'its input could not be read')}"
                    + (f" (“{unknown['value']}”)." if unknown.get("value") else ".")
                )
            elif check == "location":
                item = _evidence_for(records, check, employee_id, "distance_check")
                if item:
                    sentences.append(
                        f"{_name(records, employee_id)} lives {number(item.get('miles'))} commute "
                        f"miles from {item.get('pickup')}'s pickup "
                        f"(home ZIP {item.get('home_zip')}); "
                        f"the limit is {number(item.get('threshold_miles'))} miles."
                    )
            elif check == "shift":
                item = _evidence_for(records, check, employee_id, "shift_summary")
                if item:
                    sentences.append(
                        f"{_name(records, employee_id)} works {item.get('rider_schedule')} (shift "
                        f"{item.get('shift_id')}); the van runs {item.get('van_schedule')}. "
                        f"{number(item.get('days_mismatched'))} of "
                        f"{number(item.get('days_compared'))} days compared did not match"
                        + (
                            f" ({number(item['days_on_leave'])} on leave)."
                            if item.get("days_on_leave")
                            else "."
                        )
                    )
    if len(sentences) == 1:
        for verification in records.latest.values():
            cites.append(f"verification:{verification.pk}")
            sentences.append(verification.reasoning)
    if case.status == Case.Status.CLOSED:
        sentences.append(f"The case is closed: {case.get_outcome_display()}.")
    return Draft(sentences, cites)


def _rider_said(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    wanted = _mentioned_employees(records, question)
    replies = [
        m
        for m in records.messages
        if m.direction == "inbound"
        and m.kind in ("", "reply")
        and (not wanted or (m.employee is not None and m.employee.employee_id in wanted))
    ]
    if not replies:
        who = ", ".join(sorted(wanted)) if wanted else "No rider"
        return Draft([f"{who} has not replied on this case's email thread."], ["case"])
    sentences, cites = [], []
    for message in replies[-5:]:
        who = (
            _name(records, message.employee.employee_id)
            if message.employee is not None
            else message.from_email
        )
        stamp = message.received_at or message.created_at
        label = f"; labelled {message.bucket}" if message.bucket else ""
        text = " ".join(strip_quoted(message.readable_text()).split())
        excerpt = text if len(text) <= EXCERPT else text[:EXCERPT].rsplit(" ", 1)[0] + " …"
        sentences.append(
            f"{who} replied on {iso(stamp)} ({message.message_id}{label}): “{excerpt}”"
        )
        cites.append(message.message_id)
        if message.employee is not None:
            cites.append(f"employee:{message.employee.employee_id}")
    return Draft(sentences, cites)


def _what_sent(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    sent = [m for m in records.messages if m.direction == "outbound"]
    if not sent:
        return Draft(["Nothing has been sent on this case yet."], ["case"])
    sentences, cites = [], []
    for message in sent[-6:]:
        who = (
            message.employee.employee_id if message.employee is not None else ", ".join(message.to)
        )
        bounced = ", bounced" if "bounced" in message.flags else ""
        sentences.append(
            f"{iso(message.sent_at or message.created_at)}: {message.message_id} to {who}, "
            f"“{message.subject}” ({message.status}{bounced})."
        )
        cites.append(message.message_id)
    if len(sent) > 6:
        sentences.insert(0, "The latest emails on the thread:")
    return Draft(sentences, cites)


def _deadline(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    case = records.case
    if case.reply_deadline:
        return Draft(
            [
                f"Replies are due by {iso(case.reply_deadline)}.",
                "With no reply by then the case is re-audited: a pass closes it resolved, a "
                "failure moves it to pre-cancel, where a coordinator decides.",
            ],
            ["case", "policy"],
        )
    if case.status == Case.Status.CLOSED:
        return Draft(
            [f"No deadline applies: the case closed {case.outcome} on {iso(case.closed_at)}."],
            ["case"],
        )
    if case.status == Case.Status.PRE_CANCEL:
        return Draft(
            [
                "There is no reply deadline now: the cancellation waits for a "
                "coordinator's decision."
            ],
            ["case", "policy"],
        )
    return Draft(
        [f"No reply deadline is set while the case is {case.get_status_display()}."], ["case"]
    )


def _next_step(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    case = records.case
    S = Case.Status
    if case.status == S.CLOSED:
        return Draft(
            [f"Nothing: the case closed {case.outcome} on {iso(case.closed_at)}."], ["case"]
        )
    if case.status == S.OPEN:
        return Draft(
            [
                "Outreach is next: the flagged riders are written to and given time to reply "
                f"(the policy allows {settings.REPLY_WAIT_DAYS} days)."
            ],
            ["case", "policy"],
        )
    if case.status == S.PENDING_REPLY:
        deadline = iso(case.reply_deadline) or "the deadline"
        return Draft(
            [
                f"The case waits for the flagged riders' replies until {deadline}.",
                "A reply is read and acted on; with none by then the case is re-audited: a pass "
                "closes it resolved, a failure moves it to pre-cancel, where a coordinator "
                "decides.",
            ],
            ["case", "policy"],
        )
    waiting = [pending_text(action) for action in records.pending]
    if case.status == S.PRE_CANCEL:
        return Draft(
            [
                "A coordinator decides each flagged rider's cancellation"
                + (f" ({'; '.join(waiting)})." if waiting else "."),
                "Approve cancels the seat and closes the case cancelled; reject closes it "
                "dismissed.",
            ],
            ["case", "policy"],
        )
    return Draft(
        [
            "A person must decide before the case moves on"
            + (f": {'; '.join(waiting)}." if waiting else ".")
        ],
        ["case"],
    )


def _history(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    events = records.events[-6:]
    if not events:
        return Draft(["No events are recorded on this case."], ["case"])
    sentences = []
    for event in events:
        move = (
            f"{event.from_status} → {event.to_status}"
            if event.from_status and event.from_status != event.to_status
            else event.to_status
        )
        note = event.note if len(event.note) <= 160 else event.note[:160].rsplit(" ", 1)[0] + " …"
        sentences.append(f"{iso(event.created_at)}, {event.actor} ({move}): {note}")
    return Draft(sentences, [f"event:{event.pk}" for event in events])


def _riders(records: CaseRecords, found: dict[str, Record], question: str) -> Draft:
    flags = records.case.meta.get("rider_flags", {})
    if not flags:
        return Draft(["No rider is flagged on this case."], ["case"])
    parts = [
        f"{_name(records, emp)}: "
        + ", ".join(f"{check} {verdict}" for check, verdict in sorted(checks.items()))
        for emp, checks in sorted(flags.items())
    ]
    return Draft(
        ["Flagged riders — " + "; ".join(parts) + "."],
        ["case", *(f"employee:{emp}" for emp in sorted(flags) if f"employee:{emp}" in found)],
    )
