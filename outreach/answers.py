"""Answer a rider's question from their case facts and the program's policy.

An offline, rules-based responder (the reply loop's ``question`` bucket): the
topics a question touches are detected in English or Spanish, tolerant of
typos and case, and each is answered from the rider's own ``RiderFacts`` and
the policy paragraphs below (numbers from settings). A question no topic
matches gets a general answer: what we found and what the rider can do. Every
answer ends with the next step. The question is only ever read, never echoed
or obeyed: it is untrusted text (principle 5).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

from outreach.compose import RiderFacts
from outreach.guardrails import normalise

# --- Program policy, in words a rider reads -------------------------------------------------

OFFLINE_DISTANCE_PROVIDER = "vanpools.geo.OfflineDistanceProvider"

DISTANCE_POLICY = (
    "How we measure: from your home (the home coordinates on your record when there are "
    "any, otherwise the centre of your home ZIP code) to the van's pickup point. {method} "
    "Seats are for riders who live within the van's limit of the pickup: {default} miles "
    "unless the program has set a different limit for that van."
)
DISTANCE_METHOD_OFFLINE = (
    "We take the straight-line distance and add {detour}% to allow for roads, so the figure "
    "is an estimate of the drive, not an exact route."
)
DISTANCE_METHOD_ROUTED = "We use the driving distance from our routing service."
SHIFT_POLICY = (
    "How we compare hours: on each workday in the {window} days we check, your shift needs "
    "to start within {tolerance} minutes of the van's arrival at work and end within "
    "{tolerance} minutes of its departure. Days off, and leave or PTO recorded in HR, are "
    "not counted against you."
)
UPDATE_POLICY = (
    "To update your record, sign in to the employee portal at {portal} and correct your "
    "{record} there. Then reply to this email to say it's done, and we'll check again "
    "straight away."
)
UPDATE_SHIFT_NOTE = (
    "If your shift is set by your manager or HR rather than by you, ask them to update it "
    "in the portal."
)
DEADLINE_POLICY = (
    "If you need more time, reply with why and roughly when you can sort it out, if you "
    "haven't told us already. Nothing happens to your seat without a program coordinator "
    "reviewing it first, and they see your replies."
)
NO_DEADLINE = "You have {wait} days from our first email to update your record or reply."
CONSEQUENCE_POLICY = (
    "If we don't hear from you{by}, we check your record once more. If it matches then, the "
    "check is closed and nothing changes. If it still doesn't match, a program coordinator "
    "reviews the evidence and decides whether to cancel your seat; if they do, we'll tell "
    "you by email. Each time you tell us you've updated your record we check again, up to "
    "{max_checks} times; if it still doesn't match after that, it goes to a coordinator the "
    "same way. No seat is cancelled automatically."
)
TEMPORARY_POLICY = (
    "Leave and PTO that are recorded in HR are already left out of the shift check{leave}. "
    "If something temporary explains the difference (a leave, a short stay somewhere else, "
    "a temporary change of shift), reply and tell us what it is and when it ends; a "
    "program coordinator takes that into account before anything happens to your seat. If "
    "you have moved for good, please update your home address in the employee portal at "
    "{portal}."
)
CONTACT_POLICY = (
    "You can reply to this email at any time. You can also write to the {program} at "
    "{contact}; please mention case {case_id} so we can find your record quickly."
)
APPEAL_POLICY = (
    "If you think we have this wrong, reply and tell us what is wrong, for example your "
    "actual home ZIP or the hours you really work. If your record in the employee portal "
    "is out of date, correcting it there is the quickest fix: we check again as soon as you "
    "reply. No seat is cancelled without a program coordinator reviewing the evidence, "
    "including what you tell us."
)
NOT_ANSWERED = (
    "If this doesn't answer your question, write to {contact} and mention case {case_id}; "
    "a person from the program will get back to you."
)


# --- Detecting what was asked ---------------------------------------------------------------

# Cue words may be separated in the question by up to this many other words:
# "why was I flagged" matches the cue "why flagged".
MAX_GAP = 3
# Topics are looked for in this much of a question: a rider's question comes
# first, and a very long email must not make the answer slow.
MAX_QUESTION_CHARS = 4000


@dataclass(frozen=True)
class Topic:
    """A kind of question and the phrases that ask it.

    A cue is a phrase of words: a plain word tolerates a typo or two (by its
    length), ``stem*`` matches any ending, ``=word`` only itself (for short
    words one letter away from a common one: plazo/plaza, turno/turns).
    """

    name: str
    cues: tuple[str, ...]


def _cues(text: str) -> tuple[str, ...]:
    return tuple(cue.strip() for cue in text.split(";") if cue.strip())


# English first, then Spanish (accents folded, as the question is).
TOPICS: tuple[Topic, ...] = (
    Topic(
        "why",
        _cues(
            "why; flagged; what wrong; what problem; what issue; what mean; mismatch; "
            "dont understand; not understand; confus*; "
            "por que; porque; que problema; que significa; no entiendo; de que se trata; "
            "no coincide"
        ),
    ),
    Topic(
        "record",
        _cues(
            "on file; on record; my record; what address; which address; what zip; which zip; "
            "what do you have; it say i; says i; "
            "que direccion; cual direccion; que codigo postal; mis datos; "
            "dice que"
        ),
    ),
    Topic(
        "distance",
        _cues(
            "distance; how far; mile*; measur*; calculat*; kilomet*; straight line; "
            "as the crow; driving; "
            "distancia; que tan lejos; =lejos; milla*; =miden; =medir; medida; calcul*"
        ),
    ),
    Topic(
        "hours",
        _cues(
            "hours; schedul*; timetable; what time; which time; what shift; which shift; "
            "shift match; van run*; van leav*; van arriv*; van depart*; when van; "
            "pick up time; pickup time; my shift; i work; count as match*; "
            "horario*; hora*; mi =turno; el =turno; que =turno; =turno de; trabajo de"
        ),
    ),
    Topic(
        "update",
        _cues(
            "update; updated; updating; chang* address; chang* zip; chang* shift; "
            "chang* record; chang* schedule; chang* info*; correct*; fix*; edit; portal; "
            "log in; sign in; new address; where change; how change; proof; what need do; "
            "what should do; keep seat; "
            "actualiz*; cambiar; cambio mi; corregi*; modific*; =prueba; comprobante; "
            "que tengo que hacer; que debo hacer; que hago; mantener"
        ),
    ),
    Topic(
        "deadline",
        _cues(
            "deadline; how long; how much time; more time; extension; extend; by when; "
            "until when; due date; when due; when need; when do i have; time frame; timeframe; "
            "=plazo; fecha limite; mas tiempo; prorroga; cuanto tiempo; hasta cuando; "
            "para cuando"
        ),
    ),
    Topic(
        "consequences",
        _cues(
            "what happens; what will happen; if i dont; if i do not; ignore; cancel*; "
            "lose seat; lose my; kick* out; remov*; terminat*; penalt*; affect*; subsid*; "
            "que pasa; que pasara; si no respondo; si no contesto; perder*; =pierdo; quitar*; "
            "sacar*; afect*; subsidi*"
        ),
    ),
    Topic(
        "temporary",
        _cues(
            "temporar*; on leave; leave of absence; medical leave; family leave; maternity; "
            "paternity; parental; vacation; pto; sick; staying with; moved; moving; "
            "relocat*; for now; short term; few weeks; few months; "
            "licencia; vacacion*; temporal*; me mude; mudanza; mudando; incapacidad; "
            "enferm*; por ahora; unas semanas"
        ),
    ),
    Topic(
        "contact",
        _cues(
            "who contact; contact; talk to; talk with; speak to; speak with; phone; call; "
            "email someone; a person; human; coordinator; "
            "con quien; contactar; hablar; llamar; telefono; una persona; alguien; "
            "coordinador*"
        ),
    ),
    Topic(
        "appeal",
        _cues(
            "appeal; dispute; disagree; contest; challenge; mistake; wrong; error; incorrect; "
            "not right; unfair; reconsider; not true; "
            "apelar; apelacion; reclam*; no estoy de acuerdo; equivoca*; incorrect*; injust*; "
            "no es cierto"
        ),
    ),
)

_WORD = re.compile(r"[a-z0-9]+")


# "what's" must read "what is" for the cue "what wrong" to match; "don't" stays "dont".
_CONTRACTIONS = tuple(
    (re.compile(rf"'{ending}\b"), f" {word}")
    for ending, word in (("s", "is"), ("re", "are"), ("m", "am"), ("ve", "have"), ("ll", "will"))
)


def words(text: str) -> list[str]:
    """Lower-case words with accents folded; "what's" reads "what is", "don't" "dont"."""
    text = normalise(text)
    for pattern, expansion in _CONTRACTIONS:
        text = pattern.sub(expansion, text)
    return _WORD.findall(text.replace("'", ""))


def detect_topics(question: str) -> list[str]:
    """The topics a question asks about, in answer order."""
    tokens = words(question[:MAX_QUESTION_CHARS])
    where: dict[str, list[int]] = {}
    for index, token in enumerate(tokens):
        where.setdefault(token, []).append(index)
    return [
        topic.name
        for topic in TOPICS
        if any(_phrase_in(cue.split(), tokens, where) for cue in topic.cues)
    ]


def _phrase_in(cue: list[str], tokens: list[str], where: dict[str, list[int]]) -> bool:
    # Each distinct word is compared with a cue's first word once, not once per occurrence.
    starts = (i for token, found in where.items() if _word_matches(token, cue[0]) for i in found)
    return any(_rest_follows(cue[1:], tokens, start) for start in starts)


def _rest_follows(rest: list[str], tokens: list[str], after: int) -> bool:
    if not rest:
        return True
    stop = min(len(tokens), after + 2 + MAX_GAP)
    return any(
        _word_matches(tokens[index], rest[0]) and _rest_follows(rest[1:], tokens, index)
        for index in range(after + 1, stop)
    )


@lru_cache(maxsize=65536)
def _word_matches(token: str, cue: str) -> bool:
    if cue.startswith("="):
        return token == cue[1:]
    if cue.endswith("*"):
        stem = cue[:-1]
        # A stem is a shorter word than it looks ("remov" in "remote" is one
        # letter off), so it needs one more letter than a word per typo.
        allowed = _typos_allowed(stem[:-1])
        if not allowed or token[:1] != stem[:1]:
            return token.startswith(stem)
        # A typo can leave the stem a letter shorter or longer within the word.
        return any(
            _edit_distance(token[:length], stem) <= allowed
            for length in range(len(stem) - 1, len(stem) + 2)
            if len(token) >= length
        )
    # Typos rarely hit the first letter, and allowing it turns "yours" into "hours".
    if token == cue or token[:1] != cue[:1]:
        return token == cue
    return _edit_distance(token, cue) <= _typos_allowed(cue)


def _typos_allowed(word: str) -> int:
    # Short words must match exactly: "van" one letter off is "can" or "man".
    if len(word) <= 4:
        return 0
    return 1 if len(word) <= 7 else 2


def _edit_distance(a: str, b: str) -> int:
    """Edit distance counting a swap of neighbours as one typo (optimal string alignment)."""
    if a == b:
        return 0
    if abs(len(a) - len(b)) > 2:
        return 3  # beyond any typo we allow
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                best = min(best, previous2[j - 2] + 1)
            current.append(best)
        previous2, previous = previous, current
    return previous[-1]


# --- Answering ------------------------------------------------------------------------------


def answer_question(question: str, facts: RiderFacts) -> list[str]:
    """Paragraphs answering each topic asked, from the rider's facts; next step last."""
    topics = detect_topics(question)
    paragraphs: list[str] = []
    for topic in topics:
        for paragraph in ANSWERS[topic](facts):
            # "Why" already states the findings that "distance" or "hours" would repeat.
            if not any(paragraph in earlier for earlier in paragraphs):
                paragraphs.append(paragraph)
    if not topics:
        paragraphs.extend(_general(facts))
    paragraphs.append(next_step(facts))
    return paragraphs


