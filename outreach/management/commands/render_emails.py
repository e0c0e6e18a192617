"""manage.py render_emails [--lang CODE …] [--out DIR] — every rider email in each language.

For translators and reviewers: each template rendered for one sample rider
(both checks failing, a deadline, a shift name, leave left out) in each
shipped language, as ``<lang>/<template>.txt`` (subject, blank line, text
body) and ``<lang>/<template>.html``, to read as a rider would. The answer
email answers a question on every topic. Nothing is sent or stored.
"""

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from outreach.compose import TEMPLATES, PermitFacts, RiderFacts, render_email
from outreach.replies.answers import answer_question
from poolpatrol.languages import BY_CODE, CODES

SAMPLE = RiderFacts(
    first_name="Ana",
    employee_id="EMP-2001",
    case_id="CASE-0A1B2C3D",
    vanpool_id="VP-110",
    vanpool_name="Tri-Valley Express",
    pickup_address="Union City BART, Union City, CA 94587",
    work_site="Fremont Campus",
    failed_checks=("location", "shift"),
    home_zip="01103",
    home_source="zip_centroid",
    measured_to="pickup",
    miles=88.93,
    max_miles=50.0,
    shift_name="Swing",
    rider_hours="Mon–Fri 15:00–23:30",
    van_hours="Mon–Fri 07:00–15:30",
    van_hours_from_riders=False,
    days_compared=5,
    days_mismatched=5,
    days_on_leave=2,
    tolerance_minutes=30,
    deadline=dt.date(2026, 11, 29),
    portal_url="https://portal.example.com/my-profile",
    program_name="Commute Vanpool Program",
    contact_email="vanpool-program@example.com",
    # What the riding and parking letters say, when those checks fail.
    rides_aboard=3,
    rides_counted=20,
    rides_required=12,
    rides_excused=2,
    rides_start=dt.date(2026, 10, 26),
    rides_end=dt.date(2026, 11, 22),
    rides_min_days_per_week=3.0,
    rides_by_badge=True,
    swipe_window_minutes=30,
    permits=(PermitFacts("P-5521", "Garage B", dt.date(2026, 9, 1), dt.date(2026, 12, 31)),),
)
# The first letters about riding and parking, for a rider failing those checks.
FAILING: dict[str, tuple[str, ...]] = {
    "ridership_mismatch": ("ridership",),
    "parking_conflict": ("parking",),
    "several_findings": ("location", "parking", "ridership"),
}
QUESTION = (
    "Why was I flagged? What address do you have on file? How far is it? What are the "
    "van's hours? How do I update my record? What's the deadline? What happens if I "
    "don't? I'm on leave for now. Who do I contact? I want to appeal."
)


class Command(BaseCommand):
    help = "Write every rider email, in each shipped language, to files for reading."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--lang", nargs="*", default=list(CODES), help="language codes")
        parser.add_argument("--out", default="var/rider-emails", help="folder to write into")

    def handle(self, *args: Any, **options: Any) -> None:
        unknown = sorted(set(options["lang"]) - set(BY_CODE))
        if unknown:
            raise CommandError(f"not a shipped language: {', '.join(unknown)}")
        out = Path(options["out"])
        for lang in options["lang"]:
            folder = out / lang
            folder.mkdir(parents=True, exist_ok=True)
            for template in sorted(TEMPLATES):
                sample = sample_for(template)
                email = render_email(template, sample, lang=lang, **_extra(template, lang))
                (folder / f"{template}.txt").write_text(
                    f"{email.subject}\n\n{email.text}", encoding="utf-8"
                )
                (folder / f"{template}.html").write_text(email.html, encoding="utf-8")
        self.stdout.write(f"{len(TEMPLATES)} emails in {len(options['lang'])} language(s) in {out}")


def sample_for(template: str) -> RiderFacts:
    """The sample rider, failing the checks this template's letter is about."""
    if template in FAILING:
        return dataclasses.replace(SAMPLE, failed_checks=FAILING[template])
    return SAMPLE


def _extra(template: str, lang: str) -> dict[str, object]:
    if template == "answer":
        return {
            "answer_paragraphs": answer_question(QUESTION, SAMPLE, lang),
            "question_excerpt": QUESTION,
        }
    if template == "holding_reply":
        return {"coordinator_name": "Kim Lee"}
    return {}
