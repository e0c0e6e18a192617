"""Labelled replies a model is shown beside the one it reads (few-shot by similarity).

A small model prompted with only a rubric reads replies poorly; shown a few
labelled replies that resemble the one in front of it, it has the project's
own sense of each bucket to go by. The replies are the reader's training
replies (never the sealed holdout), written beside the reader by
``train_reply_model``; "resemble" is measured with the reader's own features
(TF-IDF word and character n-grams, cosine similarity), so no second model
is needed to choose them.

Only the model path loads this file; the reader alone never does.
"""

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from outreach.replies.reader import Reader, default_reader, read_artifact

EXAMPLES = Path(__file__).resolve().parent / "examples.json.gz"


@dataclass(frozen=True)
class LabelledReply:
    words: str
    bucket: str


def reader_vector(reader: Reader, words: str) -> dict[int, float]:
    """The reply as one unit vector over all the reader's blocks side by side."""
    vector: dict[int, float] = {}
    offset = 0
    for block in reader.blocks:
        for column, weight in block.features(words).items():
            vector[offset + column] = weight
        offset += len(block.columns)
    norm = math.sqrt(sum(w * w for w in vector.values()))
    return {column: w / norm for column, w in vector.items()} if norm else {}


class ExampleIndex:
    """An inverted index over the examples' vectors: feature column → (example, weight)."""

    def __init__(self, examples: tuple[LabelledReply, ...], reader: Reader) -> None:
        self.examples = examples
        self.reader = reader
        columns: list[int] = []
        owners: list[int] = []
        weights: list[float] = []
        for index, example in enumerate(examples):
            for column, weight in reader_vector(reader, example.words).items():
                columns.append(column)
                owners.append(index)
                weights.append(weight)
        order = np.argsort(np.asarray(columns, dtype=np.int64), kind="stable")
        self._columns = np.asarray(columns, dtype=np.int64)[order]
        self._owners = np.asarray(owners, dtype=np.int64)[order]
        self._weights = np.asarray(weights, dtype=np.float64)[order]

    def nearest(self, words: str, k: int) -> list[LabelledReply]:
        """The k most similar examples, most similar first (ties by file order)."""
        if k <= 0 or not self.examples:
            return []
        scores = np.zeros(len(self.examples))
        for column, weight in reader_vector(self.reader, words).items():
            start, end = np.searchsorted(self._columns, [column, column + 1])
            scores[self._owners[start:end]] += weight * self._weights[start:end]
        # A stable sort on the negated score keeps file order among equals.
        ranked = np.argsort(-scores, kind="stable")
        return [self.examples[i] for i in ranked[:k] if scores[i] > 0]


def examples_from_document(document: dict[str, Any]) -> tuple[LabelledReply, ...]:
    return tuple(LabelledReply(item["words"], item["bucket"]) for item in document["examples"])


@cache
def example_index() -> ExampleIndex:
    """The committed examples under the committed reader, built once per process."""
    # The same gzip'd JSON as the reader's own artifact.
    return ExampleIndex(examples_from_document(read_artifact(EXAMPLES)), default_reader())
