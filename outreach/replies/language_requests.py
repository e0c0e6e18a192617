"""A reply that only names a language: the rider asks for their emails in it.

Every email says how: "To get this email in English, reply ENGLISH", and an
English email offers each shipped language in its own words ("Para recibir
este correo en español, responda ESPAÑOL"). A reply is such a request only
when, without quoted history, a phone's tagline, punctuation and a few polite
words, nothing is left but one language's name: "English please", "ESPAÑOL",
"in Tagalog po". Anything more ("My English is not good, what does this
mean?") is read as any other reply, so a request never hides a question.

Each language's names are a rule with a reason and examples it must and must
not match (``outreach/tests/test_language_requests.py`` checks every one);
the polite words around a name are one rule of their own.
"""

import re
import unicodedata
from dataclasses import dataclass

from outreach.replies.boilerplate import without_boilerplate
from outreach.replies.own_words import strip_quoted

# A request is a name and a few polite words; more than this is a message.
MAX_WORDS = 8


@dataclass(frozen=True)
class LanguageRequestRule:
    name: str
    language: str  # the shipped language's code
    reason: str
    names: tuple[str, ...]  # as written by riders; compared with case and accents folded
    must_match: tuple[str, ...]
    must_not_match: tuple[str, ...]


@dataclass(frozen=True)
class PoliteWordsRule:
    name: str
    reason: str
    words: tuple[str, ...]
    must_match: tuple[str, ...]  # whole replies that are a name among these words
    must_not_match: tuple[str, ...]


RULES: tuple[LanguageRequestRule, ...] = (
    LanguageRequestRule(
        "english",
        "en",
        "Every email in another language says to reply ENGLISH; riders also write "
        "the name in their own language.",
        (
            "english",
            "ingles",
            "in english",
            "en ingles",
            "tieng anh",
            "ingles po",
            "英文",
            "英语",
            "영어",
            "영어로",
            "angle",
            "an angle",
            "em ingles",
            "الانجليزية",
            "انجليزي",
            "بالانجليزي",
        ),
        (
            "ENGLISH",
            "English please",
            "english.",
            "In English, thank you!",
            "Inglés por favor",
            "Tiếng Anh",
            "英文",
            "영어로 주세요",
            "an anglè souple",
            "الإنجليزية من فضلك",
        ),
        (
            "My English is not good, what does this mean?",
            "I speak English",
            "English is fine but why was I flagged?",
            "Speak English to me about my shift",
        ),
    ),
    LanguageRequestRule(
        "spanish",
        "es",
        "An English email offers Spanish as 'responda ESPAÑOL'; riders also write it in English.",
        ("espanol", "en espanol", "spanish", "in spanish", "castellano"),
        ("ESPAÑOL", "español por favor", "Espanol", "En español, gracias", "Spanish please"),
        ("Hablo español y no entiendo por qué", "¿Por qué me escriben? Soy de Puebla, español"),
    ),
    LanguageRequestRule(
        "vietnamese",
        "vi",
        "An English email offers Vietnamese as 'hãy trả lời TIẾNG VIỆT'.",
        ("tieng viet", "viet", "vietnamese", "in vietnamese", "bang tieng viet"),
        ("TIẾNG VIỆT", "tieng viet", "Tiếng Việt, cảm ơn", "Vietnamese please", "bằng tiếng Việt"),
        (
            "Tôi là người Việt, tôi đã chuyển nhà",
            "tiếng Việt của tôi không tốt lắm, xin giải thích",
        ),
    ),
    LanguageRequestRule(
        "tagalog",
        "tl",
        "An English email offers Tagalog as 'sumagot ng TAGALOG'; many say Filipino.",
        ("tagalog", "filipino", "pilipino", "sa tagalog", "in tagalog"),
        ("TAGALOG", "Tagalog po", "Filipino please", "sa Tagalog po, salamat"),
        ("Tagalog ako pero lumipat na ako ng bahay", "I'm Filipino and my address is right"),
    ),
    LanguageRequestRule(
        "chinese",
        "zh-hans",
        "An English email offers Chinese as '请回复 中文'; riders also write 汉语, 简体 or the "
        "English name.",
        ("中文", "汉语", "簡體", "简体", "简体中文", "chinese", "in chinese", "mandarin"),
        ("中文", "中文，谢谢", "请用中文", "Chinese please", "简体中文"),
        ("我不懂中文以外的语言，为什么我的座位被标记了？", "Chinese New Year I was away"),
    ),
    LanguageRequestRule(
        "korean",
        "ko",
        "An English email offers Korean as '한국어 라고 답장해 주세요'.",
        ("한국어", "한국어로", "한글", "한글로", "korean", "in korean"),
        ("한국어", "한국어로 부탁합니다", "한국어로 보내 주세요", "Korean please"),
        ("한국어로 설명해 주셨는데 주소는 맞습니다", "My Korean name is on file"),
    ),
    LanguageRequestRule(
        "portuguese",
        "pt-br",
        "An English email offers Portuguese as 'responda PORTUGUÊS'.",
        ("portugues", "em portugues", "portuguese", "in portuguese"),
        ("PORTUGUÊS", "Português, por favor", "em português obrigado", "Portuguese please"),
        ("Falo português e já atualizei meu endereço", "português ou inglês tanto faz, quando?"),
    ),
    LanguageRequestRule(
        "haitian_creole",
        "ht",
        "An English email offers Haitian Creole as 'reponn KREYÒL'.",
        ("kreyol", "an kreyol", "kreyol ayisyen", "creole", "haitian creole", "in creole"),
        ("KREYÒL", "kreyol souple", "An kreyòl, mèsi", "Haitian Creole please"),
        ("Mwen pale kreyòl men mwen pa konprann poukisa", "creole food truck at the pickup"),
    ),
    LanguageRequestRule(
        "arabic",
        "ar",
        "An English email offers Arabic as 'أرسل العربية'; riders also write عربي or the "
        "English name.",
        ("العربية", "عربي", "بالعربي", "باللغة العربية", "بالعربية", "arabic", "in arabic"),
        ("العربية", "بالعربي من فضلك", "باللغة العربية، شكرا", "Arabic please"),
        ("أنا عربي وعنواني صحيح", "arabic speaker here, why was my seat flagged"),
    ),
)

