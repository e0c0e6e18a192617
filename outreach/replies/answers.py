"""Answer a rider's question from their case facts and the program's policy.

An offline, rules-based responder (the reply loop's ``question`` bucket): the
topics a question touches are detected in English or Spanish, tolerant of
typos and case, and each is answered from the rider's own ``RiderFacts`` and
the policy paragraphs below (numbers from settings). A question no topic
matches gets a general answer: what we found and what the rider can do. Every
answer ends with the next step. The answer is written in the question's
language (English or Spanish, ``question_language``): the same facts, numbers,
IDs and dates in either. The question is only ever read, never echoed or
obeyed: it is untrusted text (principle 5).
"""

import datetime as dt
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from django.conf import settings
from django.utils.dateformat import format as format_date

from outreach.compose import RiderFacts
from outreach.replies.guardrails import normalise

Lang = Literal["en", "es"]

OFFLINE_DISTANCE_PROVIDER = "vanpools.geo.OfflineDistanceProvider"


# --- What an answer says, in words a rider reads ---------------------------------------------


@dataclass(frozen=True)
class Phrases:
    """Every sentence an answer can say, in one language.

    ``{names}`` are filled from the rider's facts and settings by the builders
    below, the same for every language, so a translation cannot change a
    number. ``date`` and ``hours`` write a deadline and a schedule.
    """

    # Program policy.
    distance_policy: str
    distance_method_offline: str
    distance_method_routed: str
    shift_policy: str
    update_policy: str
    update_shift_note: str
    deadline_policy: str
    no_deadline: str
    reply_by: str
    consequence_policy: str
    consequence_by: str
    temporary_policy: str
    leave_left_out: str
    one_day: str
    many_days: str
    contact_policy: str
    appeal_policy: str
    not_answered: str
    # What we found.
    why_flagged: str
    why_cleared: str
    distance_measured: str
    distance_unmeasured: str
    distance_within: str
    shift_name: str
    shift_on_record: str
    no_hours_on_record: str
    shift_no_van: str
    shift_van: str
    hours_from_riders: str
    days_off: str
    hours_match: str
    record_held: str
    held_zip: str
    held_miles: str
    held_shift: str
    held_shift_name: str
    next_step_nothing: str
    next_step: str
    next_step_by: str
    next_step_soon: str
    # The rider's facts in words.
    site_named: str
    site: str
    site_no_pickup: str
    pickup_at: str
    pickup: str
    days_one: str
    days_all: str
    days_some: str
    record_location: str
    record_shift: str
    record_or: str
    record_any: str
    date: Callable[[dt.date], str]
    hours: Callable[[str], str]


def _english_date(day: dt.date) -> str:
    return format_date(day, "l, F j")  # as RiderFacts.deadline_text: "Sunday, November 29"


