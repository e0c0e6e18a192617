"""Training both readers and measuring the route between them on held-out data.

The product reads a reply with the English and Spanish reader when the reply
is in English, or too short to tell; with the multilingual reader when it is
surely in any other language, Spanish included (``outreach.replies.reader.Route``).
So the figures that say how the product reads are the route's: each reply
read, one source held out at a time, by the reader the route gives it, with
that reader's own thresholds.

- **The English and Spanish reader** is trained exactly as before issue 32, on
  the files it always had (``BASE_FILES``); it is calibrated and its
  thresholds chosen on those files' grouped held-out readings. Replies in the
  other files were never its training data, so it reads them as a first run.
- **The multilingual reader** (n-grams with characters as words, plus the
  encoder head) is trained on every training file, English and Spanish
  included, but calibrated and thresholded on the replies the route gives it:
  its escalation threshold is for the project's 98 % recall, and its review
  threshold for none acted on alone, in the languages it reads: one for each
  language with enough replies to choose one, and one over all for the rest.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evals.reply_model import (
    BASE_FILES,
    BASE_TARGET_RECALL,
    BUCKETS,
    ENCODER_WEIGHT,
    TARGET_RECALL,
    TRAINING_FILES,
    Example,
    HeldOut,
    Policy,
    document,
    embeddings,
    examples_document,
    fit,
    fit_encoder_head,
    fit_temperature,
    grouped_logits,
    held_out_readings,
    languages_read,
    load_examples,
    rounded,
    routes_by_language,
    score_routes,
    softmax,
)
from evals.reply_thresholds import (
    choose_review_by_language,
    choose_review_threshold,
    choose_threshold,
)
from outreach.language import MIN_UNITS, units
from outreach.replies.reader import read_multilingually
from outreach.replies.safety import SENTENCE_ESCALATION, read_by_base, sentences


@dataclass(frozen=True)
class Calibrated:
    """One reader's grouped held-out probabilities for every training reply, and its policy."""

    probs: np.ndarray
    policy: Policy
    temperature: float
    # The n-grams' own escalation probability for every reply, and their
    # temperature, where an encoder head joins them (``Reader.ngram_temperature``).
    ngram: np.ndarray | None = None
    ngram_temperature: float | None = None

    def routes(self, example: Example, row: int) -> tuple[str, bool]:
        """``Policy.routes`` of the reply in ``row``."""
        alone = None if self.ngram is None else float(self.ngram[row])
        return self.policy.routes(example, self.probs[row], alone)


@dataclass(frozen=True)
class Training:
    # The English and Spanish reader's artifact, and the multilingual reader's.
    document: dict[str, Any]
    multilingual: dict[str, Any]
    examples: list[Example]
    # What the product did with each reply, held out: (bucket, goes to a person).
    routed: list[tuple[str, bool]]
    # Which replies the route gave the multilingual reader.
    multilingual_rows: list[int]
    # Each reply's likeliest escalation among its sentences read alone (0: none read).
    sentence_escalation: list[float]
    base: Calibrated
    other: Calibrated
    # The labelled replies shown to a model beside the one it reads.
    examples_document: dict[str, Any]


def _calibrated(
    examples: Sequence[Example],
    logits: np.ndarray,
    rows: Sequence[int],
    confidence_threshold: float,
    target_recall: float,
    *,
    by_language: bool = False,
    ngram_logits: np.ndarray | None = None,
) -> Calibrated:
    """Temperature and thresholds chosen on ``rows`` (the replies this reader reads).

    ``by_language``: a review threshold of its own for each language with enough
    replies; with ``ngram_logits`` (the n-grams' alone, beside an encoder head),
    the n-grams' own review threshold where one helps.
    """
    chosen = [examples[i] for i in rows]
    buckets = [e.bucket for e in chosen]
    temperature = fit_temperature(logits[rows], buckets)
    probs = softmax(logits, temperature)
    threshold = choose_threshold(chosen, probs[rows], confidence_threshold, target_recall)
    review = choose_review_threshold(chosen, probs[rows], confidence_threshold, threshold)
    policy = Policy(threshold, confidence_threshold, review)
    if not by_language:
        return Calibrated(probs, policy, temperature)
    ngram, ngram_temperature = None, None
    if ngram_logits is not None:
        ngram_temperature = fit_temperature(ngram_logits[rows], buckets)
        ngram = softmax(ngram_logits, ngram_temperature)[:, BUCKETS.index("escalation")]
    per = choose_review_by_language(
        chosen, probs[rows], policy, None if ngram is None else ngram[rows]
    )
    policy = Policy(threshold, confidence_threshold, review, per.whole, per.ngrams)
    return Calibrated(probs, policy, temperature, ngram, ngram_temperature)