def finding_sentences(facts: RiderFacts) -> list[str]:
    """What we found about this rider, one sentence per failing check."""
    sentences: list[str] = []
    if facts.location_failed:
        sentences.append(_distance_sentence(facts))
    if facts.shift_failed:
        sentences.append(_shift_sentence(facts))
    return sentences


def _distance_sentence(facts: RiderFacts) -> str:
    home = f"Your home on record (ZIP {facts.home_zip})"
    limit = f"the limit for vanpool {facts.vanpool_id} is {facts.max_miles_text} miles"
    if facts.miles is None:
        return f"{home} is farther from {facts.measured_to_text} than {limit}."
    within = not facts.location_failed and facts.miles <= facts.max_miles
    verdict = ", so where you live is not a problem" if within else ""
    return (
        f"{home} is about {facts.miles_text} miles from {facts.measured_to_text}, "
        f"and {limit}{verdict}."
    )


def _shift_sentence(facts: RiderFacts) -> str:
    name = f" ({facts.shift_name})" if facts.shift_name else ""
    if facts.rider_hours:
        rider = f"Your shift on record{name} is {facts.rider_hours}"
    else:
        rider = "We have no working hours on record for you"
    if not facts.van_hours:
        return f"{rider}, which does not match the hours vanpool {facts.vanpool_id} runs."
    borrowed = " (the hours most of its riders work)" if facts.van_hours_from_riders else ""
    sentence = f"{rider}, and vanpool {facts.vanpool_id} runs {facts.van_hours}{borrowed}."
    if facts.days_compared and facts.shift_failed:
        sentence += (
            f" On {facts.days_text}, your start or end time was more than "
            f"{facts.tolerance_minutes} minutes from the van's."
        )
    elif not facts.shift_failed and facts.days_compared and not facts.days_mismatched:
        sentence += " Your hours match the van's, so your shift is not a problem."
    return sentence