EN = Phrases(
    distance_policy=(
        "How we measure: from your home (the home coordinates on your record when there are "
        "any, otherwise the centre of your home ZIP code) to the van's pickup point. {method} "
        "Seats are for riders who live within the van's limit of the pickup: {default} miles "
        "unless the program has set a different limit for that van."
    ),
    distance_method_offline=(
        "We take the straight-line distance and add {detour}% to allow for roads, so the "
        "figure is an estimate of the drive, not an exact route."
    ),
    distance_method_routed="We use the driving distance from our routing service.",
    shift_policy=(
        "How we compare hours: on each workday in the {window} days we check, your shift "
        "needs to start within {tolerance} minutes of the van's arrival at work and end within "
        "{tolerance} minutes of its departure. Days off, and leave or PTO recorded in HR, are "
        "not counted against you."
    ),
    update_policy=(
        "To update your record, sign in to the employee portal at {portal} and correct your "
        "{record} there. Then reply to this email to say it's done, and we'll check again "
        "straight away."
    ),
    update_shift_note=(
        "If your shift is set by your manager or HR rather than by you, ask them to update it "
        "in the portal."
    ),
    deadline_policy=(
        "If you need more time, reply with why and roughly when you can sort it out, if you "
        "haven't told us already. Nothing happens to your seat without a program coordinator "
        "reviewing it first, and they see your replies."
    ),
    no_deadline="You have {wait} days from our first email to update your record or reply.",
    reply_by="Please update your record or reply by {deadline}.",
    consequence_policy=(
        "If we don't hear from you{by}, we check your record once more. If it matches then, "
        "the check is closed and nothing changes. If it still doesn't match, a program "
        "coordinator reviews the evidence and decides whether to cancel your seat; if they do, "
        "we'll tell you by email. Each time you tell us you've updated your record we check "
        "again, up to {max_checks} times; if it still doesn't match after that, it goes to a "
        "coordinator the same way. No seat is cancelled automatically."
    ),
    consequence_by=" by {deadline}",
    temporary_policy=(
        "Leave and PTO that are recorded in HR are already left out of the shift "
        "check{leave}. If something temporary explains the difference (a leave, a short stay "
        "somewhere else, a temporary change of shift), reply and tell us what it is and when it "
        "ends; a program coordinator takes that into account before anything happens to your "
        "seat. If you have moved for good, please update your home address in the employee "
        "portal at {portal}."
    ),
    leave_left_out=" (we left out {days} of yours)",
    one_day="{n} day",
    many_days="{n} days",
    contact_policy=(
        "You can reply to this email at any time. You can also write to the {program} at "
        "{contact}; please mention case {case_id} so we can find your record quickly."
    ),
    appeal_policy=(
        "If you think we have this wrong, reply and tell us what is wrong, for example your "
        "actual home ZIP or the hours you really work. If your record in the employee portal "
        "is out of date, correcting it there is the quickest fix: we check again as soon as "
        "you reply. No seat is cancelled without a program coordinator reviewing the "
        "evidence, including what you tell us."
    ),
    not_answered=(
        "If this doesn't answer your question, write to {contact} and mention case "
        "{case_id}; a person from the program will get back to you."
    ),
    why_flagged=(
        "We check every seat in the {program} against the rider's record, so that subsidised "
        "seats go to people who can use them. Your seat was flagged because your record does "
        "not match the van. {found}"
    ),
    why_cleared=(
        "Your record currently matches vanpool {vanpool}, so nothing about your seat needs to "
        "change."
    ),
    distance_measured=(
        "Your home on record (ZIP {zip}) is about {miles} miles from {to}, and the limit for "
        "vanpool {vanpool} is {max} miles{within}."
    ),
    distance_unmeasured=(
        "Your home on record (ZIP {zip}) is farther from {to} than the limit for vanpool "
        "{vanpool} is {max} miles."
    ),
    distance_within=", so where you live is not a problem",
    shift_name=" ({name})",
    shift_on_record="Your shift on record{name} is {hours}",
    no_hours_on_record="We have no working hours on record for you",
    shift_no_van="{rider}, which does not match the hours vanpool {vanpool} runs.",
    shift_van="{rider}, and vanpool {vanpool} runs {hours}{borrowed}.",
    hours_from_riders=" (the hours most of its riders work)",
    days_off=(
        " On {days}, your start or end time was more than {tolerance} minutes from the van's."
    ),
    hours_match=" Your hours match the van's, so your shift is not a problem.",
    record_held=(
        "Here is what our check used from your record: {held}. You can see and correct your "
        "full record in the employee portal at {portal}."
    ),
    held_zip="home ZIP {zip}",
    held_miles=" (about {miles} miles from {to})",
    held_shift="shift {name}{hours}",
    held_shift_name="{name}, ",
    next_step_nothing=(
        "What to do next: nothing. If your home address or shift changes later, please keep "
        "your record up to date in the employee portal at {portal}."
    ),
    next_step=(
        "What to do next: if your {record} has changed, update it in the employee portal at "
        "{portal} and reply to this email to say it's done; if your record is right, reply and "
        "tell us what explains the difference. Please do one or the other {when}."
    ),
    next_step_by="by {deadline}",
    next_step_soon="as soon as you can",
    site_named="the {site} work site",
    site="the work site",
    site_no_pickup="{site} (the van has no pickup point on record)",
    pickup_at="the van's pickup point at {address}",
    pickup="the van's pickup point",
    days_one="the one workday we compared",
    days_all="all {compared} workdays we compared",
    days_some="{mismatched} of the {compared} workdays we compared",
    record_location="home address",
    record_shift="shift",
    record_or=" or ",
    record_any="record",
    date=_english_date,
    hours=lambda hours: hours,
)

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


