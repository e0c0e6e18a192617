"""Ask about this case: answers from the case's own records, with citations, checked first.

``answer_question(records, question)``:

1. Scope: a question naming an employee, vanpool, case or message that is not
   on this case, or asking the assistant to act, is declined before any
   backend sees it.
2. The rules backend answers from templates filled with the records' values
   (why did it fail, what did the rider say, what was sent, what happens
   next, the deadline, who is flagged, the history). With
   ``LLM_BACKEND=openai`` the model answers from the same records as JSON
   data and must cite record keys; any client failure falls back to rules.
3. Faithfulness: every ID, date, time and number in the answer must appear in
   the records it cites, and every citation must be one of the case's
   records. Otherwise the answer is replaced by a fallback that lists the
   evidence itself.

Every answer is traced as an AgentRun on the case (agent ``case_qa``).
"""

import datetime as dt
import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from django.conf import settings
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field

from agents import llm
from agents.faithfulness import check_faithfulness
from agents.tracing import RunTrace, save_trace_tree, timed
from cases.models import Case, PendingAction
from dashboard.queries import CaseRecords, message_text
from outreach.replies.classify import strip_quoted
from vanpools.models import Employee

AGENT = "case_qa"
PROMPT = ("case_qa", "v1")
EXCERPT = 280

Status = Literal["answered", "fallback", "declined"]


# --- Records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One citeable record of the case, as the text the faithfulness check reads."""

    key: str  # "case", "verification:12", "MSG-…", "event:40", "employee:EMP-1", "policy"
    label: str
    text: str
    href: str = ""


class Citation(BaseModel):
    model_config = ConfigDict(frozen=True)
    key: str
    label: str
    href: str = ""


class CaseAnswer(BaseModel):
    status: Status
    intent: str = ""
    sentences: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    backend: str = "rules"
    note: str = ""


class ModelCaseAnswer(BaseModel):
    """All the model may answer: in scope or not, the answer, and the record keys it cites."""

    model_config = ConfigDict(extra="forbid")
    in_scope: bool
    answer: str
    citations: list[str]


def _iso(value: dt.datetime | dt.date | None) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")
    return value.isoformat()


def build_records(records: CaseRecords) -> dict[str, Record]:
    case = records.case
    page = reverse("case-detail", args=[case.case_id])
    found: dict[str, Record] = {}

    def add(record: Record) -> None:
        found[record.key] = record

    flags = case.meta.get("rider_flags", {})
    flagged = "; ".join(
        f"{emp}: " + ", ".join(f"{check} {verdict}" for check, verdict in sorted(checks.items()))
        for emp, checks in sorted(flags.items())
    )
    pending = "; ".join(_pending_text(action) for action in records.pending) or "none"
    add(
        Record(
            "case",
            f"{case.case_id} summary",
            f"{case.case_id} vanpool {case.vanpool.vanpool_id} ({case.vanpool.name}, "
            f"work site {case.vanpool.work_site}). Status {case.status}"
            f"{' outcome ' + case.outcome if case.outcome else ''}. "
            f"Reason {case.reason or 'none'}; failed checks "
            f"{', '.join(case.failed_checks) or 'none'}. "
            f"Flagged riders: {flagged or 'none'}. Opened {_iso(case.created_at)}. "
            f"Reply deadline {_iso(case.reply_deadline) or 'none'}. "
            f"Re-audits {case.reaudit_count}. Closed {_iso(case.closed_at) or 'no'}. "
            f"Waiting for a person: {pending}. Details: {case.meta.get('details', '')}",
            f"{page}#summary",
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
            reverse("vanpool-detail", args=[vanpool.vanpool_id]),
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
                f"audit date {_iso(verification.audit_date)}. {verification.reasoning} "
                f"Evidence: {json.dumps(verification.evidence, ensure_ascii=False)}",
                f"{page}#verification-{verification.pk}",
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
                f"{_iso(stamp)}, kind {message.kind or 'email'}, template "
                f"{message.template or 'none'}, bucket {message.bucket or 'none'}, flags "
                f"{', '.join(message.flags) or 'none'}. Subject: {message.subject}\n"
                f"{message_text(message)}",
                f"{page}#{message.message_id}",
            )
        )
    for event in records.events:
        add(
            Record(
                f"event:{event.pk}",
                f"event {_iso(event.created_at)}",
                f"{_iso(event.created_at)} {event.actor}: {event.from_status or 'new'} → "
                f"{event.to_status}. {event.note} {json.dumps(event.data, ensure_ascii=False)}",
                f"{page}#event-{event.pk}",
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
                reverse("employee-detail", args=[employee.employee_id]),
            )
        )
    return found


