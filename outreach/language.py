"""Which language a reply, or a passage of it, is written in, offline.

py3langid's bundled model names Latin-script languages (about 0.1 ms a line,
and "zxx" for text in no language; chosen over lingua, far larger, and
langdetect, unmaintained). It reads words between spaces, so on its own it
misses what matters most here: a reply in Chinese has no spaces, one line of
Korean is one "word" to it, and "ok" is no language at all. So the script
decides first:

- Han, Hangul, kana and Arabic letters name their language whatever the
  length (``zh``, ``ko``, ``ja``, ``ar``; the Arabic script is then read by
  py3langid for Persian or Urdu). A CJK character carries about as much as a
  short Latin word, so it weighs ``CJK_WEIGHT`` letters when scripts mix
  ("我已经在HR portal更新了地址" is Chinese).
- Any other script (Cyrillic, Greek, Hebrew…) is surely not a Latin-script
  language; py3langid names which.
- Latin text is py3langid's, sure at ``MIN_PROBABILITY`` and ``MIN_LETTERS``;
  letters only Vietnamese writes (ơ, ư, đ, ạ…) make it Vietnamese however short,
  and Arabic typed in Latin letters with digits for the letters Latin lacks
  (``ARABIZI``: "3andi", "ba7tej") makes it Arabic; Vietnamese typed without
  its marks is known by the shape of its syllables (``VIETNAMESE_UNMARKED``).
- Dialects and varieties count as their language (Moroccan and Egyptian
  Arabic as ``ar``, Cantonese and Wu as ``zh``).

``detect`` names a whole reply's language; ``passages`` the language of each
line long enough to say, so a line in one language inside a reply in another
is seen.
"""

import functools
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from py3langid.langid import MODEL_FILE, LanguageIdentifier

NO_LANGUAGE = "zxx"
# Not enough letters to tell (a name, "ok", a number).
UNDETERMINED = "und"
MIN_PROBABILITY = 0.9
# Latin letters below which py3langid is guessing.
MIN_LETTERS = 12
# A Han, kana or Hangul character weighs about as much as a few Latin letters.
CJK_WEIGHT = 3
# A passage says which language it is in from this many units (a Latin or Arabic
# word, or two CJK characters) up.
MIN_UNITS = 6
# Varieties py3langid names apart, read as their language.
VARIETIES = {"ary": "ar", "arz": "ar", "yue": "zh", "wuu": "zh", "gcf": "ht", "gcr": "ht"}

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u30ff\u31f0-\u31ff"
_HANGUL = "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
_ARABIC = "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"
_SCRIPTS = {
    "han": re.compile(f"[{_HAN}]"),
    "kana": re.compile(f"[{_KANA}]"),
    "hangul": re.compile(f"[{_HANGUL}]"),
    "arabic": re.compile(f"[{_ARABIC}]"),
}
_LETTER = re.compile(r"[^\W\d_]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]{2,}")
_ARABIC_WORD = re.compile(f"[{_ARABIC}]{{2,}}")
# Letters of the Vietnamese alphabet no other language here writes.
_VIETNAMESE = re.compile(r"[ăắằẳẵặơớờởỡợưứừửữựđạảấầẩẫậẹẻẽếềểễệỉịọỏốồổỗộụủỵỷỹ]", re.I)


@dataclass(frozen=True, kw_only=True)
class Convention(ABC):
    """A way of writing a language in Latin letters that py3langid cannot name.

    Each has a name, a reason, and replies it must name and must not (its tests).
    """

    name: str
    language: str
    reason: str
    # Words of it from which a reply is surely in the language.
    min_words: int
    must_name: tuple[str, ...]
    must_not_name: tuple[str, ...]

    @abstractmethod
    def names(self, text: str) -> bool:
        """Whether ``text`` is surely written in this convention."""


@dataclass(frozen=True, kw_only=True)
class LatinConvention(Convention):
    """A language written in Latin letters by a convention py3langid does not know."""

    # A word written in the convention (matched whole, lower-cased).
    word: re.Pattern[str]
    # Words that look like it and are not (times, ordinals, units), matched whole.
    not_word: re.Pattern[str]

    def names(self, text: str) -> bool:
        return len(self.words(text)) >= self.min_words

    def words(self, text: str) -> set[str]:
        # Addresses and encoded text (%2F, base64) are not words anyone typed.
        text = _NOT_TYPED.sub(" ", text.lower())
        return {
            token
            for token in _TOKEN.findall(text)
            if len(token) <= MAX_WORD
            and self.word.fullmatch(token)
            and not self.not_word.fullmatch(token)
        }


