"""Which language a rider is written to in, and how that was decided.

The order, first that applies:

1. ``asked``: the language the rider asked for (a reply that is only a
   language's name, ``outreach.replies.language_requests``). It comes before
   the roster's because it is the rider's own word, and HR's next export
   would otherwise undo it.
2. ``roster``: the roster's ``preferred_language`` (imported, or set by staff).
3. ``reply``: the language of the rider's latest reply whose language the
   detector was sure of (``Message.language``, set when a reply is read).
4. ``program``: the program's default, ``PROGRAM_LANGUAGE``.
"""

import re
from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from outreach.language import identify
from outreach.models import Message
from outreach.replies.own_words import strip_quoted
from outreach.replies.questions import question_language
from poolpatrol.languages import BY_CODE, language_name
from vanpools.models import Employee

Source = Literal["asked", "roster", "reply", "program"]
SOURCES: dict[Source, str] = {
    "asked": "the rider asked for it by reply",
    "roster": "from the roster",
    "reply": "the language of the rider's latest reply",
    "program": "the program's default",
}
# The detector is sure enough of a passage in one of these when it gives it
# this probability over every language it knows (py3langid, 97 of them), on
# at least this many letters. Measured on one-line replies: Vietnamese, Korean,
# Tagalog, Portuguese and Haitian Creole score 0.94–1.0, Chinese 0.79 and
# Arabic 0.74; a four-word English line 0.3–0.8.
SURE_PROBABILITY = 0.7
SURE_LETTERS = 10
# py3langid's codes for the shipped languages it names differently.
_DETECTED_AS = {"zh": "zh-hans", "pt": "pt-br"}
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class LanguageChoice:
    code: str
    source: Source

    @property
    def name(self) -> str:
        return language_name(self.code)

    def describe(self) -> str:
        """For staff pages: 'Spanish (from the roster)'."""
        return f"{self.name} ({SOURCES[self.source]})"


def rider_language(employee: Employee) -> LanguageChoice:
    """The language to write to this rider in (the module's order).

    An employee loaded with ``with_reply_language`` brings its latest reply's
    language along, and costs no query here.
    """
    if employee.requested_language in BY_CODE:
        return LanguageChoice(employee.requested_language, "asked")
    if employee.preferred_language in BY_CODE:
        return LanguageChoice(employee.preferred_language, "roster")
    replied = getattr(employee, REPLY_LANGUAGE, None)
    if replied is None:
        replied = latest_reply_language(employee)
    if replied:
        return LanguageChoice(replied, "reply")
    return LanguageChoice(settings.PROGRAM_LANGUAGE, "program")


def latest_reply_language(employee: Employee) -> str:
    """The shipped language of the rider's latest reply the detector was sure of, or ''."""
    return _sure_replies(employee.pk).values_list("language", flat=True).first() or ""


# The attribute ``with_reply_language`` annotates.
REPLY_LANGUAGE = "latest_reply_language"


def with_reply_language(employees: QuerySet[Employee]) -> QuerySet[Employee]:
    """Employees with their latest sure reply's language, in the same query."""
    language = Subquery(_sure_replies(OuterRef("pk")).values("language")[:1])
    return employees.annotate(**{REPLY_LANGUAGE: Coalesce(language, Value(""))})


def _sure_replies(employee: int | OuterRef) -> QuerySet[Message]:
    return Message.objects.filter(
        employee=employee,
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
        language__in=list(BY_CODE),
    ).order_by("-received_at", "-pk")


def detected_language(words: str) -> str:
    """The shipped language a rider's own words are in, when the detector is sure; else ''.

    ``words`` is the reply without quoted history (our own email quoted back
    is in our language, not theirs). Too few letters, a language that is not
    shipped or an unsure reading give ''. A short reply the detector cannot
    place but that is mostly Spanish words ("hola, gracias") is Spanish, as
    the answers have read it since they were first written in Spanish.
    """
    if len(_LETTER.findall(words)) >= SURE_LETTERS:
        language, probability = identify(words)
        code = _DETECTED_AS.get(language, language)
        if code in BY_CODE and probability >= SURE_PROBABILITY:
            return code
    return "es" if words.strip() and question_language(words) == "es" else ""


@dataclass(frozen=True)
class WordsLanguage:
    """The language a message's words are in, for a staff page that shows them."""

    code: str  # a shipped language's code, the HTML lang attribute
    name: str  # its English name: 'Arabic'
    rtl: bool  # written right to left (the HTML dir attribute)


def words_language(message: Message) -> WordsLanguage | None:
    """The shipped language other than English a message is written in; None if English or unsure.

    As recorded when it was read or written (``Message.language``); a rider's
    email not read yet (one waiting to be matched to a case) is detected from
    the rider's own words, the quoted history left out.
    """
    code = message.language
    if not code and message.direction == Message.Direction.INBOUND:
        code = detected_language(strip_quoted(message.readable_text()))
    language = BY_CODE.get(code)
    if language is None or language.code == "en":
        return None
    return WordsLanguage(language.code, language.english_name, language.bidi)