POLITE = PoliteWordsRule(
    "polite_words",
    "Riders ask politely or say thanks around the name; those words ask for nothing more.",
    (
        "please",
        "pls",
        "plz",
        "thanks",
        "thank you",
        "thankyou",
        "send",
        "it",
        "in",
        "can i",
        "have",
        "get",
        "this",
        "the email",
        "por favor",
        "gracias",
        "en",
        "mandar",
        "cam on",
        "xin",
        "vui long",
        "po",
        "salamat",
        "sa",
        "谢谢",
        "请用",
        "请",
        "用",
        "부탁합니다",
        "주세요",
        "보내",
        "보내 주세요",
        "감사합니다",
        "obrigado",
        "obrigada",
        "em",
        "souple",
        "mesi",
        "an",
        "من فضلك",
        "شكرا",
        "لو سمحت",
    ),
    (
        "Please send it in English",
        "can i have it in spanish please",
        "中文，谢谢",
        "English pls thanks",
    ),
    ("please call me", "thanks", "please"),
)


def _fold(text: str) -> str:
    """Case, accents, Arabic vowel marks and letter forms folded; punctuation as spaces."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(c for c in text if not unicodedata.combining(c) and c != "\u0640")
    text = re.sub("[أإآ]", "ا", unicodedata.normalize("NFKC", text))
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


# Scripts written without spaces, where a name runs into the words beside it ("中文谢谢").
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _alternatives(phrases: set[str]) -> re.Pattern[str]:
    """Any of the phrases, longest first, standing as words (inside a word only where unspaced)."""

    def bounded(phrase: str) -> str:
        before = "" if _UNSPACED.match(phrase[0]) else r"(?<!\w)"
        after = "" if _UNSPACED.match(phrase[-1]) else r"(?!\w)"
        return before + re.escape(phrase) + after

    return re.compile("|".join(bounded(p) for p in sorted(phrases, key=len, reverse=True)))


_LANGUAGE_OF = {_fold(name): rule.language for rule in RULES for name in rule.names}
_NAMES = _alternatives(set(_LANGUAGE_OF))
_POLITE = _alternatives({_fold(word) for word in POLITE.words})


def requested_language(words: str) -> str | None:
    """The code of the language a reply asks for, when that is all it says; else None.

    ``words`` are the rider's own (``own_words``): once one language's names
    and the polite words are taken out, nothing may be left.
    """
    folded = _fold(words)
    if not folded or len(folded.split()) > MAX_WORDS:
        return None
    languages = {_LANGUAGE_OF[name] for name in _NAMES.findall(folded)}
    if len(languages) != 1:
        return None
    rest = _POLITE.sub(" ", _NAMES.sub(" ", folded))
    return languages.pop() if not rest.strip() else None


def own_words(text: str) -> str:
    """A reply without quoted history and a mail program's tagline."""
    return without_boilerplate(strip_quoted(text)).strip()