def _pending_text(action: PendingAction) -> str:
    who = action.ask.about()
    return f"{action.get_kind_display()}{' for ' + who if who else ''}"


# --- Scope -----------------------------------------------------------------------------------

ID_TOKEN = re.compile(r"\b[A-Za-z]{1,8}-[A-Za-z0-9]*\d[A-Za-z0-9-]*\b")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")
ACTING = re.compile(
    r"\b(ignore (all|any|previous|the)|instructions|system prompt|approve|cancel (the|his|her|"
    r"their|this) seat|close (the|this) case|dismiss|send (an|the|a) email|delete)\b",
    re.IGNORECASE,
)
NOT_NAMES = {
    "I", "What", "Why", "When", "Who", "How", "Which", "Where", "Did", "Does", "Do", "Is",
    "Was", "Were", "The", "This", "That", "Has", "Have", "Can", "Could", "Will", "Would",
    "Should", "Tell", "Show", "Give", "Explain", "List", "Case", "Rider", "Riders", "Van",
    "Vanpool", "Email", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Monday", "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March",
    "April", "May", "June", "July", "August", "September", "October", "November", "December",
    "PTO", "HR", "ZIP", "OK",
}  # fmt: skip


def known_ids(records: CaseRecords) -> set[str]:
    case = records.case
    ids = {case.case_id, case.vanpool.vanpool_id, *records.employees}
    ids |= {m.message_id for m in records.messages}
    if records.thread is not None:
        ids.add(records.thread.thread_id)
    for verification in records.latest.values():
        for item in verification.evidence or []:
            if isinstance(item, dict):
                ids.add(str(item.get("employee_id", "")))
                ids |= {str(c.get("id", "")) for c in item.get("cites", []) if isinstance(c, dict)}
    return {i.upper() for i in ids if i}


def decline_reason(records: CaseRecords, question: str) -> str:
    """Why the question is out of bounds ("" when it may be answered)."""
    if ACTING.search(question):
        return (
            "I only answer questions from this case's records; I cannot act on it. "
            "Decisions are made in the review queue."
        )
    ids = known_ids(records)
    for token in ID_TOKEN.findall(question):
        if token.upper() not in ids and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", token):
            return f"{token} is not on this case, so I cannot answer about it here."
    names = {w for w in WORD.findall(question) if w[0].isupper() and w not in NOT_NAMES}
    if names:
        on_case = {
            part.lower() for e in records.employees.values() for part in (e.first_name, e.last_name)
        }
        strangers = [n for n in names if n.lower() not in on_case]
        if (
            strangers
            and Employee.objects.filter(
                Q(first_name__in=strangers) | Q(last_name__in=strangers)
            ).exists()
        ):
            return (
                f"{', '.join(sorted(strangers))} is not a rider on this case; I only answer "
                "about the people and records on this case."
            )
    return ""


# --- Intents ---------------------------------------------------------------------------------

INTENTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "rider_said",
        re.compile(
            r"\b(say|said|says|saying|repl(y|ied|ies)|respond(ed)?|response|answer(ed)?|"
            r"wr[io]te back|hear[d]? (back|from)|complain(ed|t)?)\b"
        ),
    ),
    (
        "what_sent",
        re.compile(
            r"\b(sent|send|emailed|e-?mails?|outreach|notif(y|ied)|contact(ed)?|letters?|"
            r"messages?|wrote to|told)\b"
        ),
    ),
    ("deadline", re.compile(r"\b(deadline|due|by when|how long|how much time|when)\b")),
    (
        "next_step",
        re.compile(r"\b(next|happens?|going to|now|waiting|pending|status|decid\w*|outcome)\b"),
    ),
    ("history", re.compile(r"\b(history|timeline|happened|events?|so far|re-?audit\w*)\b")),
    ("riders", re.compile(r"\b(who|which riders?|flagged|riders?)\b")),
    (
        "why_failed",
        re.compile(
            r"\b(why|fail\w*|flag\w*|reasons?|wrong|mismatch\w*|problem|far|distance|miles?|"
            r"shifts?|schedules?|hours|evidence|live|lives|home)\b"
        ),
    ),
]


def detect_intent(question: str) -> str:
    text = question.lower()
    for name, pattern in INTENTS:
        if pattern.search(text):
            return name
    return ""


REASONS: dict[str, str] = {
    Case.Reason.SHIFT: "a shift mismatch",
    Case.Reason.LOCATION: "a location mismatch",
    Case.Reason.BOTH: "a shift and a location mismatch",
    Case.Reason.UNKNOWN: "a check the rules could not decide",
}

SUGGESTIONS = (
    "Why did this case fail?",
    "What did the rider say?",
    "What was sent?",
    "What happens next?",
    "When is the deadline?",
)


# --- Rules backend ---------------------------------------------------------------------------


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


