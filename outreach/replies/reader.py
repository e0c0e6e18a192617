"""The learned reply reader: a linear model over word and character n-grams.

Trained from the labelled replies in ``evals/data/replies`` by
``manage.py train_reply_model`` (tooling in ``evals``), which writes the
artifact beside this module. The product only reads it: no model or data is
downloaded, and nothing here trains.

The artifact is plain JSON (gzip), not a pickle: it holds the two vocabularies
with their idf weights, the coefficients, a calibration temperature and the
escalation threshold chosen on held-out data. Reading needs only numpy: the
n-grams are cut here exactly as scikit-learn's ``TfidfVectorizer`` cuts them
in training (``word`` and ``char_wb`` analyzers, sublinear tf, idf, L2 norm),
which ``evals/tests/test_reply_model.py`` checks against scikit-learn itself.
Web and worker processes so never import scikit-learn (about 2 s each).
"""

import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

ARTIFACT = Path(__file__).resolve().parent / "reader.json.gz"
# The reader of every other language: n-grams trained on all the labelled replies
# plus a linear head over a multilingual sentence encoder (``encoder.py``).
MULTILINGUAL_ARTIFACT = Path(__file__).resolve().parent / "reader-multilingual.json.gz"
# What an artifact built before readers named their languages read: English and
# Spanish, and the Portuguese and Haitian Creole receipts its rules had words for.
PRE_LANGUAGE_FIGURES = ("en", "es", "pt", "ht")
# The languages the English and Spanish reader (``ARTIFACT``) reads.
BASE_LANGUAGES = frozenset({"en", "es"})
# The replies the route gives it: those surely in English, and those whose
# language the detector cannot tell (short ones), read as before the
# multilingual reader existed. Spanish went to the multilingual reader once its
# grouped held-out figures beat this one's on Spanish replies (docs/evaluation.md).
BASE_ROUTE = frozenset({"en"})


# Han and kana: scripts written without spaces between words.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff"


def block_settings(kind: str, characters_as_words: bool = False) -> dict[str, Any]:
    """How each block cuts text, in scikit-learn's terms (training uses these).

    ``characters_as_words``: Chinese and Japanese are written without spaces, so
    each of their characters is a word and the word pairs are the character
    bigrams that carry most of their words (the multilingual reader). The
    English and Spanish reader cuts as it always has.
    """
    if kind == "word":
        # Single letters ("i", "y") and the marks of a question count as words.
        pattern = r"(?u)\b\w+\b|[?¿!]"
        if characters_as_words:
            pattern = rf"(?u)[{_CJK}]|\b\w+\b|[?¿!？]"
        return {
            "analyzer": "word",
            "ngram_range": (1, 2),
            "token_pattern": pattern,
            "lowercase": False,
        }
    if kind == "char":
        return {"analyzer": "char_wb", "ngram_range": (2, 5), "lowercase": False}
    raise ValueError(f"unknown block {kind!r}")


def word_ngrams(text: str, characters_as_words: bool = False) -> list[str]:
    """Tokens and token pairs, as scikit-learn's word analyzer with ngram_range (1, 2)."""
    tokens = _TOKENS[characters_as_words].findall(text)
    return tokens + [" ".join(tokens[i : i + 2]) for i in range(len(tokens) - 1)]


def char_wb_ngrams(text: str) -> list[str]:
    """Character 2–5-grams inside space-padded words, as scikit-learn's ``char_wb``."""
    grams = []
    for word in _WHITE_SPACES.sub(" ", text).split():
        padded = f" {word} "
        for n in range(2, 6):
            offset = 0
            grams.append(padded[:n])
            while offset + n < len(padded):
                offset += 1
                grams.append(padded[offset : offset + n])
            if offset == 0:  # a short word is counted once
                break
    return grams


_TOKENS = {cjk: re.compile(block_settings("word", cjk)["token_pattern"]) for cjk in (False, True)}
_WHITE_SPACES = re.compile(r"\s\s+")