ES = Phrases(
    distance_policy=(
        "Cómo medimos: desde su domicilio (las coordenadas de su domicilio que figuran en su "
        "registro, si las hay; si no, el centro de su código postal) hasta el punto de "
        "recogida de la camioneta. {method} Los lugares son para pasajeros que viven dentro "
        "del límite de distancia de la camioneta al punto de recogida: {default} millas, a "
        "menos que el programa haya fijado un límite distinto para esa camioneta."
    ),
    distance_method_offline=(
        "Tomamos la distancia en línea recta y le sumamos un {detour}% por las calles y "
        "carreteras, así que la cifra es una estimación del trayecto en auto, no una ruta "
        "exacta."
    ),
    distance_method_routed="Usamos la distancia en auto que calcula nuestro servicio de rutas.",
    shift_policy=(
        "Cómo comparamos los horarios: en cada día laborable de los {window} días que "
        "revisamos, su turno debe empezar a no más de {tolerance} minutos de la hora en que la "
        "camioneta llega al trabajo y terminar a no más de {tolerance} minutos de la hora en "
        "que sale. Los días libres, y las licencias o el tiempo libre pagado (PTO) registrados "
        "en Recursos Humanos, no cuentan en su contra."
    ),
    update_policy=(
        "Para actualizar su registro, inicie sesión en el portal de empleados, {portal}, y "
        "corrija allí su {record}. Luego responda a este correo para avisarnos que ya lo hizo, "
        "y volveremos a revisar de inmediato."
    ),
    update_shift_note=(
        "Si su turno lo asigna su gerente o Recursos Humanos y no usted, pídales que lo "
        "actualicen en el portal."
    ),
    deadline_policy=(
        "Si necesita más tiempo, responda explicando por qué y, más o menos, cuándo podrá "
        "resolverlo, si todavía no nos lo ha dicho. No se hace nada con su lugar sin que antes "
        "lo revise un coordinador del programa, y el coordinador ve sus respuestas."
    ),
    no_deadline=(
        "Tiene {wait} días a partir de nuestro primer correo para actualizar su registro o "
        "responder."
    ),
    reply_by="Por favor, actualice su registro o responda a más tardar el {deadline}.",
    consequence_policy=(
        "Si no tenemos noticias suyas{by}, revisaremos su registro una vez más. Si entonces "
        "coincide, la revisión se cierra y no cambia nada. Si sigue sin coincidir, un "
        "coordinador del programa revisa la evidencia y decide si cancela su lugar; si lo "
        "cancela, se lo avisaremos por correo electrónico. Cada vez que nos diga que actualizó "
        "su registro, volvemos a revisarlo, hasta {max_checks} veces; si después de eso sigue "
        "sin coincidir, el caso pasa a un coordinador de la misma manera. Ningún lugar se "
        "cancela automáticamente."
    ),
    consequence_by=" para el {deadline}",
    temporary_policy=(
        "Las licencias y el tiempo libre pagado (PTO) registrados en Recursos Humanos ya "
        "quedan fuera de la revisión de turnos{leave}. Si algo temporal explica la diferencia "
        "(una licencia, una estancia corta en otro lugar, un cambio temporal de turno), "
        "responda y díganos qué es y cuándo termina; un coordinador del programa lo tendrá en "
        "cuenta antes de que pase algo con su lugar. Si se mudó de forma permanente, por favor "
        "actualice la dirección de su domicilio en el portal de empleados, {portal}."
    ),
    leave_left_out=" (en su caso dejamos fuera {days})",
    one_day="{n} día",
    many_days="{n} días",
    contact_policy=(
        "Puede responder a este correo en cualquier momento. También puede escribir al "
        "{program} a {contact}; por favor, mencione el caso {case_id} para que podamos "
        "encontrar su registro rápidamente."
    ),
    appeal_policy=(
        "Si cree que nos equivocamos, responda y díganos qué está mal, por ejemplo, el código "
        "postal real de su domicilio o el horario en que realmente trabaja. Si su registro en "
        "el portal de empleados está desactualizado, corregirlo allí es la solución más "
        "rápida: volvemos a revisar en cuanto usted responda. Ningún lugar se cancela sin que "
        "un coordinador del programa revise la evidencia, incluido lo que usted nos diga."
    ),
    not_answered=(
        "Si esto no responde a su pregunta, escriba a {contact} y mencione el caso "
        "{case_id}; una persona del programa se comunicará con usted."
    ),
    why_flagged=(
        "En el {program} revisamos cada lugar comparándolo con el registro de quien lo ocupa, "
        "para que los lugares subsidiados sean para personas que pueden usarlos. Su lugar fue "
        "marcado porque su registro no coincide con la camioneta. {found}"
    ),
    why_cleared=(
        "Actualmente su registro coincide con el vanpool {vanpool}, así que no es necesario "
        "cambiar nada sobre su lugar."
    ),
    distance_measured=(
        "Su domicilio registrado (código postal {zip}) está a unas {miles} millas del {to}, y "
        "el límite para el vanpool {vanpool} es de {max} millas{within}."
    ),
    distance_unmeasured=(
        "Su domicilio registrado (código postal {zip}) está más lejos del {to} que el límite "
        "para el vanpool {vanpool}, que es de {max} millas."
    ),
    distance_within=", así que el lugar donde vive no es un problema",
    shift_name=" ({name})",
    shift_on_record="Su turno registrado{name} es {hours}",
    no_hours_on_record="No tenemos un horario de trabajo registrado para usted",
    shift_no_van="{rider}, lo cual no coincide con el horario del vanpool {vanpool}.",
    shift_van="{rider}, y el horario del vanpool {vanpool} es {hours}{borrowed}.",
    hours_from_riders=" (el horario en que trabaja la mayoría de sus pasajeros)",
    days_off=(
        " En {days}, su hora de entrada o de salida tuvo una diferencia de más de {tolerance} "
        "minutos con la de la camioneta."
    ),
    hours_match=(
        " Su horario coincide con el de la camioneta, así que su turno no es un problema."
    ),
    record_held=(
        "Estos son los datos de su registro que usó nuestra revisión: {held}. Puede ver y "
        "corregir su registro completo en el portal de empleados, {portal}."
    ),
    held_zip="código postal de su domicilio {zip}",
    held_miles=" (a unas {miles} millas del {to})",
    held_shift="turno {name}{hours}",
    held_shift_name="{name}, ",
    next_step_nothing=(
        "Qué hacer ahora: nada. Si más adelante cambia su domicilio o su turno, por favor "
        "mantenga su registro al día en el portal de empleados, {portal}."
    ),
    next_step=(
        "Qué hacer ahora: si cambió su {record}, actualice el dato en el portal de empleados, "
        "{portal}, y responda a este correo para avisarnos que ya lo hizo; si su registro es "
        "correcto, responda y díganos qué explica la diferencia. Por favor, haga una de las dos "
        "cosas {when}."
    ),
    next_step_by="a más tardar el {deadline}",
    next_step_soon="lo antes posible",
    site_named="centro de trabajo {site}",
    site="centro de trabajo",
    site_no_pickup="{site} (la camioneta no tiene un punto de recogida registrado)",
    pickup_at="punto de recogida de la camioneta en {address}",
    pickup="punto de recogida de la camioneta",
    days_one="el único día laborable que comparamos",
    days_all="los {compared} días laborables que comparamos",
    days_some="{mismatched} de los {compared} días laborables que comparamos",
    record_location="dirección",
    record_shift="turno",
    record_or=" o ",
    record_any="registro",
    date=_spanish_date,
    hours=_spanish_hours,
)