def _evidence_for(records: CaseRecords, check: str, employee_id: str, kind: str) -> dict:
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
        text = " ".join(strip_quoted(message_text(message)).split())
        excerpt = text if len(text) <= EXCERPT else text[:EXCERPT].rsplit(" ", 1)[0] + " …"
        sentences.append(
            f"{who} replied on {_iso(stamp)} ({message.message_id}{label}): “{excerpt}”"
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
            f"{_iso(message.sent_at or message.created_at)}: {message.message_id} to {who}, "
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
                f"Replies are due by {_iso(case.reply_deadline)}.",
                "With no reply by then the case is re-audited: a pass closes it resolved, a "
                "failure moves it to pre-cancel, where a coordinator decides.",
            ],
            ["case", "policy"],
        )
    if case.status == Case.Status.CLOSED:
        return Draft(
            [f"No deadline applies: the case closed {case.outcome} on {_iso(case.closed_at)}."],
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
            [f"Nothing: the case closed {case.outcome} on {_iso(case.closed_at)}."], ["case"]
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
        deadline = _iso(case.reply_deadline) or "the deadline"
        return Draft(
            [
                f"The case waits for the flagged riders' replies until {deadline}.",
                "A reply is read and acted on; with none by then the case is re-audited: a pass "
                "closes it resolved, a failure moves it to pre-cancel, where a coordinator "
                "decides.",
            ],
            ["case", "policy"],
        )
    waiting = [_pending_text(action) for action in records.pending]
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
        sentences.append(f"{_iso(event.created_at)}, {event.actor} ({move}): {note}")
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


# --- Faithfulness ----------------------------------------------------------------------------


def unsupported_claims(answer: str, cited: list[Record]) -> list[str]:
    """The IDs, dates, times and numbers in ``answer`` that no cited record contains."""
    result = check_faithfulness(answer, [record.text for record in cited])
    return [claim.text for claim in result.unsupported]


def fallback(records: CaseRecords, found: dict[str, Record], why: str, backend: str) -> CaseAnswer:
    """The evidence itself, when an answer could not be checked against it."""
    sentences = [
        "I could not check an answer against this case's records, so here is the evidence instead."
    ]
    cites = ["case"]
    for verification in records.latest.values():
        sentences.append(
            f"{verification.check_type} ({verification.verdict}): {verification.reasoning}"
        )
        cites.append(f"verification:{verification.pk}")
    return CaseAnswer(
        status="fallback",
        sentences=sentences,
        citations=_citations(found, cites),
        backend=backend,
        note=why,
    )


def _citations(found: dict[str, Record], keys: list[str]) -> list[Citation]:
    seen: list[str] = []
    for key in keys:
        if key in found and key not in seen:
            seen.append(key)
    return [Citation(key=k, label=found[k].label, href=found[k].href) for k in seen]


def checked(
    records: CaseRecords,
    found: dict[str, Record],
    sentences: list[str],
    keys: list[str],
    *,
    intent: str,
    backend: str,
) -> CaseAnswer:
    unknown = [key for key in keys if key not in found]
    cited = [found[key] for key in keys if key in found]
    problems = unknown or unsupported_claims(" ".join(sentences), cited)
    if not cited or problems:
        why = f"unsupported by the cited records: {', '.join(problems[:5]) or 'no citations'}"
        return fallback(records, found, why, backend)
    return CaseAnswer(
        status="answered",
        intent=intent,
        sentences=sentences,
        citations=_citations(found, keys),
        backend=backend,
    )


# --- Entry point -----------------------------------------------------------------------------


def answer_question(records: CaseRecords, question: str) -> CaseAnswer:
    """Answer ``question`` about the case from its records, and trace the answer."""
    case = records.case
    backend = llm.get_backend()
    trace = RunTrace(
        agent=AGENT,
        backend=settings.LLM_BACKEND,
        input={"case_id": case.case_id, "question": question},
    )
    with timed(trace):
        answer = _answer(records, question, backend, trace)
    trace.output = answer.model_dump(mode="json")
    save_trace_tree(trace, vanpool_pk=case.vanpool_id, case=case)
    return answer


def _answer(records: CaseRecords, question: str, backend: object, trace: RunTrace) -> CaseAnswer:
    why_not = decline_reason(records, question)
    if why_not:
        return CaseAnswer(status="declined", sentences=[why_not], backend="rules")
    found = build_records(records)
    intent = detect_intent(question)
    if isinstance(backend, llm.OpenAIClient):
        answer = _ask_model(backend, records, found, question, intent, trace)
        if answer is not None:
            return answer
    if not intent:
        return CaseAnswer(
            status="declined",
            sentences=[
                "I answer questions about this case from its own records. Try: "
                + " / ".join(SUGGESTIONS)
            ],
            backend="rules",
        )
    draft = rules_answer(records, found, intent, question)
    return checked(records, found, draft.sentences, draft.cites, intent=intent, backend="rules")


def _ask_model(
    client: llm.OpenAIClient,
    records: CaseRecords,
    found: dict[str, Record],
    question: str,
    intent: str,
    trace: RunTrace,
) -> CaseAnswer | None:
    """The model's answer, checked; None when the client failed (rules answer instead)."""
    prompt = llm.load_prompt(*PROMPT)
    payload = [{"key": r.key, "label": r.label, "text": r.text} for r in found.values()]
    user = "\n\n".join(
        [llm.data_block("case_records", payload), llm.data_block("question", {"text": question})]
    )
    try:
        call = client.structured(AGENT, prompt.version, prompt.text, user, ModelCaseAnswer)
    except llm.ModelError as error:
        for name, value in error.trace_fields().items():
            setattr(trace, name, value)
        trace.model_calls += 1
        return None
    for name, value in call.trace_fields().items():
        setattr(trace, name, value)
    trace.model_calls += 1
    parsed = call.parsed
    if not parsed.in_scope:
        return CaseAnswer(
            status="declined",
            sentences=["That question is outside this case's records, so I cannot answer it."],
            backend="openai",
        )
    sentences = [line.strip() for line in parsed.answer.splitlines() if line.strip()]
    return checked(
        records,
        found,
        sentences,
        list(parsed.citations),
        intent=intent or "model",
        backend="openai",
    )


__all__ = ["CaseAnswer", "answer_question", "build_records", "unsupported_claims"]
