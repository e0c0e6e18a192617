"""Answer a rider's question from their case facts and the program's policy.

An offline, rules-based responder (the reply loop's ``question`` bucket): the
topics a question touches are detected in English or Spanish
(``outreach.replies.questions``), and each is answered from the rider's own
``RiderFacts`` and the program's policy (numbers from settings). This module
chooses what to say and fills in the facts; the words are templates, one per
sentence and language, in templates/emails/answers/<lang>/. A question no topic
matches gets a general answer: what we found and what the rider can do. Every
answer ends with the next step. The answer is written in the question's
language (English or Spanish, ``question_language``): the same facts, numbers,
IDs and dates in either. The question is only ever read, never echoed or
obeyed: it is untrusted text (principle 5).
"""

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from django.conf import settings
from django.template import Context, Template, engines
from django.utils.dateformat import format as format_date

from outreach.compose import RiderFacts
from outreach.replies.questions import TOPICS, Lang, detect_topics, question_language

# Reading the question lives in outreach.replies.questions; its names stay importable here.
__all__ = [
    "ANSWERS",
    "EN",
    "ES",
    "PHRASES",
    "TOPICS",
    "Lang",
    "Phrase",
    "Phrases",
    "answer_question",
    "detect_topics",
    "finding_sentences",
    "next_step",
    "question_language",
]

OFFLINE_DISTANCE_PROVIDER = "vanpools.geo.OfflineDistanceProvider"


# --- What an answer says, in words a rider reads ---------------------------------------------

# Every sentence and fragment an answer can say is a template, one per
# language: templates/emails/answers/<lang>/<name>.txt, filled with
# ``{{ names }}`` from the rider's facts and settings by the builders below.
COPY_TEMPLATES = "emails/answers"


@cache
def _template(name: str) -> Template:
    engine = engines["django"].engine  # type: ignore[attr-defined]
    template: Template = engine.get_template(name)
    return template


@dataclass(frozen=True, eq=False)
class Phrase:
    """One sentence or fragment of rider copy, kept in a template.

    Rendered as plain text, without HTML escaping. Every value is written as
    ``str()`` writes it, the same in every language, so a translation cannot
    change a number. The file's closing newline is not part of the phrase.
    Two phrases are equal when their templates say the same.
    """

    template: str

    def __call__(self, **fill: object) -> str:
        context = Context({name: str(value) for name, value in fill.items()}, autoescape=False)
        return _template(self.template).render(context).removesuffix("\n")

    @property
    def source(self) -> str:
        return str(_template(self.template).source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Phrase) and self.source == other.source

    def __hash__(self) -> int:
        return hash(self.source)


@dataclass(frozen=True)
class Phrases:
    """Every sentence an answer can say, in one language.

    Each is a ``Phrase`` named as its template; ``date`` and ``hours`` write a
    deadline and a schedule.
    """

    # Program policy.
    distance_policy: Phrase
    distance_method_offline: Phrase
    distance_method_routed: Phrase
    shift_policy: Phrase
    update_policy: Phrase
    update_shift_note: Phrase
    deadline_policy: Phrase
    no_deadline: Phrase
    reply_by: Phrase
    consequence_policy: Phrase
    consequence_by: Phrase
    temporary_policy: Phrase
    leave_left_out: Phrase
    one_day: Phrase
    many_days: Phrase
    contact_policy: Phrase
    appeal_policy: Phrase
    not_answered: Phrase
    # What we found.
    why_flagged: Phrase
    why_cleared: Phrase
    distance_measured: Phrase
    distance_unmeasured: Phrase
    distance_within: Phrase
    shift_name: Phrase
    shift_on_record: Phrase
    no_hours_on_record: Phrase
    shift_no_van: Phrase
    shift_van: Phrase
    hours_from_riders: Phrase
    days_off: Phrase
    hours_match: Phrase
    record_held: Phrase
    held_zip: Phrase
    held_miles: Phrase
    held_shift: Phrase
    held_shift_name: Phrase
    next_step_nothing: Phrase
    next_step: Phrase
    next_step_by: Phrase
    next_step_soon: Phrase
    # The rider's facts in words.
    site_named: Phrase
    site: Phrase
    site_no_pickup: Phrase
    pickup_at: Phrase
    pickup: Phrase
    days_one: Phrase
    days_all: Phrase
    days_some: Phrase
    record_location: Phrase
    record_shift: Phrase
    record_or: Phrase
    record_any: Phrase
    date: Callable[[dt.date], str]
    hours: Callable[[str], str]


def _phrases(lang: Lang, date: Callable[[dt.date], str], hours: Callable[[str], str]) -> Phrases:
    copy: dict[str, Any] = {
        field.name: Phrase(f"{COPY_TEMPLATES}/{lang}/{field.name}.txt")
        for field in fields(Phrases)
        if field.name not in ("date", "hours")
    }
    return Phrases(**copy, date=date, hours=hours)