@dataclass(frozen=True)
class Block:
    """One family of n-grams: the terms kept, their column and idf."""

    kind: str
    columns: dict[str, int]
    idf: np.ndarray
    characters_as_words: bool = False

    def grams(self, words: str) -> list[str]:
        if self.kind == "word":
            return word_ngrams(words, self.characters_as_words)
        return char_wb_ngrams(words)

    def features(self, words: str) -> dict[int, float]:
        """Column → TF-IDF weight (sublinear tf, L2-normalised within the block)."""
        counts = Counter(gram for gram in self.grams(words) if gram in self.columns)
        weights = {
            self.columns[gram]: (1.0 + math.log(n)) * float(self.idf[self.columns[gram]])
            for gram, n in counts.items()
        }
        norm = math.sqrt(sum(w * w for w in weights.values()))
        return {column: w / norm for column, w in weights.items()} if norm else {}


@dataclass(frozen=True)
class EncoderHead:
    """A linear head over the multilingual sentence encoder (``encoder.py``).

    Its logits are added to the n-gram blocks' (times ``weight``) before the
    calibration temperature: the n-grams read the words the labelled replies
    used, the encoder what a reply means in languages they barely cover.
    """

    coef: np.ndarray  # buckets × encoder dimensions
    intercept: np.ndarray
    weight: float

    def logits(self, words: str) -> np.ndarray:
        from outreach.replies.encoder import embed  # loads the encoder on first use

        result: np.ndarray = self.weight * (self.coef @ embed(words) + self.intercept)
        return result


@dataclass(frozen=True)
class Reading:
    probabilities: dict[str, float]
    # How many of the reply's word n-grams the reader has weights for.
    words_known: int
    # The escalation probability the n-grams give alone, calibrated on their own
    # (None: a reader without an encoder head, or read without it).
    ngram_escalation: float | None = None


@dataclass(frozen=True)
class Reader:
    buckets: tuple[str, ...]
    blocks: tuple[Block, ...]
    coef: np.ndarray  # buckets × features, the blocks side by side
    intercept: np.ndarray
    temperature: float
    escalation_threshold: float
    # Below the escalation threshold: a possible escalation, for a person to read.
    review_threshold: float
    meta: dict[str, Any]
    # Words of four letters or more the reader has weights for.
    known_words: frozenset[str] = frozenset()
    # The languages it reads to the per-language floor on held-out data; a reply
    # in any other goes to a person (``safety.unread_language``).
    languages: frozenset[str] = frozenset()
    encoder_head: EncoderHead | None = None
    # A review threshold of its own for a language with enough held-out replies to
    # choose one (the highest that acts on none of its escalations alone); any other
    # language has ``review_threshold``, chosen over every reply the reader reads.
    review_thresholds: Mapping[str, float] = field(default_factory=dict)
    # The n-grams read alone, beside the encoder: their own calibration, and for a
    # language, the escalation probability at which they alone send a reply to a
    # person. The encoder head, sure of an ordinary meaning, can outvote n-grams
    # that recognise an escalation's words; either reader's suspicion is enough.
    ngram_temperature: float | None = None
    ngram_review_thresholds: Mapping[str, float] = field(default_factory=dict)

    def review_for(self, language: str) -> float:
        """Where a possible escalation starts for a reply surely in ``language`` ("": unsure)."""
        return self.review_thresholds.get(language, self.review_threshold)

    def ngram_review_for(self, language: str) -> float | None:
        """Where the n-grams alone make a reply in ``language`` possibly one (None: never)."""
        return self.ngram_review_thresholds.get(language)

    def read(self, words: str, *, encoder: bool = True, meaning: str = "") -> Reading:
        """The calibrated reading; ``encoder=False`` reads with the n-grams alone (sentences).

        ``meaning``: the words as written, for the encoder (``words`` are folded
        for the n-grams: no accents, no case, Hangul in letters); without it, ``words``.
        """
        logits = self.intercept.copy()
        known = 0
        offset = 0
        for block in self.blocks:
            features = block.features(words)
            if block.kind == "word":
                known = len(features)
            if features:
                columns = np.fromiter(features, dtype=np.intp) + offset
                values = np.fromiter(features.values(), dtype=np.float64)
                logits += self.coef[:, columns] @ values
            offset += len(block.columns)
        ngram_escalation = None
        if encoder and self.encoder_head is not None:
            if self.ngram_temperature:
                alone = _softmax(logits / self.ngram_temperature)
                ngram_escalation = float(alone[self.buckets.index("escalation")])
            logits = logits + self.encoder_head.logits(meaning or words)
        probs = _softmax(logits / self.temperature)
        return Reading(
            {bucket: float(p) for bucket, p in zip(self.buckets, probs, strict=True)},
            known,
            ngram_escalation,
        )

    def probabilities(self, words: str) -> dict[str, float]:
        """Calibrated probability of each bucket for the rider's own words."""
        return self.read(words).probabilities