def train(confidence_threshold: float, vectors: np.ndarray | None = None) -> Training:
    """Both readers, calibrated on grouped held-out readings, and the route's figures.

    ``vectors``: the training replies' encoder embeddings, when already computed.
    """
    examples = load_examples(TRAINING_FILES)
    base_rows = [i for i, e in enumerate(examples) if e.file in BASE_FILES]
    base_examples = [examples[i] for i in base_rows]
    other_rows = [i for i, e in enumerate(examples) if read_multilingually(e.detected)]

    # The English and Spanish reader: its own files held out by source; the rest
    # (never its training data) read by the reader fitted on all its files.
    base_fitted = fit(base_examples)
    base_logits = base_fitted.logits([e.words for e in examples])
    base_logits[base_rows] = grouped_logits(base_examples)
    base = _calibrated(examples, base_logits, base_rows, confidence_threshold, BASE_TARGET_RECALL)

    if ENCODER_WEIGHT and vectors is None:
        vectors = embeddings(examples)
    multilingual_rows = set(other_rows)
    held = held_out_readings(
        examples,
        vectors,
        [sentences(e.words) if i in multilingual_rows else [] for i, e in enumerate(examples)],
    )
    other = _calibrated(
        examples,
        held.logits,
        other_rows,
        confidence_threshold,
        TARGET_RECALL,
        by_language=True,
        ngram_logits=held.ngram_logits,
    )
    escalated = sentence_escalation(held, other.temperature)

    routed = route_all(examples, base, other, other_rows, escalated)
    read = languages_read(
        routes_by_language([examples[i] for i in other_rows], [routed[i] for i in other_rows])
    )
    multilingual = document(
        fit(examples, characters_as_words=True),
        other.temperature,
        other.policy.escalation_threshold,
        other.policy.review_threshold or 0.0,
        examples,
        read,
        characters_as_words=True,
        review_by_language=other.policy.review_by_language,
        ngram_reviews=(
            None
            if other.ngram_temperature is None
            else (other.ngram_temperature, other.policy.ngram_review_by_language)
        ),
    )
    if ENCODER_WEIGHT and vectors is not None:
        head = fit_encoder_head(vectors, [e.bucket for e in examples])
        order = [list(head.classes_).index(b) for b in BUCKETS]
        multilingual["encoder_head"] = {
            "coef": [rounded(row) for row in head.coef_[order]],
            "intercept": rounded(head.intercept_[order]),
            "weight": ENCODER_WEIGHT,
        }
    return Training(
        document=document(
            base_fitted,
            base.temperature,
            base.policy.escalation_threshold,
            base.policy.review_threshold or 0.0,
            base_examples,
        ),
        multilingual=multilingual,
        examples=examples,
        routed=routed,
        multilingual_rows=other_rows,
        sentence_escalation=escalated,
        base=base,
        other=other,
        examples_document=examples_document(examples),
    )


def sentence_escalation(held: HeldOut, temperature: float) -> list[float]:
    """Each reply's highest escalation probability among its sentences read alone."""
    column = BUCKETS.index("escalation")
    return [
        float(softmax(rows, temperature)[:, column].max()) if len(rows) else 0.0
        for rows in held.sentences
    ]


def route_all(
    examples: Sequence[Example],
    base: Calibrated,
    other: Calibrated,
    other_rows: Sequence[int],
    escalated: Sequence[float] = (),
    sentence_threshold: float = SENTENCE_ESCALATION,
) -> list[tuple[str, bool]]:
    """What the product does with each reply: the reader the route gives it decides.

    The safety rules as the product applies them (``classify.with_safety_rules``):
    a reply the multilingual reader reads is an escalation when one of its
    sentences, read alone, is one (``escalation_anywhere``, from ``escalated``);
    a reply the English and Spanish reader reads because the detector named no
    language for sure, nor guessed English or Spanish, though it is long enough to,
    is read by the multilingual reader
    too, and the more cautious reading decides (``unnamed_language``).
    """
    multilingual = set(other_rows)
    sentence_threshold = max(sentence_threshold, other.policy.escalation_threshold)
    routed = []
    for i, e in enumerate(examples):
        if i in multilingual:
            bucket, to_person = other.routes(e, i)
            if escalated and escalated[i] >= sentence_threshold:
                bucket, to_person = "escalation", True
            routed.append((bucket, to_person))
            continue
        bucket, to_person = base.policy.routes(e, base.probs[i])
        if not e.detected and not read_by_base(e.guess) and units(e.words) >= MIN_UNITS:
            second, second_to_person = other.routes(e, i)
            if second == "escalation" and bucket != "escalation":
                bucket, to_person = second, True
            elif second_to_person and _possible_escalation(other, i):
                to_person = True
        routed.append((bucket, to_person))
    return routed


def sentence_tradeoff(training: Training) -> list[dict[str, float]]:
    """``escalation_anywhere``'s threshold → the figures of the replies the multilingual
    reader reads, held out (1.0: the rule off)."""
    rows = training.multilingual_rows
    chosen = [training.examples[i] for i in rows]
    figures = []
    for threshold in (0.5, 0.6, 0.7, 0.8, 1.0):
        routed = route_all(
            training.examples,
            training.base,
            training.other,
            rows,
            training.sentence_escalation,
            threshold + 1e-9 if threshold == 1.0 else threshold,
        )
        result = score_routes(chosen, [routed[i] for i in rows])
        figures.append({"threshold": threshold, **result})
    return figures


def _possible_escalation(reader: Calibrated, row: int) -> bool:
    """Whether a reader sends a reply in no named language to a person as a possible escalation."""
    escalation = reader.probs[row][BUCKETS.index("escalation")]
    review = reader.policy.review_threshold or 0.0
    return bool(review <= escalation < reader.policy.escalation_threshold)
