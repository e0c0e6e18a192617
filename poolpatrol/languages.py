"""The languages riders are written to in: one table, read by the settings, the roster and mail.

Each shipped language has a gettext catalog in ``locale/<locale>/LC_MESSAGES/``
(docs/outreach.md#languages says how to add one). Codes are Django's language
codes (``zh-hans``, ``pt-br``); ``names`` are the spellings an HR export may
use for it, matched case-insensitively with accents kept or dropped.
Pure data, no Django imports: the settings read it before Django starts.
"""

import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str  # Django's language code, also the HTML lang attribute
    english_name: str  # what staff pages call it
    own_name: str  # what the language calls itself
    reply_word: (
        str  # what a rider replies to get their email in it (outreach.replies.language_requests)
    )
    names: tuple[str, ...] = ()  # more spellings a roster may use (codes, English, its own)
    bidi: bool = False  # written right to left

    @property
    def locale(self) -> str:
        """The catalog folder's name: ``zh_Hans``, ``pt_BR`` (Django's ``to_locale``)."""
        language, _, country = self.code.partition("-")
        if not country:
            return language
        return f"{language}_{country.title() if len(country) > 2 else country.upper()}"


SHIPPED: tuple[Language, ...] = (
    Language("en", "English", "English", "ENGLISH", ("en-us", "eng", "inglés", "ingles")),
    Language("es", "Spanish", "Español", "ESPAÑOL", ("spa", "es-us", "es-mx", "castellano")),
    Language("vi", "Vietnamese", "Tiếng Việt", "TIẾNG VIỆT", ("vie", "vi-vn", "tieng viet")),
    Language("tl", "Tagalog", "Tagalog", "TAGALOG", ("tgl", "fil", "filipino", "pilipino")),
    Language(
        "zh-hans",
        "Chinese (Simplified)",
        "简体中文",
        "中文",
        ("zh", "zh-cn", "zh-sg", "chinese", "simplified chinese", "mandarin", "中文", "汉语"),
    ),
    Language("ko", "Korean", "한국어", "한국어", ("kor", "ko-kr", "조선말")),
    Language(
        "pt-br",
        "Portuguese (Brazil)",
        "Português (Brasil)",
        "PORTUGUÊS",
        ("pt", "por", "portuguese", "português", "portugues", "brazilian portuguese"),
    ),
    Language(
        "ht", "Haitian Creole", "Kreyòl ayisyen", "KREYÒL", ("hat", "haitian", "creole", "kreyol")
    ),
    Language("ar", "Arabic", "العربية", "العربية", ("ara", "عربي"), bidi=True),
)
CODES: tuple[str, ...] = tuple(language.code for language in SHIPPED)
BY_CODE: dict[str, Language] = {language.code: language for language in SHIPPED}


def _key(name: str) -> str:
    """A spelling as compared: case and accents folded, spaces, '-' and '_' as one."""
    folded = unicodedata.normalize("NFKD", name.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(plain.replace("_", " ").replace("-", " ").split())


_BY_NAME: dict[str, str] = {
    _key(spelling): language.code
    for language in SHIPPED
    for spelling in (language.code, language.english_name, language.own_name, *language.names)
}


def shipped_language(name: str) -> str | None:
    """The code of the shipped language ``name`` spells, or None ('' is None too)."""
    return _BY_NAME.get(_key(name)) if name.strip() else None


def language_name(code: str) -> str:
    """The English name staff pages show: 'Spanish'; the code itself when not shipped."""
    language = BY_CODE.get(code)
    return language.english_name if language else code
