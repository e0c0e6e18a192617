"""Answer a rider's question from their case facts and the program's policy.

An offline, rules-based responder (the reply loop's ``question`` bucket): the
topics a question touches are detected in English or Spanish
(``outreach.replies.questions``), and each is answered from the rider's own
``RiderFacts`` and the program's policy (numbers from settings). This module
chooses what to say and fills in the facts; the words are translated
templates, one per sentence, in templates/emails/answers/ (their catalogs in
locale/). A question no topic matches gets a general answer: what we found and
what the rider can do. Every answer ends with the next step. The answer is
written in the language asked for, by default the question's own (English or
Spanish, ``question_language``): the same facts, IDs and dates in any, each
written as its language writes them. The question is only ever read, never
echoed or obeyed: it is untrusted text (principle 5).
"""

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from django.conf import settings
from django.template import Context, Template, engines
from django.utils import translation

from outreach.compose import RiderFacts
from outreach.replies.questions import TOPICS, Lang, detect_topics, question_language

# Reading the question lives in outreach.replies.questions; its names stay importable here.
__all__ = [
    "ANSWERS",
    "SAY",
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

# Every sentence an answer can say is a template of its own,
# templates/emails/answers/<name>.txt: one whole sentence (or a few) marked
# for translation, filled with ``{{ names }}`` by the builders below and
# rendered in the active language. Sentences are joined with a space; no
# template is a piece of a sentence.
COPY_TEMPLATES = "emails/answers"


@cache
def _template(name: str) -> Template:
    engine = engines["django"].engine  # type: ignore[attr-defined]
    template: Template = engine.get_template(name)
    return template


@dataclass(frozen=True, eq=False)
class Phrase:
    """One sentence of rider copy, kept in a template, rendered in the active language.

    Rendered as plain text, without HTML escaping. Values are the facts as
    ``RiderFacts`` words them for the active language (dates, miles, hours)
    and plain numbers, which the template writes with the language's
    separators. The file's closing newline is not part of the phrase.
    """

    template: str

    def __call__(self, **fill: object) -> str:
        context = Context(fill, autoescape=False)
        return _template(self.template).render(context).removesuffix("\n")

    @property
    def source(self) -> str:
        return str(_template(self.template).source)


@dataclass(frozen=True)
class Phrases:
    """Every sentence an answer can say; each a ``Phrase`` named as its template."""

    # Program policy.
    distance_how: Phrase
    distance_method_offline: Phrase
    distance_method_routed: Phrase
    distance_limit: Phrase
    shift_policy: Phrase
    update_location: Phrase
    update_shift: Phrase
    update_both: Phrase
    update_any: Phrase
    update_then_reply: Phrase
    update_shift_note: Phrase
    deadline_policy: Phrase
    no_deadline: Phrase
    reply_by: Phrase
    consequence_by: Phrase
    consequence: Phrase
    consequence_policy: Phrase
    leave_left_out: Phrase
    leave_left_out_days: Phrase
    temporary_policy: Phrase
    contact_policy: Phrase
    appeal_policy: Phrase
    not_answered: Phrase
    # What we found.
    why_we_check: Phrase
    why_flagged: Phrase
    why_cleared: Phrase
    distance_measured: Phrase
    distance_measured_within: Phrase
    distance_unmeasured: Phrase
    shift_named_van: Phrase
    shift_named_van_borrowed: Phrase
    shift_van: Phrase
    shift_van_borrowed: Phrase
    no_hours_van: Phrase
    no_hours_van_borrowed: Phrase
    shift_named_no_van: Phrase
    shift_no_van: Phrase
    no_hours_no_van: Phrase
    days_off_one: Phrase
    days_off_all: Phrase
    days_off_some: Phrase
    hours_match: Phrase
    held_zip: Phrase
    held_zip_miles: Phrase
    held_zip_shift: Phrase
    held_zip_named_shift: Phrase
    held_zip_miles_shift: Phrase
    held_zip_miles_named_shift: Phrase
    held_portal: Phrase
    # Riding and parking: the letter's own sentences (one catalog entry each).
    rides_seen: Phrase
    rides_asked: Phrase
    permit: Phrase
    next_step_nothing: Phrase
    next_step_location: Phrase
    next_step_shift: Phrase
    next_step_both: Phrase
    next_step_ridership: Phrase
    next_step_parking: Phrase
    next_step_ridership_parking: Phrase
    next_step_by: Phrase
    next_step_soon: Phrase


SAY = Phrases(
    **{field.name: Phrase(f"{COPY_TEMPLATES}/{field.name}.txt") for field in fields(Phrases)}
)


def _in_language(build: Callable[..., Any]) -> Callable[..., Any]:
    """Run an answer builder inside ``translation.override`` of its ``lang`` argument."""

    def in_language(facts: RiderFacts, lang: str = "en") -> Any:
        with translation.override(lang):
            return build(facts)

    in_language.__name__ = build.__name__
    in_language.__doc__ = build.__doc__
    return in_language


# --- Answering ------------------------------------------------------------------------------


def answer_question(question: str, facts: RiderFacts, lang: str | None = None) -> list[str]:
    """Paragraphs answering each topic asked, from the rider's facts; next step last.

    Written in ``lang`` (a shipped language's code), by default the question's own.
    """
    with translation.override(lang or question_language(question)):
        topics = detect_topics(question)
        paragraphs: list[str] = []
        for topic in topics:
            for paragraph in _BUILDERS[topic](facts):
                # "Why" already states the findings that "distance" or "hours" would repeat.
                if not any(paragraph in earlier for earlier in paragraphs):
                    paragraphs.append(paragraph)
        if not topics:
            paragraphs.extend(_general(facts))
        paragraphs.append(_next_step(facts))
    return paragraphs


def _findings(facts: RiderFacts) -> list[str]:
    """What we found about this rider, one sentence per failing check."""
    sentences: list[str] = []
    if facts.location_failed:
        sentences.append(_distance_sentence(facts))
    if facts.shift_failed:
        sentences.append(_shift_sentence(facts))
    if facts.ridership_failed:
        sentences.append(f"{SAY.rides_seen(facts=facts)} {SAY.rides_asked(facts=facts)}")
    if facts.parking_failed:
        sentences.extend(SAY.permit(permit=permit) for permit in facts.permits)
    return sentences


def _distance_sentence(facts: RiderFacts) -> str:
    fill = {
        "zip": facts.home_zip,
        "to": facts.measured_to_text,
        "vanpool": facts.vanpool_id,
        "max": facts.max_miles_text,
    }
    if facts.miles is None:
        return SAY.distance_unmeasured(**fill)
    within = not facts.location_failed and facts.miles <= facts.max_miles
    sentence = SAY.distance_measured_within if within else SAY.distance_measured
    return sentence(**fill, miles=facts.miles_text)


def _shift_sentence(facts: RiderFacts) -> str:
    fill = {
        "name": facts.shift_name,
        "hours": facts.rider_hours_text,
        "vanpool": facts.vanpool_id,
        "van_hours": facts.van_hours_text,
    }
    if not facts.van_hours:
        return _whose_hours(facts, SAY.shift_named_no_van, SAY.shift_no_van, SAY.no_hours_no_van)(
            **fill
        )
    if facts.van_hours_from_riders:
        sentence = _whose_hours(
            facts, SAY.shift_named_van_borrowed, SAY.shift_van_borrowed, SAY.no_hours_van_borrowed
        )
    else:
        sentence = _whose_hours(facts, SAY.shift_named_van, SAY.shift_van, SAY.no_hours_van)
    sentences = [sentence(**fill)]
    if facts.days_compared and facts.shift_failed:
        sentences.append(_days_off(facts))
    elif not facts.shift_failed and facts.days_compared and not facts.days_mismatched:
        sentences.append(SAY.hours_match())
    return " ".join(sentences)


def _whose_hours(facts: RiderFacts, named: Phrase, unnamed: Phrase, no_hours: Phrase) -> Phrase:
    """The sentence for a rider's hours on record: with the shift's name, without, or none."""
    if not facts.rider_hours:
        return no_hours
    return named if facts.shift_name else unnamed


def _days_off(facts: RiderFacts) -> str:
    """'On all 5 workdays we compared, …', 'On 2 of the 5 workdays we compared, …'."""
    compared, mismatched = facts.days_compared, facts.days_mismatched
    fill = {"compared": compared, "mismatched": mismatched, "tolerance": facts.tolerance_minutes}
    if compared == 1:
        return SAY.days_off_one(**fill)
    sentence = SAY.days_off_all if mismatched == compared else SAY.days_off_some
    return sentence(**fill)


def _why(facts: RiderFacts) -> list[str]:
    found = _findings(facts)
    if not found:
        return [SAY.why_cleared(vanpool=facts.vanpool_id)]
    return [" ".join([SAY.why_we_check(program=facts.program_name), SAY.why_flagged(), *found])]


def _record(facts: RiderFacts) -> list[str]:
    """What we hold about the rider, checked or not: their own data only."""
    fill = {
        "zip": facts.home_zip,
        "miles": facts.miles_text,
        "to": facts.measured_to_text,
        "name": facts.shift_name,
        "hours": facts.rider_hours_text,
    }
    measured = facts.miles is not None
    if not facts.rider_hours:
        held = SAY.held_zip_miles if measured else SAY.held_zip
    elif facts.shift_name:
        held = SAY.held_zip_miles_named_shift if measured else SAY.held_zip_named_shift
    else:
        held = SAY.held_zip_miles_shift if measured else SAY.held_zip_shift
    return [f"{held(**fill)} {SAY.held_portal(portal=facts.portal_url)}"]


def _distance(facts: RiderFacts) -> list[str]:
    method = (
        SAY.distance_method_offline(detour=round((settings.COMMUTE_CIRCUITY_FACTOR - 1) * 100))
        if settings.DISTANCE_PROVIDER == OFFLINE_DISTANCE_PROVIDER
        else SAY.distance_method_routed()
    )
    policy = " ".join(
        [
            SAY.distance_how(),
            method,
            SAY.distance_limit(default=settings.DEFAULT_MAX_COMMUTE_MILES),
        ]
    )
    if facts.miles is None and not facts.location_failed:
        return [policy]
    return [_distance_sentence(facts), policy]


def _hours(facts: RiderFacts) -> list[str]:
    policy = SAY.shift_policy(window=settings.AUDIT_WINDOW_DAYS, tolerance=facts.tolerance_minutes)
    if not (facts.van_hours or facts.rider_hours):
        return [policy]
    return [_shift_sentence(facts), policy]


def _update(facts: RiderFacts) -> list[str]:
    update = {
        "location": SAY.update_location,
        "shift": SAY.update_shift,
        "both": SAY.update_both,
        "any": SAY.update_any,
    }[facts.record_kind]
    sentences = [update(portal=facts.portal_url), SAY.update_then_reply()]
    if facts.shift_failed:
        sentences.append(SAY.update_shift_note())
    return [" ".join(sentences)]


def _deadline(facts: RiderFacts) -> list[str]:
    if facts.deadline is None:
        when = SAY.no_deadline(wait=settings.REPLY_WAIT_DAYS)
    else:
        when = SAY.reply_by(deadline=facts.deadline_text)
    return [f"{when} {SAY.deadline_policy()}"]


def _consequences(facts: RiderFacts) -> list[str]:
    if facts.deadline:
        first = SAY.consequence_by(deadline=facts.deadline_text)
    else:
        first = SAY.consequence()
    return [f"{first} {SAY.consequence_policy(max_checks=settings.MAX_REAUDITS)}"]


def _temporary(facts: RiderFacts) -> list[str]:
    if facts.days_on_leave:
        leave = SAY.leave_left_out_days(days=facts.days_on_leave)
    else:
        leave = SAY.leave_left_out()
    return [f"{leave} {SAY.temporary_policy(portal=facts.portal_url)}"]


def _contact(facts: RiderFacts) -> list[str]:
    return [
        SAY.contact_policy(
            program=facts.program_name, contact=facts.contact_email, case_id=facts.case_id
        )
    ]


def _appeal(facts: RiderFacts) -> list[str]:
    return [SAY.appeal_policy()]


def _general(facts: RiderFacts) -> list[str]:
    return [*_why(facts), SAY.not_answered(contact=facts.contact_email, case_id=facts.case_id)]


def _next_step(facts: RiderFacts) -> str:
    if not facts.failed_checks:
        return SAY.next_step_nothing(portal=facts.portal_url)
    if facts.seat_findings_only:
        # Nothing in the portal to correct: what the rider can tell us instead.
        what = {
            (True, False): SAY.next_step_ridership,
            (False, True): SAY.next_step_parking,
            (True, True): SAY.next_step_ridership_parking,
        }[(facts.ridership_failed, facts.parking_failed)]
    else:
        what = {
            "location": SAY.next_step_location,
            "shift": SAY.next_step_shift,
            "both": SAY.next_step_both,
        }[facts.record_kind]
    if facts.deadline:
        when = SAY.next_step_by(deadline=facts.deadline_text)
    else:
        when = SAY.next_step_soon()
    return f"{what(portal=facts.portal_url)} {when}"


_BUILDERS: dict[str, Callable[[RiderFacts], list[str]]] = {
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
# Each topic's answer for one rider, in a language: ``ANSWERS[topic](facts, "es")``.
ANSWERS: dict[str, Callable[[RiderFacts, str], list[str]]] = {
    topic: _in_language(build) for topic, build in _BUILDERS.items()
}
finding_sentences: Callable[[RiderFacts, str], list[str]] = _in_language(_findings)
finding_sentences.__doc__ = "What we found about this rider, one sentence per failing check."
next_step: Callable[[RiderFacts, str], str] = _in_language(_next_step)
next_step.__doc__ = "The closing paragraph: what the rider should do now."