PHRASES: dict[Lang, Phrases] = {"en": EN, "es": ES}


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
            "appeal; dispute; disagree; =contest; =contested; =contesting; challenge; "
            "mistake; wrong; error; incorrect; "
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


# --- Which language the rider wrote in ------------------------------------------------------


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Hand-written rather than a detector library: none is installed, a rider's
# question is a line or two (too short for a statistical detector to be
# sure of), and all we need to tell apart is Spanish from English. Words that
# are common in both ("no", "me", "a", "he") count for neither.
SPANISH_WORDS = _word_set(
    """
    al con cual cuales cuando cuanto cuanta cuantos cuantas como de del donde el ella en es esa
    ese eso esta estan estas este esto estos estoy hay la las le les lo los mi mis muy nos para
    pero por porque puedo que quien se si sin soy su sus tengo tiene todavia un una usted
    ustedes y ya yo hola gracias favor buenos buenas dias necesito quiero entiendo
    """
)
ENGLISH_WORDS = _word_set(
    """
    am an and are at be but can cant could did do does dont for from have how i if im in is it
    its just my not of on or please should so than thank thanks that the there this to was we
    what whats when where which who why will with would you your
    """
)
SPANISH_LETTERS = frozenset("áéíóúüñ")
SPANISH_MARKS = ("¿", "¡")
# Spanish must outnumber English and make up this share of all the words, so a
# Spanish name or a "gracias" in an English email does not switch languages.
SPANISH_SHARE = 0.3
_LETTERS = re.compile(r"[^\W\d_]+")


