"""Fitting the reader's n-gram model: plain words and labels in, no Django.

Kept apart from ``reply_model`` so that grouped folds can be fitted in worker
processes (joblib), which import this module without setting Django up.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from outreach.replies.reader import block_settings

MAX_FEATURES = {"word": 12_000, "char": 30_000}


@dataclass
class Fitted:
    vectorizers: list[tuple[str, TfidfVectorizer]]
    model: LogisticRegression
    buckets: tuple[str, ...]

    def features(self, words: Sequence[str]) -> sparse.csr_matrix:
        return sparse.hstack([v.transform(words) for _, v in self.vectorizers]).tocsr()

    def logits(self, words: Sequence[str]) -> np.ndarray:
        raw: np.ndarray = self.model.decision_function(self.features(words))
        # decision_function's columns follow model.classes_; put them in the buckets' order.
        order = [list(self.model.classes_).index(b) for b in self.buckets]
        return raw[:, order]


def fit_words(
    words: Sequence[str],
    labels: Sequence[str],
    c: float,
    buckets: tuple[str, ...],
    characters_as_words: bool = False,
) -> Fitted:
    vectorizers = []
    for kind in ("word", "char"):
        vectorizer = TfidfVectorizer(
            **block_settings(kind, characters_as_words),
            sublinear_tf=True,
            min_df=2,
            max_features=MAX_FEATURES[kind],
        )
        vectorizer.fit(words)
        vectorizers.append((kind, vectorizer))
    fitted = Fitted(vectorizers, LogisticRegression(C=c, max_iter=5000, solver="lbfgs"), buckets)
    fitted.model.fit(fitted.features(words), list(labels))
    return fitted


def held_out_logits(
    words: Sequence[str],
    labels: Sequence[str],
    held: Sequence[str],
    c: float,
    buckets: tuple[str, ...],
    characters_as_words: bool = False,
) -> np.ndarray:
    """Logits for ``held`` from a model fitted on the other replies (one grouped fold)."""
    return fit_words(words, labels, c, buckets, characters_as_words).logits(held)
