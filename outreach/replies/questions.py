"""What a rider's question asks about, and which language it is written in.

Read by the offline responder (``outreach.replies.answers``): topics are
detected in English or Spanish, tolerant of typos and case; the language
decides which copy answers. The question is only read, never obeyed.
"""

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from outreach.replies.text_readings import normalise

Lang = Literal["en", "es"]


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