def question_language(text: str) -> Lang:
    """'es' when the question is written mostly in Spanish, otherwise 'en'."""
    text = unicodedata.normalize("NFC", text[:MAX_QUESTION_CHARS]).casefold()
    tokens = _LETTERS.findall(text.replace("'", "").replace("\u2019", ""))
    spanish = sum(_is_spanish(token) for token in tokens)
    spanish += any(mark in text for mark in SPANISH_MARKS)
    english = sum(token in ENGLISH_WORDS for token in tokens)
    if spanish > english and spanish >= SPANISH_SHARE * len(tokens):
        return "es"
    return "en"


def _is_spanish(token: str) -> bool:
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c)
    )
    return folded in SPANISH_WORDS or not SPANISH_LETTERS.isdisjoint(token)


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
        return say.distance_unmeasured.format(**fill)
    within = not facts.location_failed and facts.miles <= facts.max_miles
    return say.distance_measured.format(
        **fill, miles=facts.miles_text, within=say.distance_within if within else ""
    )


def _shift_sentence(facts: RiderFacts, lang: Lang) -> str:
    say = PHRASES[lang]
    name = say.shift_name.format(name=facts.shift_name) if facts.shift_name else ""
    if facts.rider_hours:
        rider = say.shift_on_record.format(name=name, hours=say.hours(facts.rider_hours))
    else:
        rider = say.no_hours_on_record
    if not facts.van_hours:
        return say.shift_no_van.format(rider=rider, vanpool=facts.vanpool_id)
    sentence = say.shift_van.format(
        rider=rider,
        vanpool=facts.vanpool_id,
        hours=say.hours(facts.van_hours),
        borrowed=say.hours_from_riders if facts.van_hours_from_riders else "",
    )
    if facts.days_compared and facts.shift_failed:
        sentence += say.days_off.format(days=_days(facts, lang), tolerance=facts.tolerance_minutes)
    elif not facts.shift_failed and facts.days_compared and not facts.days_mismatched:
        sentence += say.hours_match
    return sentence