def _softmax(scaled: np.ndarray) -> np.ndarray:
    exp = np.exp(scaled - scaled.max())
    result: np.ndarray = exp / exp.sum()
    return result


def reader_from_document(document: dict[str, Any]) -> Reader:
    blocks = tuple(
        Block(
            kind=block["kind"],
            columns={term: index for index, term in enumerate(block["terms"])},
            idf=np.asarray(block["idf"], dtype=np.float64),
            characters_as_words=bool(document.get("characters_as_words", False)),
        )
        for block in document["blocks"]
    )
    return Reader(
        buckets=tuple(document["buckets"]),
        blocks=blocks,
        coef=np.asarray(document["coef"], dtype=np.float64),
        intercept=np.asarray(document["intercept"], dtype=np.float64),
        temperature=float(document["temperature"]),
        escalation_threshold=float(document["escalation_threshold"]),
        review_threshold=float(document["review_threshold"]),
        meta=document.get("meta", {}),
        languages=frozenset(document.get("languages", PRE_LANGUAGE_FIGURES)),
        encoder_head=_encoder_head(document.get("encoder_head")),
        review_thresholds={
            language: float(value)
            for language, value in document.get("review_thresholds", {}).items()
        },
        ngram_temperature=document.get("ngram_temperature"),
        ngram_review_thresholds={
            language: float(value)
            for language, value in document.get("ngram_review_thresholds", {}).items()
        },
        known_words=frozenset(
            term
            for block in document["blocks"]
            if block["kind"] == "word"
            for term in block["terms"]
            if " " not in term and len(term) >= 4 and term.isalpha()
        ),
    )


def _encoder_head(head: dict[str, Any] | None) -> EncoderHead | None:
    if head is None:
        return None
    return EncoderHead(
        coef=np.asarray(head["coef"], dtype=np.float64),
        intercept=np.asarray(head["intercept"], dtype=np.float64),
        weight=float(head["weight"]),
    )


def read_artifact(path: Path = ARTIFACT) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


@cache
def default_reader() -> Reader:
    """The committed English and Spanish reader, loaded once per process."""
    return reader_from_document(read_artifact())


@cache
def multilingual_reader() -> Reader | None:
    """The committed multilingual reader, loaded once per process (None if not built)."""
    if not MULTILINGUAL_ARTIFACT.exists():
        return None
    return reader_from_document(read_artifact(MULTILINGUAL_ARTIFACT))


def read_multilingually(language: str) -> bool:
    """Whether a reply surely in ``language`` ("" when unsure) goes to the multilingual reader."""
    return bool(language) and language not in BASE_ROUTE


@dataclass(frozen=True)
class Route:
    """Which reader reads a reply, by the language it is surely written in.

    English and replies too short to tell go to the English and Spanish
    reader, as before; every other language to the multilingual one.
    The safety rules read the languages both read, and the words both know.
    """

    base: Reader
    multilingual: Reader | None = None

    def reader_for(self, language: str) -> Reader:
        if self.multilingual is None or not read_multilingually(language):
            return self.base
        return self.multilingual

    @property
    def languages(self) -> frozenset[str]:
        if self.multilingual is None:
            return self.base.languages
        return BASE_LANGUAGES | self.multilingual.languages

    @property
    def known_words(self) -> frozenset[str]:
        if self.multilingual is None:
            return self.base.known_words
        return self.base.known_words | self.multilingual.known_words


def default_route() -> Route:
    """The committed readers, each loaded once per process."""
    return Route(default_reader(), multilingual_reader())