_TOKEN = re.compile(r"[a-z0-9]+")
_NOT_TYPED = re.compile(r"\S*(?:https?://|www\.|%[0-9a-f]{2}|[=/])\S*")
# Longer runs of letters and digits are codes and encodings, not typed words.
MAX_WORD = 12

ARABIZI = LatinConvention(
    name="arabizi",
    language="ar",
    reason=(
        "Arabic typed in Latin letters writes the letters Latin lacks as digits "
        "(3 for ain, 7 for ha, 2 for hamza, 5 for kha): two such words make a reply Arabic"
    ),
    word=re.compile(r"[a-z]+[23579][a-z0-9]*|[23579][a-z]{2,}[a-z0-9]*"),
    not_word=re.compile(
        r"\d+(?:st|nd|rd|th|am|pm|hrs?|mins?|secs?|ish|days?|wks?|yrs?|mi|km|mph|ft|lbs?)"
        r"|[a-z]{1,3}\d+|mp3"
    ),
    min_words=2,
    must_name=(
        "khalas ghayyart el shift, sar 6:00-14:30 men 1/3. bas 3andi sokkari w ba7tej akol",
        "sallahet el shift ma3 el HR bas el sawe2 bysou2 bsor3a ktir",
        "ana 3ayez a3raf leh el seat bta3i hay2ef",
    ),
    must_not_name=(
        "See https://hr.example.com/portal?q=%2Fhrms%3Ddefault&t=2fpsp for the form.",
        "Token: QUJDMTIzNDU2NzG5MA and dXNlcl9pZD0xMDQ4MjtzcmM9c2ln, please ignore.",
        "I start at 7am and the van gets in at 6:45, done by 3pm on the 2nd shift.",
        "Updated my address for VP-214 (ZIP 94538), see ticket INC0012345 and my 3rd email.",
        "Moved on the 5th, 2days ago, about 3hrs before the 7pm meeting.",
    ),
)


@dataclass(frozen=True, kw_only=True)
class UnmarkedConvention(Convention):
    """A language typed without the marks that name it, known by the shape of its syllables."""

    # One syllable of the language with its marks dropped (matched whole, lower-cased).
    syllable: re.Pattern[str]
    # Syllables of it no other language here spells (matched whole).
    telling: re.Pattern[str]
    # Share of the words that must be its syllables.
    min_share: float
    min_telling: int

    def names(self, text: str) -> bool:
        # Words in capitals (HR, VP, DC) are codes, not syllables anyone typed.
        words = [w.lower() for w in _WORD.findall(text) if len(w) == 1 or not w.isupper()]
        if len(words) < self.min_words:
            return False
        syllables = [w for w in words if self.syllable.fullmatch(w)]
        telling = {w for w in syllables if self.telling.fullmatch(w)}
        return len(syllables) >= self.min_share * len(words) and len(telling) >= self.min_telling


_WORD = re.compile(r"[A-Za-z]+")
# A Vietnamese syllable: an initial consonant (or none), a vowel or vowel run, and
# a final consonant where the vowel takes one. Marks dropped, "đ" typed "d".
_VI_INITIAL = r"(?:ngh|ng|nh|kh|gh|gi|ch|ph|th|tr|qu|[bcdghklmnprstvx])?"
_VI_CLOSED = r"(?:uye|uya|uo|ie|ye|ia|ua|oa|oe|uy|[aeiouy])(?:ch|nh|ng|[cmnpt])?"
_VI_OPEN = r"(?:oai|oay|uay|uoi|uou|ieu|yeu|uyu|ai|ao|au|ay|eo|eu|iu|oi|ui|uu|ua|ia|ue)"

