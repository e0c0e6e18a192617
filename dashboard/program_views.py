"""The program page: how the audits are going, in numbers and a few bars."""

import datetime as dt

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from caseloop.lessons import false_positive_counts_by_pattern
from cases.models import Case
from dashboard import program
from dashboard.access import dashboard_view
from dashboard.charts.bars import bar_chart
from dashboard.charts.trend import TrendChart, TrendWeek, trend_chart

STATUS_TONES: dict[str, str] = {
    Case.Status.OPEN: "bar",
    Case.Status.PENDING_REPLY: "bar-muted",
    Case.Status.HITL_REVIEW: "bar-warn",
    Case.Status.PRE_CANCEL: "bar-danger",
}
AGE_TONES = ("bar-ok", "bar", "bar-warn", "bar-danger")
OUTCOME_TONES = {"resolved": "bar-ok", "cancelled": "bar-danger", "dismissed": "bar-muted"}


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%".replace(".0%", "%")


def duration_text(value: dt.timedelta | None) -> str:
    """'3 days 4 h', '5 h 20 min' or '12 min': resolution times span minutes to weeks."""
    if value is None:
        return "—"
    minutes = int(value.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''} {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min"


def week_label(monday: dt.date) -> str:
    return f"{monday:%b} {monday.day}"  # "Sep 7": strftime's unpadded day is not portable


def weekly_chart(weeks: list[program.Week]) -> TrendChart:
    return trend_chart(
        [
            TrendWeek(
                week_label(week.start),
                week.opened,
                week.closed.resolved,
                week.closed.cancelled,
                week.automation_rate,
            )
            for week in weeks
        ]
    )


def trend_summary(weeks: list[program.Week]) -> str:
    """The chart in one sentence, for screen readers (the table beside it has each week)."""
    closed = [week.closed for week in weeks]
    return (
        f"Weeks of {week_label(weeks[0].start)} to {week_label(weeks[-1].start)} (this week): "
        f"{sum(week.opened for week in weeks)} cases opened, "
        f"{sum(c.resolved for c in closed)} resolved, {sum(c.cancelled for c in closed)} "
        f"cancelled and {sum(c.dismissed for c in closed)} dismissed; "
        f"{sum(c.automated for c in closed)} of {sum(c.closed for c in closed)} closed cases "
        "closed without a human decision."
    )


@require_GET
@dashboard_view
def program_page(request: HttpRequest) -> HttpResponse:
    by_status = program.open_cases_by_status()
    by_age = program.open_cases_by_age()
    closed = program.closed_cases()
    use = program.model_use()
    decisions = program.human_decisions()
    cancellations = program.cancellations()
    weeks = program.weekly_trend()
    labels = dict(Case.Status.choices)
    false_positives = [
        {
            "pattern": row.pattern,
            "proposed": row.proposed,
            "false_positives": row.false_positives,
            "rate_text": percent(row.rate),
        }
        for row in false_positive_counts_by_pattern()
    ]
    context = {
        "nav": "program",
        "trend": weekly_chart(weeks),
        "trend_summary": trend_summary(weeks),
        "trend_weeks": [
            {
                "label": week_label(week.start),
                "week": week,
                "rate_text": percent(week.automation_rate),
            }
            for week in weeks
        ],
        "false_positives": false_positives,
        "open_total": sum(by_status.values()),
        "status_chart": bar_chart(
            [(labels[s], n, STATUS_TONES.get(s, "bar")) for s, n in by_status.items()]
        ),
        "age_chart": bar_chart(
            [(label, n, tone) for (label, n), tone in zip(by_age.items(), AGE_TONES, strict=True)]
        ),
        "outcome_chart": bar_chart(
            [
                ("resolved", closed.resolved, OUTCOME_TONES["resolved"]),
                ("cancelled", closed.cancelled, OUTCOME_TONES["cancelled"]),
                ("dismissed", closed.dismissed, OUTCOME_TONES["dismissed"]),
            ]
        ),
        "median": duration_text(program.median_time_to_resolution()),
        "closed": closed,
        "automation_rate": percent(closed.automation_rate),
        "dismissal_rate": percent(closed.dismissal_rate),
        "cancellations": cancellations,
        "false_cancel_rate": percent(cancellations.false_cancel_rate),
        "use": use,
        "decisions": decisions,
        "hours_saved": program.hours_saved(use.audits, decisions),
        "manual_minutes": settings.MANUAL_AUDIT_MINUTES,
        "decision_minutes": program.HUMAN_DECISION_MINUTES,
        "audit_run": program.latest_audit_run(),
    }
    return render(request, "cases/program.html", context)
