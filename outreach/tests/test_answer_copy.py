"""Rider copy word for word: every answer ``outreach.replies.answers`` can write, per language.

``answer_copy.json`` holds the exact text of every paragraph the responder
writes for a set of riders chosen to reach every branch (each topic, the
general answer, the findings, the next step) in English and Spanish, under
both distance providers. Moving the copy between files must leave it
unchanged; a deliberate wording change rewrites the fixture:

    .venv/bin/python manage.py shell -c \
        "from outreach.tests.test_answer_copy import write_fixture; write_fixture()"
"""

import dataclasses
import datetime as dt
import json
from pathlib import Path

from django.test import override_settings

from outreach.compose import PermitFacts, RiderFacts
from outreach.replies.answers import ANSWERS, answer_question, finding_sentences, next_step

FIXTURE = Path(__file__).parent / "fixtures" / "answer_copy.json"
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

# The settings the copy quotes, fixed so the fixture does not follow the environment.
POLICY = {
    "REPLY_WAIT_DAYS": 7,
    "MAX_REAUDITS": 3,
    "DEFAULT_MAX_COMMUTE_MILES": 50,
    "COMMUTE_CIRCUITY_FACTOR": 1.2,
    "AUDIT_WINDOW_DAYS": 7,
}
PROVIDERS = {
    "offline": "vanpools.geo.OfflineDistanceProvider",
    "routed": "vanpools.geo.RoutedDistanceProvider",
}

BOTH_FAIL = RiderFacts(
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
    days_on_leave=0,
    tolerance_minutes=30,
    deadline=dt.date(2026, 11, 29),
    portal_url="https://portal.example.com/my-profile",
    program_name="Commute Vanpool Program",
    contact_email="vanpool-program@example.com",
)
RIDES: dict[str, object] = {
    "rides_aboard": 3,
    "rides_counted": 20,
    "rides_required": 12,
    "rides_excused": 2,
    "rides_start": dt.date(2026, 10, 26),
    "rides_end": dt.date(2026, 11, 22),
    "rides_min_days_per_week": 3.0,
}
PERMITS = (
    PermitFacts("P-5521", "Garage B", dt.date(2026, 9, 1), dt.date(2026, 12, 31)),
    PermitFacts("P-77", "Lot C", dt.date(2026, 1, 5), None),
)
RIDERS: dict[str, RiderFacts] = {
    "both_fail": BOTH_FAIL,
    # Too far only; hours matched on every day compared; no shift name.
    "location_only": dataclasses.replace(
        BOTH_FAIL,
        failed_checks=("location",),
        shift_name="",
        rider_hours="Mon–Fri 07:00–15:30",
        days_mismatched=0,
    ),
    # Shift only, some days off, one day of leave, van hours borrowed from its riders,
    # near enough to the pickup, no deadline.
    "shift_only": dataclasses.replace(
        BOTH_FAIL,
        failed_checks=("shift",),
        miles=12.4,
        rider_hours="Sun–Thu 22:00–06:30",
        van_hours="Mon–Sat 06:00–14:30",
        van_hours_from_riders=True,
        days_mismatched=2,
        days_on_leave=1,
        deadline=None,
    ),
    # Everything matches now.
    "cleared": dataclasses.replace(
        BOTH_FAIL, failed_checks=(), miles=10.0, days_mismatched=0, days_on_leave=4
    ),
    # Measured to a named work site (no pickup), distance unmeasured, no hours on
    # record, a van with no hours, one day compared, a rotation in the rider's hours.
    "work_site": dataclasses.replace(
        BOTH_FAIL,
        measured_to="work_site",
        miles=None,
        shift_name="Rotation B",
        rider_hours="rotating 4 on / 4 off, cycle from 2026-01-05 Wed 06:00–18:00",
        van_hours="",
        days_compared=1,
        days_mismatched=1,
        days_on_leave=3,
    ),
    # The one day compared was off.
    "one_day": dataclasses.replace(
        BOTH_FAIL, failed_checks=("shift",), days_compared=1, days_mismatched=1
    ),
    "unnamed_site": dataclasses.replace(
        BOTH_FAIL,
        measured_to="work_site",
        work_site="",
        rider_hours="",
        van_hours="Tue–Sat 08:00–16:30",
        deadline=dt.date(2026, 12, 6),
    ),
    "no_pickup_address": dataclasses.replace(
        BOTH_FAIL, failed_checks=("location",), pickup_address="", days_compared=0
    ),
    # Unmeasured and not failing: the distance answer is the policy alone;
    # no hours on either side: the hours answer is the policy alone.
    "nothing_measured": dataclasses.replace(
        BOTH_FAIL,
        failed_checks=(),
        miles=None,
        rider_hours="",
        van_hours="",
        days_compared=0,
        days_mismatched=0,
    ),
    # Each way of saying a rider's hours beside the van's: no shift name, no hours
    # on record, the van's hours borrowed from its riders or none at all.
    "unnamed_borrowed_unmeasured": dataclasses.replace(
        BOTH_FAIL, shift_name="", miles=None, van_hours_from_riders=True
    ),
    "unnamed_no_van": dataclasses.replace(BOTH_FAIL, shift_name="", van_hours=""),
    "no_hours_borrowed": dataclasses.replace(BOTH_FAIL, rider_hours="", van_hours_from_riders=True),
    "no_hours_no_van": dataclasses.replace(BOTH_FAIL, rider_hours="", van_hours=""),
    # Seen aboard on too few days by the trip log, the rule as days a week, leave left out.
    "ridership_trips": dataclasses.replace(BOTH_FAIL, failed_checks=("ridership",), **RIDES),
    # Only the gate's badge swipes saw the days, the rule a share of workdays, no deadline.
    "ridership_badge": dataclasses.replace(
        BOTH_FAIL,
        failed_checks=("ridership",),
        deadline=None,
        **{**RIDES, "rides_excused": 0, "rides_min_days_per_week": None},
        rides_min_share=0.8,
        rides_by_badge=True,
        swipe_window_minutes=30,
    ),
    # A permit in force beside the seat, and one with no end date.
    "parking": dataclasses.replace(BOTH_FAIL, failed_checks=("parking",), permits=PERMITS),
    "ridership_parking": dataclasses.replace(
        BOTH_FAIL, failed_checks=("parking", "ridership"), permits=PERMITS[:1], **RIDES
    ),
    # Too far and a permit: the portal for the address, a word about the permit.
    "location_parking": dataclasses.replace(
        BOTH_FAIL, failed_checks=("location", "parking"), permits=PERMITS[1:]
    ),
}
QUESTIONS = {
    "no_topic": "Hello there",
    "every_topic_en": (
        "Why was I flagged? What address do you have on file? How far is it? What are the "
        "van's hours? How do I update my record? What's the deadline? What happens if I "
        "don't? I'm on leave for now. Who do I contact? I want to appeal."
    ),
    "every_topic_es": (
        "¿Por qué? ¿Qué dirección tienen? ¿Qué tan lejos es? ¿Cuál es el horario? ¿Cómo "
        "actualizo? ¿Cuál es el plazo? ¿Qué pasa si no respondo? Estoy de licencia. ¿Con "
        "quién hablo? No estoy de acuerdo."
    ),
    "sin_tema": "Hola, buenos días, gracias",
}


