"""Every way a reply's text may be read: as written, normalised, and as its tricks would read it.

``normalise`` folds compatibility forms, invisible characters, look-alike
letters, accents and case, so "ＩＧＮＯＲＥ", "ign\u200bore" and "ignоre"
(Cyrillic o) all read "ignore". ``readings`` adds the text as each trick
would have it read (digits as letters, lines joined or reversed, URL and HTML
escapes undone, ROT13, Caesar shifts, Morse, NATO spelling, pig latin,
enclosed letters), so the guardrails and the reply rules see what a
sender hid.
"""

import codecs
import html
import re
import unicodedata
import urllib.parse

from outreach.language import MIN_PROBABILITY, NO_LANGUAGE, identify

# Zero-width and other invisible format characters. U+200D (zero-width joiner)
# is left out: emoji sequences use it; the guardrails check it between letters.
ZERO_WIDTH = re.compile("[\u00ad\u180e\u200b\u200c\u2060-\u2064\ufeff]")
BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]")

# Letters that look like Latin ones: Cyrillic, Greek and Latin variants (dotless i…).
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅУαεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧıȷɑɡɩʏ",
    "aeopcyxijsdhlqwABEKMHOPCTXIJSYaeikvoptuxABEZHIKMNOPTYXijagiy",
)
_LEET = str.maketrans("013457@$", "oieastas")
# Letters with a stroke, which NFKD leaves whole: Polish ł, Vietnamese đ, Danish ø…
_UNDECOMPOSED = str.maketrans(
    {"ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ø": "o", "Ø": "O", "ħ": "h", "ß": "ss", "æ": "ae"}
)


def as_written(text: str) -> str:
    """The text as its writer wrote it, for a reader of meaning (the sentence encoder).

    Only what no writer typed goes: compatibility forms, invisible and
    direction characters, runs of spaces. Accents, case and Hangul syllables
    stay, as the encoder learned them: folded, Korean fell apart into its
    letters (three times the tokens, and words the encoder never saw), and
    Vietnamese lost the marks that tell its words apart.
    """
    text = unicodedata.normalize("NFKC", text)
    text = ZERO_WIDTH.sub("", BIDI.sub("", TAG_CHARACTERS.sub("", text))).replace("\u200d", "")
    return re.sub(r"[ \t]+", " ", text)


def normalise(text: str) -> str:
    """One reading of the text: compatibility forms, look-alikes and accents folded."""
    text = unicodedata.normalize("NFKC", text)
    text = ZERO_WIDTH.sub("", BIDI.sub("", TAG_CHARACTERS.sub("", text))).replace("\u200d", "")
    text = text.translate(_HOMOGLYPHS)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = text.translate(_UNDECOMPOSED).casefold().replace("\u2019", "'")
    return re.sub(r"[ \t]+", " ", text)


def readings(raw: str) -> list[str]:
    """Every way the text may be read: as written, and as its tricks would have it read.

    Digits as letters ("1gn0re"), lines joined (a quote marker or a hyphen
    splitting a phrase), URL and HTML escapes undone, lines read backwards, and
    ROT13, so an instruction hidden by any of them is still seen.
    """
    unescaped = html.unescape(urllib.parse.unquote(raw))
    plain = normalise(enclosed_letters(unescaped))
    unspaced = normalise(_unspaced(enclosed_letters(unescaped)))
    joined = re.sub(r"\s*\n\s*(?:>\s*)*", " ", re.sub(r"-\s*\n\s*(?:>\s*)*", "", plain))
    backwards = "\n".join(line[::-1] for line in plain.splitlines())
    decoded = [unspaced, _morse(plain), _nato(plain), _pig_latin(plain), _caesar(plain)]
    decoded += [first_words(plain), _glued(plain)]
    variants = [plain, joined, backwards, codecs.encode(plain, "rot13"), *filter(None, decoded)]
    # Most readings of an ordinary reply are the text itself: each is checked once.
    return list(dict.fromkeys([*variants, *(variant.translate(_LEET) for variant in variants)]))


