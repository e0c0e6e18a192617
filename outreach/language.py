"""Which language a passage of a reply is in, offline (py3langid's bundled model).

The rules read English and Spanish (and a few receipts in Portuguese and
Haitian Creole); a passage in any other language, or in no language at all (a
cipher), is text they cannot vouch for, so a person reads the reply. Chosen
over lingua (far larger models) and langdetect (unmaintained): py3langid
classifies a line in about 0.1 ms and names "zxx" for text in no language.
"""

import functools
import re
from dataclasses import dataclass

from py3langid.langid import MODEL_FILE, LanguageIdentifier

# What the reply rules have words for (outreach/replies/classify.py).
READ_LANGUAGES = frozenset({"en", "es", "pt", "ht"})
NO_LANGUAGE = "zxx"
MIN_WORDS = 6
MIN_PROBABILITY = 0.9
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Passage:
    text: str
    language: str  # ISO 639-1, or "zxx" for no language
    probability: float


@functools.cache
def _identifier() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(text: str) -> tuple[str, float]:
    language, probability = _identifier().classify(text)
    return str(language), float(probability)


def unread_passages(text: str) -> list[Passage]:
    """Lines of six or more words that are surely in a language the rules do not read."""
    found = []
    for line in text.splitlines():
        if len(_WORD.findall(line)) < MIN_WORDS:
            continue
        language, probability = identify(line)
        if language not in READ_LANGUAGES and probability >= MIN_PROBABILITY:
            found.append(Passage(line.strip(), language, probability))
    return found
