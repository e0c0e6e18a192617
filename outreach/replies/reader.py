"""The learned reply reader: a linear model over word and character n-grams.

Trained from the labelled replies in ``evals/data/replies`` by
``manage.py train_reply_model`` (tooling in ``evals``), which writes the
artifact beside this module. The product only reads it: no model or data is
downloaded, and nothing here trains.

The artifact is plain JSON (gzip), not a pickle: it holds the two vocabularies
with their idf weights, the coefficients, a calibration temperature and the
escalation threshold chosen on held-out data. ``probabilities`` rebuilds the
TF-IDF features with scikit-learn's own ``CountVectorizer`` over the stored
vocabularies, so training and reading cannot drift apart.
"""

import gzip
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

ARTIFACT = Path(__file__).resolve().parent / "reader.json.gz"


@dataclass(frozen=True)
class Block:
    """One family of n-grams: how to cut the text, the terms kept and their idf."""

    vectorizer: CountVectorizer
    idf: np.ndarray


@dataclass(frozen=True)
class Reader:
    buckets: tuple[str, ...]
    blocks: tuple[Block, ...]
    coef: np.ndarray  # buckets × features
    intercept: np.ndarray
    temperature: float
    escalation_threshold: float
    meta: dict[str, Any]
    # Words of four letters or more the reader has weights for.
    known_words: frozenset[str] = frozenset()

    def words_known(self, words: str) -> int:
        """How many of the reply's word n-grams the reader has weights for."""
        block = next(b for b in self.blocks if b.vectorizer.analyzer == "word")
        return int(block.vectorizer.transform([words]).nnz)

    def probabilities(self, words: str) -> dict[str, float]:
        """Calibrated probability of each bucket for the rider's own words."""
        features = sparse.hstack([_tfidf(block, words) for block in self.blocks]).tocsr()
        logits = (features @ self.coef.T).ravel() + self.intercept
        scaled = logits / self.temperature
        exp = np.exp(scaled - scaled.max())
        probs = exp / exp.sum()
        return {bucket: float(p) for bucket, p in zip(self.buckets, probs, strict=True)}


def block_settings(kind: str) -> dict[str, Any]:
    """How each block cuts text; training and reading both use these."""
    if kind == "word":
        # Single letters ("i", "y") and the marks of a question count as words.
        return {
            "analyzer": "word",
            "ngram_range": (1, 2),
            "token_pattern": r"(?u)\b\w+\b|[?¿!]",
            "lowercase": False,
        }
    if kind == "char":
        return {"analyzer": "char_wb", "ngram_range": (2, 5), "lowercase": False}
    raise ValueError(f"unknown block {kind!r}")


def _tfidf(block: Block, words: str) -> sparse.csr_matrix:
    counts = block.vectorizer.transform([words]).astype(np.float64)
    counts.data = 1.0 + np.log(counts.data)  # sublinear tf, as trained
    return normalize(counts.multiply(block.idf).tocsr())


def reader_from_document(document: dict[str, Any]) -> Reader:
    blocks = tuple(
        Block(
            vectorizer=CountVectorizer(
                vocabulary={term: index for index, term in enumerate(block["terms"])},
                **block_settings(block["kind"]),
            ),
            idf=np.asarray(block["idf"], dtype=np.float64),
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
        meta=document.get("meta", {}),
        known_words=frozenset(
            term
            for block in document["blocks"]
            if block["kind"] == "word"
            for term in block["terms"]
            if " " not in term and len(term) >= 4 and term.isalpha()
        ),
    )


def read_artifact(path: Path = ARTIFACT) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


@cache
def default_reader() -> Reader:
    """The committed reader, loaded once per process."""
    return reader_from_document(read_artifact())