def render_every_answer() -> dict[str, list[str]]:
    """Every paragraph the responder writes for RIDERS × languages × providers."""
    rendered: dict[str, list[str]] = {}
    for provider, path in PROVIDERS.items():
        with override_settings(DISTANCE_PROVIDER=path, **POLICY):
            for rider, facts in RIDERS.items():
                for lang in ("en", "es"):
                    key = f"{provider}/{rider}/{lang}"
                    for topic, answer in ANSWERS.items():
                        rendered[f"{key}/topic:{topic}"] = answer(facts, lang)
                    rendered[f"{key}/findings"] = finding_sentences(facts, lang)
                    rendered[f"{key}/next_step"] = [next_step(facts, lang)]
                    for name in ("no_topic", "every_topic_en"):
                        rendered[f"{key}/question:{name}"] = answer_question(
                            QUESTIONS[name], facts, lang
                        )
                for name, question in QUESTIONS.items():
                    # The language read from the question itself.
                    rendered[f"{provider}/{rider}/own-language/question:{name}"] = answer_question(
                        question, facts
                    )
    return rendered


def test_it_renders_every_answer_word_for_word_as_the_fixture():
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    rendered = render_every_answer()
    assert rendered.keys() == expected.keys()
    different = [key for key in expected if rendered[key] != expected[key]]
    assert not different, (different[:5], [rendered[key] for key in different[:2]])


def test_it_renders_every_copy_template_in_every_language(monkeypatch):
    from outreach.replies.answers import COPY_TEMPLATES, Phrase, Phrases

    rendered: set[str] = set()
    render = Phrase.__call__

    def recording(phrase: Phrase, **fill: object) -> str:
        rendered.add(phrase.template)
        return render(phrase, **fill)

    monkeypatch.setattr(Phrase, "__call__", recording)
    render_every_answer()
    # One template per sentence, translated through the catalogs (no folder per language).
    on_disk = {
        str(path.relative_to(TEMPLATES)) for path in (TEMPLATES / COPY_TEMPLATES).glob("*.txt")
    }
    phrases = [field.name for field in dataclasses.fields(Phrases)]
    assert len(on_disk) == len(phrases) == 61
    assert rendered == on_disk


def write_fixture() -> None:
    """Store what the responder writes today as the text to compare with."""
    FIXTURE.write_text(
        json.dumps(render_every_answer(), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )
