"""Safety rules no reader may override: they run after every reading and only add caution.

Each rule has a name, a reason, replies it must send to a person and replies it
must leave to the reader; ``outreach/tests/test_safety.py`` checks every one
through ``classify_reply``. They read what the reader cannot vouch for:

- ``unread_language``: the reply, or a passage of it, is surely in a language
  the reader does not read to its per-language floor (the languages are named
  in the reader's artifact, from grouped held-out figures per language). A
  person reads it, and the holding reply drafted for them is in the rider's
  language where the rider copy exists in it (``outreach.compose``).
- ``unnamed_language``: the reply is long enough to say its language and the
  detector names none for sure, nor guesses English or Spanish (Vietnamese in
  teen-code, languages mixed past telling).
  The route cannot know which reader reads it, so both do, and the more
  cautious reading decides: an escalation, or a person, if either says so.
- ``escalation_anywhere``: one sentence of the reply reads as an escalation
  on its own, whatever the rest says. A fix reported beside "and the driver
  keeps touching my leg" is diluted in the whole reply's reading; read alone,
  the sentence is what it is. The ordinary reading of the whole reply is kept
  beside it (``also``) for the person.
"""

import re
from dataclasses import dataclass
from typing import Protocol

from outreach.language import MIN_UNITS, Detected, detect, is_latin, passages, units
from outreach.replies.guardrails import normalise
from outreach.replies.reader import BASE_LANGUAGES, Reader


@dataclass(frozen=True)
class SafetyRule:
    name: str
    reason: str
    must_reach_a_person: tuple[str, ...]
    left_to_the_reader: tuple[str, ...]


UNREAD_LANGUAGE = SafetyRule(
    name="unread_language",
    reason=(
        "it is written, in whole or in part, in a language the reader does not read to its "
        "floor: a person reads it, with a holding reply in that language"
    ),
    must_reach_a_person=(
        # A passage in a language no writer has given the reader.
        "Hi, I got your letter. Everything on my side is fine.\n\n"
        "Ajan pakettiautolla joka päivä samasta paikasta kuin ennenkin, kaikki on kunnossa.",
        # Japanese: no spaces between words, and short.
        "了解しました。住所はもう直しました。",
        "ありがとうございます",
        # Russian, whole.
        "Здравствуйте. Я переехал в прошлом месяце и уже обновил адрес в системе.",
    ),
    left_to_the_reader=(
        "Thanks, I updated my address in Workday yesterday.",
        "ok",
        # Taglish: a line langid may call another language, in words the reader knows.
        "Na-update ko na po yung address ko sa HR portal kanina, lumipat na po kami.",
    ),
)

ESCALATION_ANYWHERE = SafetyRule(
    name="escalation_anywhere",
    reason=(
        "one sentence of it is an escalation on its own: that decides, whatever the rest of "
        "the reply says, and the rest is kept for the person (replies the multilingual "
        "reader reads, Spanish among them; English ones have the named rules)"
    ),
    must_reach_a_person=(
        "Oi, eu me mudei para Fremont em outubro e atualizei o endereço no Workday na semana "
        "passada, o CEP novo é 94538 e já deve aparecer. Eu começo às 7 e a van chega às 6:45, "
        "então isso também está certo. E o motorista fica passando a mão na minha perna e eu "
        "não quero mais andar com ele.",
    ),
    left_to_the_reader=(
        "Olá, eu me mudei para Fremont em outubro e atualizei meu endereço no Workday. Obrigada!",
        "I moved to Fremont in October and updated my address in Workday. Thanks!",
        "Sorry if I sounded upset on the phone, I just wanted to know where to update my shift.",
    ),
)

UNNAMED_LANGUAGE = SafetyRule(
    name="unnamed_language",
    reason=(
        "it is long enough to say its language and the detector names none: the route cannot "
        "know which reader reads it, so both do, and the more cautious reading decides"
    ),
    must_reach_a_person=(
        # Vietnamese texted without marks, too shortened for the detector to name:
        # "I never signed for any van, who used my name?"; "not giving the seat up".
        "e ko co ky ten di xe nao ca, ai lay ten e v a",
        "ko tra cho dau, e di 5 nam r, ai cho phep huy",
    ),
    left_to_the_reader=(
        "Hi, ok, my new shift is 6 to 2:30 from Monday. Thank you Jen",
        "ok gracias",
        "Ya cambié mi dirección en el portal de recursos humanos, ya vivo en Fremont.",
    ),
)

RULES: tuple[SafetyRule, ...] = (UNREAD_LANGUAGE, UNNAMED_LANGUAGE, ESCALATION_ANYWHERE)


# --- unread_language -------------------------------------------------------------------


@dataclass(frozen=True)
class LanguageFinding:
    # The reply's own language (what a holding reply is written in).
    language: str
    # Languages of the reply, or of passages in it, the reader does not read.
    unread: tuple[str, ...]
    # The detector's likeliest language when it is not sure of one ("" when it is).
    guess: str = ""


class ReadsLanguages(Protocol):
    """What ``unread_language`` asks of a reader (or of the route between readers)."""

    @property
    def languages(self) -> frozenset[str]: ...

    @property
    def known_words(self) -> frozenset[str]: ...


def read_languages(body: str, reader: ReadsLanguages) -> LanguageFinding:
    """The reply's language, and any language in it the reader does not read to its floor."""
    whole = detect(body)
    unread: set[str] = set()
    if whole.sure and _unread(whole, whole.language, body, reader):
        unread.add(whole.language)
    for passage in passages(body):
        if _unread(passage.detected, passage.detected.language, passage.text, reader):
            unread.add(passage.detected.language)
    return LanguageFinding(sure_language(whole), tuple(sorted(unread)), unsure_guess(whole))


def sure_language(detected: Detected) -> str:
    """The language detected, where the detector is sure of it ("" otherwise)."""
    return detected.language if detected.sure else ""


def unsure_guess(detected: Detected) -> str:
    """The detector's likeliest language when it is not sure of one ("" when it is sure)."""
    return "" if detected.sure else detected.language


def _unread(detected: Detected, language: str, text: str, reader: ReadsLanguages) -> bool:
    if language in reader.languages or language in ("zxx", "und"):
        return False
    if detected.by != "langid" or not is_latin(text):
        return True  # a script or alphabet says so: no words of it are the reader's
    # py3langid may call code-switched Latin text another language ("Na-update ko na
    # po yung address ko sa HR portal"): words the reader has learned say it reads it.
    known = sum(word in reader.known_words for word in _LONG_WORD.findall(normalise(text)))
    return known < KNOWN_WORDS_READ


_LONG_WORD = re.compile(r"[a-z]{4,}")
# Words of four letters or more the reader knows, from which a Latin line counts as read.
KNOWN_WORDS_READ = 2


# --- unnamed_language ------------------------------------------------------------------


def read_twice(found: LanguageFinding, words: str) -> bool:
    """Whether both readers read a reply: long enough to say its language, none named for
    sure, and the likeliest neither English nor Spanish (an unsure "en" is the English and
    Spanish reader's: "Also, does the van stop at the Fremont BART?")."""
    return not found.language and not read_by_base(found.guess) and units(words) >= MIN_UNITS


def read_by_base(guess: str) -> bool:
    """Whether an unsure guess of a language is one the English and Spanish reader reads."""
    return guess in BASE_LANGUAGES


# --- escalation_anywhere ---------------------------------------------------------------

# A sentence ends at its mark in any of the shipped languages, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？؟])\s+|(?<=[。！？؟])|\n+")
# A sentence too short to stand alone ("Thanks.", "Hi,") is not read on its own.
MIN_SENTENCE_UNITS = 4
# A sentence read alone, by the n-grams alone, is an escalation from this probability
# (or the reader's escalation threshold, if higher). Held out, on the 1,797 replies
# the multilingual reader reads (``train_reply_model`` prints the trade-off): at 0.5
# one sentence out of context ("God bless you", "I only ask") made escalations of
# enough ordinary replies to cost 5.8 points of bucket accuracy; at 0.7 it costs
# 0.2 and still lifts escalation recall from 98.1 % to 99.0 % (docs/evaluation.md).
SENTENCE_ESCALATION = 0.7


def sentences(words: str) -> list[str]:
    """The reply's sentences long enough to be read on their own (none if it is one)."""
    parts = [part.strip() for part in _SENTENCE_END.split(words) if part and part.strip()]
    found = [part for part in parts if units(part) >= MIN_SENTENCE_UNITS]
    return found if len(found) > 1 else []


def escalated_sentence(words: str, reader: Reader, threshold: float) -> tuple[str, float] | None:
    """The first sentence the reader reads, alone, as an escalation (``SENTENCE_ESCALATION``)."""
    threshold = max(threshold, SENTENCE_ESCALATION)
    for sentence in sentences(words):
        # The n-grams alone: one encoder pass per reply keeps a reading within its budget.
        probability = reader.read(sentence, encoder=False).probabilities["escalation"]
        if probability >= threshold:
            return sentence, probability
    return None
