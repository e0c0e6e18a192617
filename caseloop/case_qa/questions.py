"""Reading the question: is it about this case (scope), and what does it ask (intent)?

A question that names an ID or a person not on the case, or asks the
assistant to act, is declined before any backend sees it.
"""

import re

from django.db.models import Q

from caseloop.case_qa.records import CaseRecords
from vanpools.models import Employee

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


SUGGESTIONS = (
    "Why did this case fail?",
    "What did the rider say?",
    "What was sent?",
    "What happens next?",
    "When is the deadline?",
)