VIETNAMESE_UNMARKED = UnmarkedConvention(
    name="vietnamese_unmarked",
    language="vi",
    reason=(
        "Vietnamese typed on a phone without its marks loses the letters that name it "
        "(ơ, ư, đ) and py3langid cannot tell it; its words are still one-syllable words of "
        "one shape, and some of them (ngh-, nh-, kh-, -uong, -ieu) no other language here "
        "writes: six words or more, three in four its syllables and two of those, make a "
        "reply Vietnamese"
    ),
    syllable=re.compile(f"{_VI_INITIAL}(?:{_VI_CLOSED}|{_VI_OPEN})"),
    telling=re.compile(
        r"(?:ngh|nh|kh)[a-z]+|ng(?!a$)[a-z]+|[a-z]*(?:uo[cimnt]|uong|ie[cmnptu]|ieng|uye|uoi|"
        r"ieu|yeu)[a-z]*|dc|[a-z]+ay|[a-z]*oi"
    ),
    min_words=6,
    min_share=0.75,
    min_telling=2,
    must_name=(
        "da doi dia chi tren portal roi nha, nha moi cach diem don 5 mile thoi",
        "Toi khong tra cho. Ca cua toi la ca toi, toi di van nay 6 nam roi",
        "chi oi e dang nghi thai san toi thang 9 moi di lam lai, e van muon di xe",
    ),
    must_not_name=(
        "So I can go to the van at 6 and be on time, thanks.",
        "night rider (Sun-Thu 22:00-06:30) on a day van",
        "Na-update ko na po yung address ko sa HR portal kanina, lumipat na po kami.",
        "Ya cambié mi dirección en el portal, vivo en Fremont desde junio. Gracias.",
        "Oi, já atualizei meu endereço no portal, a van passa às 6 e eu sigo no mesmo turno.",
        "Mwen te chanje adrès mwen sou pòtay la, mwen rete Fremont kounye a. Mèsi anpil.",
        "Hi Anh, Minh and Tuan from HR say Long Beach is OK; Nguyen Van Thanh signs it.",
    ),
)
CONVENTIONS: tuple[Convention, ...] = (ARABIZI, VIETNAMESE_UNMARKED)


@dataclass(frozen=True)
class Detected:
    language: str  # ISO 639-1 where there is one, "zxx" for none, "und" for too little
    probability: float
    # Enough text, and a clear enough answer, to act on.
    sure: bool
    # What decided: "script", "letters" (Vietnamese) or "langid".
    by: str


@dataclass(frozen=True)
class Passage:
    text: str
    detected: Detected


@functools.cache
def _identifier() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(text: str) -> tuple[str, float]:
    """py3langid's own answer (no script rules): the guardrails' cipher check uses it."""
    language, probability = _identifier().classify(text)
    return str(language), float(probability)


def detect(text: str) -> Detected:
    """The language of a reply's own words (quoted history already stripped)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return Detected(UNDETERMINED, 0.0, False, "script")
    counts = {script: len(pattern.findall(text)) for script, pattern in _SCRIPTS.items()}
    cjk = (counts["han"] + counts["kana"] + counts["hangul"]) * CJK_WEIGHT
    latin = letters - counts["han"] - counts["kana"] - counts["hangul"] - counts["arabic"]
    if cjk and cjk >= latin and cjk >= counts["arabic"]:
        return Detected(_cjk_language(counts), 1.0, True, "script")
    if counts["arabic"] and counts["arabic"] >= latin:
        return _arabic_script(text)
    if len(_VIETNAMESE.findall(text)) >= 2:
        return Detected("vi", 1.0, True, "letters")
    for convention in CONVENTIONS:
        if convention.names(text):
            return Detected(convention.language, 1.0, True, "letters")
    language, probability = identify(text)
    language = VARIETIES.get(language, language)
    if not is_latin(text):
        # Cyrillic, Greek, Hebrew, Devanagari…: surely not a Latin-script language,
        # whichever of its own py3langid names.
        return Detected(language, probability, True, "script")
    sure = probability >= MIN_PROBABILITY and latin >= MIN_LETTERS
    return Detected(language, probability, sure, "langid")


def _cjk_language(counts: dict[str, int]) -> str:
    if counts["hangul"] >= counts["kana"] and counts["hangul"] * 2 >= counts["han"]:
        return "ko"
    return "ja" if counts["kana"] else "zh"


def _arabic_script(text: str) -> Detected:
    """Arabic, unless py3langid is sure it is another language in the script."""
    language, probability = identify(text)
    language = VARIETIES.get(language, language)
    if language in ("fa", "ur", "ps", "ug", "ku", "sdh") and probability >= MIN_PROBABILITY:
        return Detected(language, probability, True, "langid")
    return Detected("ar", 1.0, True, "script")


def is_latin(text: str) -> bool:
    """Mostly Latin letters (Cyrillic or Greek look-alikes are not)."""
    letters = len(_LETTER.findall(text))
    latin = sum(len(word) for word in _LATIN_WORD.findall(text))
    return letters > 0 and latin * 2 >= letters


def units(text: str) -> float:
    """How much a passage says: Latin and Arabic words, and CJK characters by twos."""
    cjk = sum(len(_SCRIPTS[s].findall(text)) for s in ("han", "kana", "hangul"))
    return len(_LATIN_WORD.findall(text)) + len(_ARABIC_WORD.findall(text)) + cjk / 2


def passages(text: str) -> list[Passage]:
    """Each line long enough to say its language, with the language it is surely in."""
    found = []
    for line in text.splitlines():
        if units(line) < MIN_UNITS:
            continue
        detected = detect(line)
        if detected.sure:
            found.append(Passage(line.strip(), detected))
    return found