def _why(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    found = finding_sentences(facts, lang)
    if not found:
        return [say.why_cleared.format(vanpool=facts.vanpool_id)]
    return [say.why_flagged.format(program=facts.program_name, found=" ".join(found))]


def _record(facts: RiderFacts, lang: Lang) -> list[str]:
    """What we hold about the rider, checked or not: their own data only."""
    say = PHRASES[lang]
    held = [say.held_zip.format(zip=facts.home_zip)]
    if facts.miles is not None:
        held[0] += say.held_miles.format(miles=facts.miles_text, to=_measured_to(facts, lang))
    if facts.rider_hours:
        name = say.held_shift_name.format(name=facts.shift_name) if facts.shift_name else ""
        held.append(say.held_shift.format(name=name, hours=say.hours(facts.rider_hours)))
    return [say.record_held.format(held="; ".join(held), portal=facts.portal_url)]


def _distance(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    method = (
        say.distance_method_offline.format(
            detour=round((settings.COMMUTE_CIRCUITY_FACTOR - 1) * 100)
        )
        if settings.DISTANCE_PROVIDER == OFFLINE_DISTANCE_PROVIDER
        else say.distance_method_routed
    )
    policy = say.distance_policy.format(method=method, default=settings.DEFAULT_MAX_COMMUTE_MILES)
    if facts.miles is None and not facts.location_failed:
        return [policy]
    return [_distance_sentence(facts, lang), policy]


def _hours(facts: RiderFacts, lang: Lang) -> list[str]:
    policy = PHRASES[lang].shift_policy.format(
        window=settings.AUDIT_WINDOW_DAYS, tolerance=facts.tolerance_minutes
    )
    if not (facts.van_hours or facts.rider_hours):
        return [policy]
    return [_shift_sentence(facts, lang), policy]


def _update(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    answer = say.update_policy.format(portal=facts.portal_url, record=_record_name(facts, lang))
    if facts.shift_failed:
        answer += " " + say.update_shift_note
    return [answer]


def _deadline(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    if facts.deadline is None:
        when = say.no_deadline.format(wait=settings.REPLY_WAIT_DAYS)
    else:
        when = say.reply_by.format(deadline=say.date(facts.deadline))
    return [f"{when} {say.deadline_policy}"]


def _consequences(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    by = say.consequence_by.format(deadline=say.date(facts.deadline)) if facts.deadline else ""
    return [say.consequence_policy.format(by=by, max_checks=settings.MAX_REAUDITS)]


def _temporary(facts: RiderFacts, lang: Lang) -> list[str]:
    say = PHRASES[lang]
    leave = ""
    if facts.days_on_leave:
        days = say.one_day if facts.days_on_leave == 1 else say.many_days
        leave = say.leave_left_out.format(days=days.format(n=facts.days_on_leave))
    return [say.temporary_policy.format(leave=leave, portal=facts.portal_url)]


def _contact(facts: RiderFacts, lang: Lang) -> list[str]:
    return [
        PHRASES[lang].contact_policy.format(
            program=facts.program_name, contact=facts.contact_email, case_id=facts.case_id
        )
    ]


def _appeal(facts: RiderFacts, lang: Lang) -> list[str]:
    return [PHRASES[lang].appeal_policy]


def _general(facts: RiderFacts, lang: Lang) -> list[str]:
    return [
        *_why(facts, lang),
        PHRASES[lang].not_answered.format(contact=facts.contact_email, case_id=facts.case_id),
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
        return say.next_step_nothing.format(portal=facts.portal_url)
    if facts.deadline:
        when = say.next_step_by.format(deadline=say.date(facts.deadline))
    else:
        when = say.next_step_soon
    return say.next_step.format(
        record=_record_name(facts, lang), portal=facts.portal_url, when=when
    )


# --- The rider's facts in words (RiderFacts' own properties, in either language) -------------


def _measured_to(facts: RiderFacts, lang: Lang) -> str:
    """What the distance runs to, in words a rider recognises."""
    say = PHRASES[lang]
    if facts.measured_to == "work_site":
        site = say.site_named.format(site=facts.work_site) if facts.work_site else say.site
        return say.site_no_pickup.format(site=site)
    if facts.pickup_address:
        return say.pickup_at.format(address=facts.pickup_address)
    return say.pickup


def _days(facts: RiderFacts, lang: Lang) -> str:
    """'all 5 workdays we compared', '2 of the 5 workdays we compared'."""
    say = PHRASES[lang]
    compared, mismatched = facts.days_compared, facts.days_mismatched
    if compared == 1:
        return say.days_one
    template = say.days_all if mismatched == compared else say.days_some
    return template.format(compared=compared, mismatched=mismatched)


def _record_name(facts: RiderFacts, lang: Lang) -> str:
    """What the rider may need to correct: 'home address', 'shift', or both."""
    say = PHRASES[lang]
    parts = [
        name
        for check, name in (("location", say.record_location), ("shift", say.record_shift))
        if check in facts.failed_checks
    ]
    return say.record_or.join(parts) or say.record_any
