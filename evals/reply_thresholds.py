"""Choosing a reader's thresholds on grouped held-out readings.

The escalation threshold is set for recall; the review thresholds, below it,
for no held-out escalation acted on alone: one over all, one for each
language with enough replies, and beside it, where that sends fewer ordinary
replies to a person, one for the n-grams read alone. ``tradeoff`` prints what
each choice costs.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evals.reply_model import (
    MIN_LANGUAGE_REPLIES,
    TARGET_RECALL,
    Example,
    Policy,
    score,
)


def choose_threshold(
    examples: Sequence[Example],
    probs: np.ndarray,
    confidence_threshold: float,
    target_recall: float = TARGET_RECALL,
) -> float:
    """The highest escalation threshold whose held-out recall reaches ``target_recall``."""
    for threshold in np.round(np.arange(0.95, 0.0, -0.01), 2):
        policy = Policy(float(threshold), confidence_threshold)
        if score(examples, probs, policy)["escalation_recall"] >= target_recall:
            return float(threshold)
    return 0.01


# Below 0.01, where an escalation the reader barely suspects still is one: one
# Arabizi refusal read at 0.0045 would otherwise leave every Arabic reply unread.
FINE_REVIEW = (0.005, 0.002, 0.001)


def choose_review_threshold(
    examples: Sequence[Example],
    probs: np.ndarray,
    confidence_threshold: float,
    escalation_threshold: float,
    ngram: tuple[np.ndarray, float] | None = None,
) -> float:
    """The highest threshold, up to the escalation one, that acts on no held-out escalation alone.

    Between it and the escalation threshold a reply keeps its likeliest
    ordinary label but goes to a person: the label stays as good as the
    reader's, and the caution costs automation only (``tradeoff``).
    ``ngram``: the n-grams' own escalation probabilities and their review
    threshold, which sends replies to a person too.
    """
    alone, by_ngrams = None, {}
    if ngram is not None:
        alone = ngram[0]
        by_ngrams = {e.detected: ngram[1] for e in examples}
    for threshold in (*np.round(np.arange(escalation_threshold, 0.0, -0.01), 2), *FINE_REVIEW):
        policy = Policy(
            escalation_threshold,
            confidence_threshold,
            float(threshold),
            ngram_review_by_language=by_ngrams,
        )
        if score(examples, probs, policy, alone)["escalations_acted_on_without_a_person"] == 0:
            return float(threshold)
    return 0.0  # every reply it reads goes to a person


# The n-grams' own review thresholds tried for a language, beside the whole reading's.
NGRAM_REVIEW = (0.99, 0.97, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1)


@dataclass(frozen=True)
class Reviews:
    """Each language's review threshold, and where the n-grams alone have one, theirs."""

    whole: dict[str, float]
    ngrams: dict[str, float]


def choose_review_by_language(
    examples: Sequence[Example],
    probs: np.ndarray,
    policy: Policy,
    ngram: np.ndarray | None = None,
) -> Reviews:
    """A review threshold for each detected language with enough replies to choose one.

    A single escalation the reader barely suspects, in one language, held every
    other language's review threshold at its floor (0.01), and so sent most of
    their ordinary replies to a person; each language now answers for its own.
    Only those with ``MIN_LANGUAGE_REPLIES`` held-out replies or more get one.

    ``ngram``: the n-grams' own escalation probabilities, where an encoder head
    joins them. The encoder, sure of an ordinary meaning, outvotes n-grams that
    know an escalation's words (a death in the family, a lawyer): so a language
    may also send a reply to a person when the n-grams alone suspect one, at the
    n-gram threshold (``NGRAM_REVIEW``) that, with the whole reading's threshold
    chosen beside it, sends the fewest of its ordinary replies to a person.
    """
    whole, ngrams = {}, {}
    for language in sorted({e.detected for e in examples} - {""}):
        rows = [i for i, e in enumerate(examples) if e.detected == language]
        if len(rows) < MIN_LANGUAGE_REPLIES:
            continue
        chosen = [examples[i] for i in rows]
        pair = (policy.confidence_threshold, policy.escalation_threshold)
        whole[language] = choose_review_threshold(chosen, probs[rows], *pair)
        if ngram is None:
            continue
        fewest = _ordinary_to_person(chosen, probs[rows], policy, whole[language])
        for ngram_review in NGRAM_REVIEW:
            both = (ngram[rows], ngram_review)
            review = choose_review_threshold(chosen, probs[rows], *pair, both)
            sent = _ordinary_to_person(chosen, probs[rows], policy, review, both)
            if sent < fewest:
                fewest, whole[language], ngrams[language] = sent, review, ngram_review
    return Reviews(whole, ngrams)


def _ordinary_to_person(
    examples: Sequence[Example],
    probs: np.ndarray,
    policy: Policy,
    review: float,
    ngram: tuple[np.ndarray, float] | None = None,
) -> float:
    alone, ngram_review = ngram if ngram is not None else (None, None)
    chosen = Policy(
        policy.escalation_threshold,
        policy.confidence_threshold,
        review,
        ngram_review_by_language=(
            {e.detected: ngram_review for e in examples} if ngram_review is not None else {}
        ),
    )
    rate: float = score(examples, probs, chosen, alone)["ordinary_to_person_rate"]
    return rate


def tradeoff(
    examples: Sequence[Example],
    probs: np.ndarray,
    confidence_threshold: float,
    escalation_threshold: float,
) -> list[dict[str, float]]:
    """The threshold for a person → escalation recall, acted alone, automation, accuracy.

    Below the escalation threshold a reply goes to a person with its ordinary
    label (the review threshold); above it, the threshold is the escalation one.
    """
    rows = []
    for threshold in (0.03, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5):
        policy = Policy(max(threshold, escalation_threshold), confidence_threshold, threshold)
        result = score(examples, probs, policy)
        rows.append(
            {
                "threshold": threshold,
                "escalation_recall": result["escalation_recall"],
                "acted_alone": result["escalations_acted_on_without_a_person"],
                "automation": result["automation"],
                "bucket_accuracy": result["bucket_accuracy"],
            }
        )
    return rows