def _why(facts: RiderFacts) -> list[str]:
    found = finding_sentences(facts)
    if not found:
        return [
            f"Your record currently matches vanpool {facts.vanpool_id}, so nothing about "
            "your seat needs to change."
        ]
    return [
        f"We check every seat in the {facts.program_name} against the rider's record, so "
        "that subsidised seats go to people who can use them. Your seat was flagged because "
        "your record does not match the van. " + " ".join(found)
    ]


def _record(facts: RiderFacts) -> list[str]:
    """What we hold about the rider, checked or not: their own data only."""
    held = [f"home ZIP {facts.home_zip}"]
    if facts.miles is not None:
        held[0] += f" (about {facts.miles_text} miles from {facts.measured_to_text})"
    if facts.rider_hours:
        name = f"{facts.shift_name}, " if facts.shift_name else ""
        held.append(f"shift {name}{facts.rider_hours}")
    return [
        f"Here is what our check used from your record: {'; '.join(held)}. You can see and "
        f"correct your full record in the employee portal at {facts.portal_url}."
    ]


def _distance(facts: RiderFacts) -> list[str]:
    method = (
        DISTANCE_METHOD_OFFLINE.format(detour=round((settings.COMMUTE_CIRCUITY_FACTOR - 1) * 100))
        if settings.DISTANCE_PROVIDER == OFFLINE_DISTANCE_PROVIDER
        else DISTANCE_METHOD_ROUTED
    )
    policy = DISTANCE_POLICY.format(method=method, default=settings.DEFAULT_MAX_COMMUTE_MILES)
    if facts.miles is None and not facts.location_failed:
        return [policy]
    return [_distance_sentence(facts), policy]