def _glued(text: str) -> str:
    """Short lines joined with nothing between: "SYS / TEM: ig / nore prior rul / es" → one line.

    Only for text broken into many short lines, where a phrase split mid-word
    is the trick ("sorry my phone splits lines"); "" otherwise.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    short = sum(len(line) <= 20 for line in lines)
    if len(lines) < 4 or short * 2 < len(lines):
        return ""
    return "".join(lines)


def first_words(text: str) -> str:
    """The first word of each of four or more paragraphs, read as one sentence."""
    paragraphs = [p.split()[0] for p in re.split(r"\n\s*\n", text) if p.split()]
    return " ".join(paragraphs) if len(paragraphs) >= 4 else ""


# Words any English line has; a line without one may be a cipher worth trying.
_COMMON_WORDS = frozenset(
    {"the", "and", "to", "a", "of", "i", "is", "my", "in", "you", "for", "it", "on", "that"}
    | {"this", "was", "be", "have", "me", "we", "at", "with", "your", "will", "are", "not"}
    | {"do", "am", "can", "if", "so", "but", "our"}
)


def _caesar(text: str) -> str:
    """A line in no language shifted back, when some shift makes it English ("Forvh wklv")."""
    decoded = []
    for segment in re.split(r"[\n:]", text):
        words = re.findall(r"[a-z]+", segment)
        if len(words) < 5 or _COMMON_WORDS & set(words):
            continue
        if identify(segment)[0] != NO_LANGUAGE:
            continue
        best = max(
            (_shifted(segment, shift) for shift in range(1, 26)),
            key=lambda candidate: _english(candidate),
        )
        if _english(best) >= MIN_PROBABILITY:
            decoded.append(best)
    return "\n".join(decoded)


def _shifted(text: str, shift: int) -> str:
    return "".join(chr((ord(c) - 97 + shift) % 26 + 97) if "a" <= c <= "z" else c for c in text)


def _english(text: str) -> float:
    language, probability = identify(text)
    return probability if language == "en" else 0.0


def _unspaced(text: str) -> str:
    """ "h 3 y   b 0 t" → "h3y b0t": letters spaced apart, words by wider gaps."""
    lines = []
    for line in text.splitlines():
        tokens = line.split()
        if len(tokens) >= 8 and sum(len(token) == 1 for token in tokens) >= 0.8 * len(tokens):
            line = " ".join(word.replace(" ", "") for word in re.split(r"\s{2,}", line.strip()))
        lines.append(line)
    return "\n".join(lines)


_MORSE_CODES = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- "
    ".-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----."
)
_MORSE = dict(zip(_MORSE_CODES.split(" "), "abcdefghijklmnopqrstuvwxyz0123456789", strict=True))


def _morse(text: str) -> str:
    """Runs of Morse code ("... -.- .. .--. / ....") spelled out in letters."""

    def spell(match: re.Match[str]) -> str:
        words = match[0].split("/")
        return " ".join("".join(_MORSE.get(code, "") for code in word.split()) for word in words)

    return re.sub(r"(?:[.-]{1,6}[ /]+){5,}[.-]{1,6}", spell, text)


_NATO_WORDS = (
    "alpha alfa bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima "
    "mike november oscar papa quebec romeo sierra tango uniform victor whiskey x-ray xray "
    "yankee zulu"
)
_NATO = {word: word[0] for word in _NATO_WORDS.split(" ")}


def _nato(text: str) -> str:
    """ "Sierra Kilo India Papa / …" read as "skip …"."""

    def spell(match: re.Match[str]) -> str:
        return " ".join(
            "".join(_NATO[word] for word in group.split()) for group in match[0].split("/")
        )

    words = "|".join(_NATO)
    return re.sub(rf"(?:\b(?:{words})\b[\s/]*){{4,}}", spell, text)


def _pig_latin(text: str) -> str:
    """ "ot-nay end-say" read as "not send": pig latin written with hyphens."""

    def plain(match: re.Match[str]) -> str:
        stem, moved = match[1], match[2]
        return stem if moved == "w" else moved + stem

    return re.sub(r"\b([a-z']+)-([a-z]*?)ay\b", plain, text)


def enclosed_letters(text: str) -> str:
    """🅲🅻🅾🆂🅴 and 🇨🇱🇴🇸🇪 read as CLOSE (NFKC leaves these symbol letters alone)."""
    return text.translate(_ENCLOSED)


_ENCLOSED = {
    start + offset: ord("A") + offset
    for start in (0x1F130, 0x1F150, 0x1F170, 0x1F1E6)
    for offset in range(26)
}
