"""Faithfulness: what a text an agent wrote may cite, and whether it cites only that.

Every specialist reasoning and every answer to a rider is checked against
its evidence (``agents.faithfulness``); whatever kind of item wrote it.
"""

import datetime as dt
from typing import Any

from django.conf import settings

from agents.faithfulness import check_faithfulness
from audit.location import NEAR_LIMIT_MILES
from evals.harness.results import Checked


def specialist_evidence(
    evidence: Any, facts: dict, audit_date: dt.date, employee_ids: list[str]
) -> list[Any]:
    """What a specialist's reasoning may cite: its evidence items, its input, its parameters.

    The audit window, tolerance and limits are inputs the rules are run
    with, and counts of riders are counts of the evidence; anything else in
    the reasoning must come from the records.
    """
    window_end = audit_date + dt.timedelta(days=settings.AUDIT_WINDOW_DAYS - 1)
    riders = len(facts.get("riders", []))
    return [
        evidence,
        facts,
        employee_ids,
        {
            "audit_window": [audit_date.isoformat(), window_end.isoformat()],
            "window_days": settings.AUDIT_WINDOW_DAYS,
            "tolerance_minutes": settings.SHIFT_TOLERANCE_MINUTES,
            "default_max_miles": settings.DEFAULT_MAX_COMMUTE_MILES,
            "circuity": settings.COMMUTE_CIRCUITY_FACTOR,
            "near_limit_miles": NEAR_LIMIT_MILES,
            "riders": riders,
            "other_riders": [riders - n for n in range(1, riders)],
        },
    ]


def policy_evidence() -> dict[str, Any]:
    """Program policy an answer may quote (DESIGN: answers come from facts and policy)."""
    return {
        "reply_wait_days": settings.REPLY_WAIT_DAYS,
        "reminder_days_before": settings.REMINDER_DAYS_BEFORE,
        "max_reaudits": settings.MAX_REAUDITS,
        "window_days": settings.AUDIT_WINDOW_DAYS,
        "tolerance_minutes": settings.SHIFT_TOLERANCE_MINUTES,
        "default_max_miles": settings.DEFAULT_MAX_COMMUTE_MILES,
        "circuity": settings.COMMUTE_CIRCUITY_FACTOR,
        "detour_percent": round((settings.COMMUTE_CIRCUITY_FACTOR - 1) * 100),
        "portal": settings.EMPLOYEE_PORTAL_URL,
        "program": settings.PROGRAM_NAME,
        "contact": settings.PROGRAM_CONTACT_EMAIL,
    }


def checked(what: str, text: str, evidence: Any) -> Checked:
    result = check_faithfulness(text, evidence)
    return Checked(
        what=what,
        text=text,
        faithful=result.faithful,
        unsupported=[claim.text for claim in result.unsupported],
    )
