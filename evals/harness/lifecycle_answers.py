"""Lifecycle scenarios with a share of the answering riders on the answer page.

``with_answers`` rewrites a scenario: each reply from a rider chosen to use the
page becomes an ``answer`` event (the choice that says what the reply said,
its words where the choice takes words). ``apply_answer`` carries one out
through ``outreach.answer_page.store_answer``, the function the page's POST
calls, with the link from the last email the rider received. The assumption
(which riders, which choice) is stated in ``evals/data/lifecycle/answer-mix.toml``.
"""

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core import mail

REPLY_BUCKETS = ("acknowledgment", "question", "update", "escalation")
LINK = re.compile(r"/answer/(CASE-[0-9A-F]{8})/([A-Za-z0-9_-]+)/")
# The choice that fits the rider's finding, for "updated".
UPDATED = {"location": "address_updated", "shift": "shift_updated"}


@dataclass(frozen=True)
class AnswerMix:
    file: Path
    shares: tuple[float, ...]
    choices: dict[str, str]


def read_answer_mix(path: Path) -> AnswerMix:
    data = tomllib.loads(path.read_text())
    choices = dict(data.get("choices", {}))
    unknown = set(choices) - set(REPLY_BUCKETS)
    if unknown:
        raise ValueError(f"{path}: [choices] names no reply label: {', '.join(sorted(unknown))}")
    shares = tuple(float(s) for s in data.get("shares", []))
    if not shares or any(not 0 <= s <= 1 for s in shares):
        raise ValueError(f"{path}: shares must be fractions from 0 to 1")
    return AnswerMix(path.parent / str(data["file"]), shares, choices)


def uses_the_page(case_id: str, employee_id: str, share: float) -> bool:
    """Whether this rider answers on the page at this share (nested: 50 % ⊂ 80 %)."""
    digest = hashlib.sha256(f"{case_id}|{employee_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def with_answers(case: dict[str, Any], share: float, choices: dict[str, str]) -> dict[str, Any]:
    """The scenario with the chosen riders' replies as answers on the page."""
    labels = list(case.get("expected", {}).get("buckets", []))
    inbound = [e for e in case["events"] if e["do"] in ("reply", "bounce")]
    if len(labels) != len(inbound):
        labels = [""] * len(inbound)  # unlabelled replies: nobody knows what they said
    label_of = {id(event): label for event, label in zip(inbound, labels, strict=True)}
    events = []
    for event in case["events"]:
        label = label_of.get(id(event), "")
        rider = event.get("from")
        if (
            event["do"] == "reply"
            and label in choices
            and rider
            and "from_email" not in event
            and uses_the_page(case["id"], rider, share)
        ):
            event = {
                "at": event["at"],
                "do": "answer",
                "from": rider,
                "choice": choices[label],
                "text": event["text"],
                "instead_of": event,
            }
        events.append(event)
    return {**case, "events": events, "answer_share": share}


def apply_answer(event: dict[str, Any], failing: list[str]) -> str:
    """The rider's answer through the page's own store; '' or why the page would not take it."""
    from outreach.answer_page import BY_NAME, Answer, Refused, TooManyAnswers, store_answer

    link = _latest_link(event["from"])
    if link is None:
        return "no email with a link reached the rider"
    name = event["choice"]
    if name == "updated":
        name = next((UPDATED[c] for c in failing if c in UPDATED), "")
    choice = BY_NAME.get(name)
    if choice is None:
        return f"no choice {event['choice']!r} fits the rider's finding"
    text = str(event.get("text", "")) if choice.takes_text else ""
    if choice.needs_text and not text.strip():
        return "the choice needs words and there are none"
    try:
        store_answer(link[0], link[1], Answer(choice, text))
    except Refused as refused:
        return f"the page refused the link ({refused.why})"
    except TooManyAnswers:
        return "too many answers within the hour"
    return ""


def _latest_link(employee_id: str) -> tuple[str, str] | None:
    from vanpools.models import Employee

    address = Employee.objects.get(employee_id=employee_id).email
    for message in reversed(mail.outbox):
        if address in message.to:
            found = LINK.search(str(message.body))
            if found:
                return found.group(1), found.group(2)
    return None