def _english_date(day: dt.date) -> str:
    return format_date(day, "l, F j")  # as RiderFacts.deadline_text: "Sunday, November 29"


EN = _phrases("en", date=_english_date, hours=lambda hours: hours)

# Neutral Latin-American Spanish, "usted". Places are named without their
# article ("punto de recogida ..."), which the sentences give as "del": Spanish
# contracts "de el". Dates stay ISO after the weekday: the faithfulness check
# reads ISO dates, and every digit of the English answer is there.
SPANISH_WEEKDAYS = ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")
_SPANISH_DAY_ABBREVIATIONS = {
    "Mon": "lun",
    "Tue": "mar",
    "Wed": "mié",
    "Thu": "jue",
    "Fri": "vie",
    "Sat": "sáb",
    "Sun": "dom",
}
_DAY_ABBREVIATION = re.compile(rf"\b({'|'.join(_SPANISH_DAY_ABBREVIATIONS)})\b")
_ROTATION = re.compile(r"\brotating (\d+) on / (\d+) off\b")


def _spanish_date(day: dt.date) -> str:
    return f"{SPANISH_WEEKDAYS[day.weekday()]} {day.isoformat()}"


def _spanish_hours(hours: str) -> str:
    """'Mon–Fri 07:00–15:30' as 'lun–vie 07:00–15:30'; the times are left as they are."""
    hours = _DAY_ABBREVIATION.sub(lambda m: _SPANISH_DAY_ABBREVIATIONS[m.group(1)], hours)
    hours = _ROTATION.sub(r"rotativo de \1 días de trabajo / \2 de descanso", hours)
    return hours.replace(", cycle from ", ", ciclo desde el ")


ES = _phrases("es", date=_spanish_date, hours=_spanish_hours)

PHRASES: dict[Lang, Phrases] = {"en": EN, "es": ES}


# --- Answering ------------------------------------------------------------------------------


def answer_question(question: str, facts: RiderFacts, lang: Lang | None = None) -> list[str]:
    """Paragraphs answering each topic asked, from the rider's facts; next step last.

    Written in ``lang``, by default the question's own language.
    """
    lang = lang or question_language(question)
    topics = detect_topics(question)
    paragraphs: list[str] = []
    for topic in topics:
        for paragraph in ANSWERS[topic](facts, lang):
            # "Why" already states the findings that "distance" or "hours" would repeat.
            if not any(paragraph in earlier for earlier in paragraphs):
                paragraphs.append(paragraph)
    if not topics:
        paragraphs.extend(_general(facts, lang))
    paragraphs.append(next_step(facts, lang))
    return paragraphs


def finding_sentences(facts: RiderFacts, lang: Lang = "en") -> list[str]:
    """What we found about this rider, one sentence per failing check."""
    sentences: list[str] = []
    if facts.location_failed:
        sentences.append(_distance_sentence(facts, lang))
    if facts.shift_failed:
        sentences.append(_shift_sentence(facts, lang))
    return sentences


def _distance_sentence(facts: RiderFacts, lang: Lang) -> str:
    say = PHRASES[lang]
    fill = {
        "zip": facts.home_zip,
        "to": _measured_to(facts, lang),
        "vanpool": facts.vanpool_id,
        "max": facts.max_miles_text,
    }
    if facts.miles is None:
        return say.distance_unmeasured(**fill)
    within = not facts.location_failed and facts.miles <= facts.max_miles
    return say.distance_measured(
        **fill, miles=facts.miles_text, within=say.distance_within() if within else ""
    )


def _shift_sentence(facts: RiderFacts, lang: Lang) -> str:
    say = PHRASES[lang]
    name = say.shift_name(name=facts.shift_name) if facts.shift_name else ""
    if facts.rider_hours:
        rider = say.shift_on_record(name=name, hours=say.hours(facts.rider_hours))
    else:
        rider = say.no_hours_on_record()
    if not facts.van_hours:
        return say.shift_no_van(rider=rider, vanpool=facts.vanpool_id)
    sentence = say.shift_van(
        rider=rider,
        vanpool=facts.vanpool_id,
        hours=say.hours(facts.van_hours),
        borrowed=say.hours_from_riders() if facts.van_hours_from_riders else "",
    )
    if facts.days_compared and facts.shift_failed:
        sentence += say.days_off(days=_days(facts, lang), tolerance=facts.tolerance_minutes)
    elif not facts.shift_failed and facts.days_compared and not facts.days_mismatched:
        sentence += say.hours_match()
    return sentence


def _why(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    found = finding_sentences(facts, lang)
    if not found:
        return [say.why_cleared(vanpool=facts.vanpool_id)]
    return [say.why_flagged(program=facts.program_name, found=" ".join(found))]


def _record(facts: RiderFacts, lang: Lang) -> list[str]:
    """What we hold about the rider, checked or not: their own data only."""
    say = PHRASES[lang]
    held = [say.held_zip(zip=facts.home_zip)]
    if facts.miles is not None:
        held[0] += say.held_miles(miles=facts.miles_text, to=_measured_to(facts, lang))
    if facts.rider_hours:
        name = say.held_shift_name(name=facts.shift_name) if facts.shift_name else ""
        held.append(say.held_shift(name=name, hours=say.hours(facts.rider_hours)))
    return [say.record_held(held="; ".join(held), portal=facts.portal_url)]


def _distance(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    method = (
        say.distance_method_offline(detour=round((settings.COMMUTE_CIRCUITY_FACTOR - 1) * 100))
        if settings.DISTANCE_PROVIDER == OFFLINE_DISTANCE_PROVIDER
        else say.distance_method_routed()
    )
    policy = say.distance_policy(method=method, default=settings.DEFAULT_MAX_COMMUTE_MILES)
    if facts.miles is None and not facts.location_failed:
        return [policy]
    return [_distance_sentence(facts, lang), policy]


def _hours(facts: RiderFacts, lang: Lang) -> list[str]:
    policy = PHRASES[lang].shift_policy(
        window=settings.AUDIT_WINDOW_DAYS, tolerance=facts.tolerance_minutes
    )
    if not (facts.van_hours or facts.rider_hours):
        return [policy]
    return [_shift_sentence(facts, lang), policy]


def _update(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    answer = say.update_policy(portal=facts.portal_url, record=_record_name(facts, lang))
    if facts.shift_failed:
        answer += " " + say.update_shift_note()
    return [answer]


def _deadline(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    if facts.deadline is None:
        when = say.no_deadline(wait=settings.REPLY_WAIT_DAYS)
    else:
        when = say.reply_by(deadline=say.date(facts.deadline))
    return [f"{when} {say.deadline_policy()}"]


def _consequences(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    by = say.consequence_by(deadline=say.date(facts.deadline)) if facts.deadline else ""
    return [say.consequence_policy(by=by, max_checks=settings.MAX_REAUDITS)]


def _temporary(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    leave = ""
    if facts.days_on_leave:
        days = say.one_day if facts.days_on_leave == 1 else say.many_days
        leave = say.leave_left_out(days=days(n=facts.days_on_leave))
    return [say.temporary_policy(leave=leave, portal=facts.portal_url)]


def _contact(facts: RiderFacts, lang: Lang) -> list[str]:
    return [
        PHRASES[lang].contact_policy(
            program=facts.program_name, contact=facts.contact_email, case_id=facts.case_id
        )
    ]


def _appeal(facts: RiderFacts, lang: Lang) -> list[str]:
    return [PHRASES[lang].appeal_policy()]


def _general(facts: RiderFacts, lang: Lang) -> list[str]:
    return [
        *_why(facts, lang),
        PHRASES[lang].not_answered(contact=facts.contact_email, case_id=facts.case_id),
    ]


ANSWERS: dict[str, Callable[[RiderFacts, Lang], list[str]]] = {
    "why": _why,
    "record": _record,
    "distance": _distance,
    "hours": _hours,
    "update": _update,
    "deadline": _deadline,
    "consequences": _consequences,
    "temporary": _temporary,
    "contact": _contact,
    "appeal": _appeal,
}


def next_step(facts: RiderFacts, lang: Lang = "en") -> str:
    """The closing paragraph: what the rider should do now."""
    say = PHRASES[lang]
    if not facts.failed_checks:
        return say.next_step_nothing(portal=facts.portal_url)
    if facts.deadline:
        when = say.next_step_by(deadline=say.date(facts.deadline))
    else:
        when = say.next_step_soon()
    return say.next_step(record=_record_name(facts, lang), portal=facts.portal_url, when=when)


# --- The rider's facts in words (RiderFacts' own properties, in either language) -------------


def _measured_to(facts: RiderFacts, lang: Lang) -> str:
    """What the distance runs to, in words a rider recognises."""
    say = PHRASES[lang]
    if facts.measured_to == "work_site":
        site = say.site_named(site=facts.work_site) if facts.work_site else say.site()
        return say.site_no_pickup(site=site)
    if facts.pickup_address:
        return say.pickup_at(address=facts.pickup_address)
    return say.pickup()


def _days(facts: RiderFacts, lang: Lang) -> str:
    """'all 5 workdays we compared', '2 of the 5 workdays we compared'."""
    say = PHRASES[lang]
    compared, mismatched = facts.days_compared, facts.days_mismatched
    if compared == 1:
        return say.days_one()
    phrase = say.days_all if mismatched == compared else say.days_some
    return phrase(compared=compared, mismatched=mismatched)


def _record_name(facts: RiderFacts, lang: Lang) -> str:
    """What the rider may need to correct: 'home address', 'shift', or both."""
    say = PHRASES[lang]
    parts = [
        name
        for check, name in (("location", say.record_location()), ("shift", say.record_shift()))
        if check in facts.failed_checks
    ]
    return say.record_or().join(parts) or say.record_any()