def _hours(facts: RiderFacts) -> list[str]:
    policy = SHIFT_POLICY.format(
        window=settings.AUDIT_WINDOW_DAYS, tolerance=facts.tolerance_minutes
    )
    if not (facts.van_hours or facts.rider_hours):
        return [policy]
    return [_shift_sentence(facts), policy]


def _update(facts: RiderFacts) -> list[str]:
    answer = UPDATE_POLICY.format(portal=facts.portal_url, record=facts.record_text)
    if facts.shift_failed:
        answer += " " + UPDATE_SHIFT_NOTE
    return [answer]


def _deadline(facts: RiderFacts) -> list[str]:
    if facts.deadline is None:
        when = NO_DEADLINE.format(wait=settings.REPLY_WAIT_DAYS)
    else:
        when = f"Please update your record or reply by {facts.deadline_text}."
    return [f"{when} {DEADLINE_POLICY}"]


def _consequences(facts: RiderFacts) -> list[str]:
    by = f" by {facts.deadline_text}" if facts.deadline else ""
    return [CONSEQUENCE_POLICY.format(by=by, max_checks=settings.MAX_REAUDITS)]


def _temporary(facts: RiderFacts) -> list[str]:
    leave = ""
    if facts.days_on_leave:
        days = f"{facts.days_on_leave} day{'s' if facts.days_on_leave != 1 else ''}"
        leave = f" (we left out {days} of yours)"
    return [TEMPORARY_POLICY.format(leave=leave, portal=facts.portal_url)]


def _contact(facts: RiderFacts) -> list[str]:
    return [
        CONTACT_POLICY.format(
            program=facts.program_name, contact=facts.contact_email, case_id=facts.case_id
        )
    ]


def _appeal(facts: RiderFacts) -> list[str]:
    return [APPEAL_POLICY]


def _general(facts: RiderFacts) -> list[str]:
    return [
        *_why(facts),
        NOT_ANSWERED.format(contact=facts.contact_email, case_id=facts.case_id),
    ]


ANSWERS: dict[str, Callable[[RiderFacts], list[str]]] = {
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


def next_step(facts: RiderFacts) -> str:
    """The closing paragraph: what the rider should do now."""
    if not facts.failed_checks:
        return (
            "What to do next: nothing. If your home address or shift changes later, "
            f"please keep your record up to date in the employee portal at {facts.portal_url}."
        )
    when = f"by {facts.deadline_text}" if facts.deadline else "as soon as you can"
    return (
        f"What to do next: if your {facts.record_text} has changed, update it in the employee "
        f"portal at {facts.portal_url} and reply to this email to say it's done; if your "
        f"record is right, reply and tell us what explains the difference. Please do one or "
        f"the other {when}."
    )
