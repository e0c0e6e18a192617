"""Training and honest measurement of the learned reply readers: the pieces.

Each reader (``outreach/replies/reader.py``) is a multinomial logistic
regression over TF-IDF word 1–2-grams and character 2–5-grams of the rider's
own words (``rider_words``), the multilingual one with a linear head over a
sentence encoder beside them, with one calibration temperature, an
escalation threshold (chosen for recall) and a review threshold below it
(chosen so that no held-out escalation is acted on without a person). This
module fits, calibrates and scores; ``reply_routes`` builds both readers and
says how the route between them reads replies it never saw:

- **grouped cross-validation**: each source (one writer's batch) is held out in
  turn and read by a reader trained on all the others — the estimate of a
  first run on new wording;
- **the sealed holdouts** (``replies/holdout.jsonl``, ``replies/languages-holdout.jsonl``)
  are never trained on and never used to choose anything: their scores are true
  first runs.

Everything is deterministic (fixed solver, sorted inputs, no sampling), so
``train_reply_model`` rebuilds the committed artifacts exactly.
"""

import dataclasses
import gzip
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sklearn.linear_model import LogisticRegression

    from evals.reply_fit import Fitted

from outreach.language import detect
from outreach.replies.classify import (
    BUCKETS,
    SAME_ACTION,
    folded_words,
    rider_said,
    written_words,
)
from outreach.replies.guardrails import check_untrusted
from outreach.replies.own_words import strip_quoted
from outreach.replies.rules import first_hit
from outreach.replies.safety import sure_language, unsure_guess

DATA = Path(__file__).resolve().parent / "data" / "replies"
# The English and Spanish reader is trained on these, as before issue 32.
BASE_FILES = (
    "core",
    "regressions",
    "adversarial",
    "false-alarms",
    "reader-examples",
    "calm-escalations",
    "bilingual",
    "leaving",
)
# The multilingual reader on every labelled reply file but the sealed holdouts.
TRAINING_FILES = (
    *BASE_FILES,
    "languages",
    *(
        f"languages-writer-{writer}"
        for writer in (
            *("u", "s", "v", "w", "x", "y", "z"),
            *("aa", "ab", "ac", "ad", "ae", "af", "ag", "ah", "ai", "aj"),
            *("ak", "al", "am", "an", "ao", "ap"),
            *("aq", "ar", "as", "at", "au", "av"),
            *("aw", "ax", "ay", "az"),
            *("ba", "bb", "bc", "bd", "be"),
        )
    ),
)
HOLDOUT_FILE = "holdout"
# Inverse regularisation strength; chosen by grouped cross-validation over
# 1, 3, 10 and 30 (docs/evaluation.md has the figures).
C = 3.0
# Escalation recall the threshold is set for, on held-out sources: 99 % for the
# English and Spanish reader, as before; the project's 98 % for the multilingual
# one (at 0.99 over every language, with the encoder head, the rule chose 0.11 and
# English read 87.4 %: docs/evaluation.md).
BASE_TARGET_RECALL = 0.99
TARGET_RECALL = 0.98
# Decimal places kept in the artifact: enough that readings do not change.
PLACES = 5


@dataclass(frozen=True)
class Example:
    id: str
    source: str
    file: str
    text: str
    subject: str
    words: str
    bucket: str
    # Caught before the reader: a guardrail or a named rule (escalations only).
    caught: bool
    language: str = "und"
    # The language the product detects in the rider's own words ("" when unsure):
    # which reader reads the reply (``outreach.replies.reader.Route``).
    detected: str = ""
    # The detector's likeliest language when it is not sure ("" when it is).
    guess: str = ""
    # The rider's words as written, which the sentence encoder reads ("": ``words``).
    meaning: str = ""


def load_examples(names: Iterable[str], folder: Path = DATA) -> list[Example]:
    examples = []
    for name in names:
        path = folder / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            text, subject = item["text"], item.get("subject", "")
            said = rider_said(text, subject)
            words = folded_words(said)
            detected = detect(strip_quoted(text))
            caught = bool(check_untrusted(text, subject) or first_hit(words))
            examples.append(
                Example(
                    id=item["id"],
                    source=item.get("source", name),
                    file=name,
                    text=text,
                    subject=subject,
                    words=words,
                    bucket=item["expected"]["bucket"],
                    caught=caught,
                    language=item.get("language", "und"),
                    detected=sure_language(detected),
                    guess=unsure_guess(detected),
                    meaning=written_words(said),
                )
            )
    return examples


# scipy and scikit-learn (about 3 s of imports) are imported where a reader is
# trained (evals/reply_fit.py), so what only scores or chooses thresholds does not
# pay for them.


def fit(examples: Sequence[Example], c: float = C, characters_as_words: bool = False) -> "Fitted":
    from evals.reply_fit import fit_words

    return fit_words(
        [e.words for e in examples], [e.bucket for e in examples], c, BUCKETS, characters_as_words
    )


# Folds fitted at once: one a core on the 2-core machine (each fit is deterministic,
# so the artifact is the same bytes however many run together).
JOBS = 2


@dataclass(frozen=True)
class HeldOut:
    """Grouped held-out readings: each reply read by a fold trained without its source."""

    logits: np.ndarray  # one row per reply
    # Each reply's sentences (``safety.sentences``), read by the same fold with the
    # n-grams alone, as ``escalation_anywhere`` reads them: one row per sentence.
    sentences: list[np.ndarray]
    # The n-grams' logits alone, where an encoder head's were added to ``logits``.
    ngram_logits: np.ndarray | None = None


def grouped_logits(
    examples: Sequence[Example],
    c: float = C,
    jobs: int | None = None,
    characters_as_words: bool = False,
) -> np.ndarray:
    """Each example's logits from a reader trained without its source."""
    return grouped_readings(examples, c, jobs, characters_as_words).logits


def grouped_readings(
    examples: Sequence[Example],
    c: float = C,
    jobs: int | None = None,
    characters_as_words: bool = False,
    sentences: Sequence[Sequence[str]] | None = None,
) -> HeldOut:
    """``grouped_logits``, and each reply's ``sentences`` read by the same fold."""
    sentences = sentences or [() for _ in examples]
    sources = sorted({e.source for e in examples})
    logits = np.zeros((len(examples), len(BUCKETS)))
    held = [[i for i, e in enumerate(examples) if e.source == source] for source in sources]
    from joblib import Parallel, delayed

    from evals.reply_fit import held_out_logits

    folds = Parallel(n_jobs=jobs or JOBS)(
        delayed(held_out_logits)(
            [e.words for e in examples if e.source != source],
            [e.bucket for e in examples if e.source != source],
            [examples[i].words for i in rows] + [t for i in rows for t in sentences[i]],
            c,
            BUCKETS,
            characters_as_words,
        )
        for source, rows in zip(sources, held, strict=True)
    )
    read: list[np.ndarray] = [np.zeros((0, len(BUCKETS))) for _ in examples]
    for rows, fold in zip(held, folds, strict=True):
        logits[rows] = fold[: len(rows)]
        offset = len(rows)
        for i in rows:
            read[i] = fold[offset : offset + len(sentences[i])]
            offset += len(sentences[i])
    return HeldOut(logits, read)


def softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    scaled = logits / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    exp = np.exp(scaled)
    result: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
    return result


def fit_temperature(logits: np.ndarray, buckets: Sequence[str]) -> float:
    """The temperature that makes held-out probabilities honest (least log loss)."""
    order: list[str] = list(BUCKETS)
    truth = np.array([order.index(b) for b in buckets])

    def loss(t: float) -> float:
        probs = softmax(logits, t)
        return float(-np.log(probs[np.arange(len(truth)), truth] + 1e-12).mean())

    from scipy.optimize import minimize_scalar

    found = minimize_scalar(loss, bounds=(0.05, 20.0), method="bounded")
    return round(float(found.x), 4)


@dataclass(frozen=True)
class Policy:
    """What the product does with a reading (``classify.read_words``), in numbers."""

    escalation_threshold: float
    confidence_threshold: float
    # A possible escalation: the best ordinary reading, for a person (None: none below).
    review_threshold: float | None = None
    # Its own review threshold for a language (the one the product detects).
    review_by_language: Mapping[str, float] = field(default_factory=dict)
    # Where the n-grams' escalation probability alone sends a reply in a language
    # to a person (``Reader.ngram_review_thresholds``).
    ngram_review_by_language: Mapping[str, float] = field(default_factory=dict)

    def routes(
        self, example: Example, probs: np.ndarray, ngram_escalation: float | None = None
    ) -> tuple[str, bool]:
        """(bucket, goes to a person) for one reply, as the product decides it.

        ``ngram_escalation``: the n-grams' own escalation probability, beside the encoder.
        """
        p = dict(zip(BUCKETS, probs, strict=True))
        if example.caught or p["escalation"] >= self.escalation_threshold:
            return "escalation", True
        ordinary = sorted((b for b in BUCKETS if b != "escalation"), key=p.__getitem__)
        best, runner_up = ordinary[-1], ordinary[-2]
        review = self.review_by_language.get(example.detected, self.review_threshold)
        if review is not None and p["escalation"] >= review:
            return best, True
        ngram_review = self.ngram_review_by_language.get(example.detected, 2.0)
        if ngram_escalation is not None and ngram_escalation >= ngram_review:
            return best, True
        confidence = p[best] + (p[runner_up] if {best, runner_up} == SAME_ACTION else 0.0)
        return best, confidence < self.confidence_threshold


def score(
    examples: Sequence[Example],
    probs: np.ndarray,
    policy: Policy,
    ngram: np.ndarray | None = None,
) -> dict[str, Any]:
    """Bucket accuracy, escalation recall, escalations acted on alone, automation.

    ``ngram``: each reply's escalation probability from the n-grams alone.
    """
    return score_routes(examples, routes(examples, probs, policy, ngram))


def routes(
    examples: Sequence[Example],
    probs: np.ndarray,
    policy: Policy,
    ngram: np.ndarray | None = None,
) -> list[tuple[str, bool]]:
    """``Policy.routes`` of every reply."""
    alone = [None] * len(examples) if ngram is None else [float(p) for p in ngram]
    return [policy.routes(e, p, a) for e, p, a in zip(examples, probs, alone, strict=True)]


def score_routes(examples: Sequence[Example], routed: Sequence[tuple[str, bool]]) -> dict[str, Any]:
    """``score`` from what the product did with each reply: (bucket, goes to a person)."""
    escalations = [i for i, e in enumerate(examples) if e.bucket == "escalation"]
    acted_alone = [examples[i].id for i in escalations if not routed[i][1]]
    caught = [i for i in escalations if routed[i][0] == "escalation"]
    ordinary = [i for i, e in enumerate(examples) if e.bucket != "escalation"]
    return {
        "replies": len(examples),
        "bucket_accuracy": _rate(
            sum(r[0] == e.bucket for r, e in zip(routed, examples, strict=True)), len(examples)
        ),
        "escalation_recall": _rate(len(caught), len(escalations)),
        "escalations": len(escalations),
        "escalations_acted_on_without_a_person": len(acted_alone),
        "acted_alone_ids": acted_alone,
        "automation": _rate(sum(not r[1] for r in routed), len(examples)),
        "ordinary_to_person_rate": _rate(sum(routed[i][1] for i in ordinary), len(ordinary)),
    }


def score_by_language(
    examples: Sequence[Example], probs: np.ndarray, policy: Policy
) -> dict[str, dict[str, Any]]:
    """``score`` for each language's replies on its own."""
    return routes_by_language(examples, routes(examples, probs, policy))


def routes_by_language(
    examples: Sequence[Example], routed: Sequence[tuple[str, bool]]
) -> dict[str, dict[str, Any]]:
    """``score_routes`` for each language's replies on its own."""
    figures = {}
    for language in sorted({e.language for e in examples}):
        rows = [i for i, e in enumerate(examples) if e.language == language]
        figures[language] = score_routes([examples[i] for i in rows], [routed[i] for i in rows])
    return figures


# A language is read when its held-out replies are safe to act on (no escalation
# acted on without a person) and read right often enough to act on: the floor of
# the regression sets, 85 %. Replies in any other language go to a person
# (outreach.replies.safety); the project's 90 % and 98 % recall are the goals for
# each (an escalation read as another bucket still reaches a person in the review
# band, so recall is a target, not the gate: English reads 97.9 %).
READ_FLOOR = {"bucket_accuracy": 0.85}
# Fewer held-out replies than this say too little about a language to read it.
MIN_LANGUAGE_REPLIES = 30


def languages_read(by_language: dict[str, dict[str, Any]]) -> list[str]:
    """The languages whose held-out figures meet READ_FLOOR with no escalation acted alone."""
    return sorted(
        language
        for language, figures in by_language.items()
        if language not in ("und", "zxx")
        and figures["replies"] >= MIN_LANGUAGE_REPLIES
        and figures["escalations_acted_on_without_a_person"] == 0
        and all(figures[name] >= floor for name, floor in READ_FLOOR.items())
    )


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 1.0


def document(
    fitted: "Fitted",
    temperature: float,
    threshold: float,
    review_threshold: float,
    examples: Sequence[Example],
    languages: Sequence[str] = (),
    characters_as_words: bool = False,
    review_by_language: Mapping[str, float] | None = None,
    ngram_reviews: tuple[float, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """The artifact: vocabularies, idf, coefficients, temperature, thresholds, provenance.

    The languages read and ``characters_as_words`` are written only when set: an
    artifact without them reads as the English and Spanish reader always has.
    ``ngram_reviews``: the n-grams' own temperature and review thresholds.
    """
    blocks = []
    columns: list[np.ndarray] = []
    offset = 0
    for kind, vectorizer in fitted.vectorizers:
        terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
        blocks.append(
            {"kind": kind, "terms": terms, "idf": rounded(vectorizer.idf_)},
        )
        columns.append(np.arange(offset, offset + len(terms)))
        offset += len(terms)
    order = [list(fitted.model.classes_).index(b) for b in BUCKETS]
    digest = hashlib.sha256(
        "\n".join(f"{e.id}\t{e.bucket}\t{e.words}" for e in examples).encode()
    ).hexdigest()
    built: dict[str, Any] = {
        "format": 1,
        "buckets": list(BUCKETS),
        "blocks": blocks,
        "coef": [rounded(row) for row in fitted.model.coef_[order]],
        "intercept": rounded(fitted.model.intercept_[order]),
        "temperature": temperature,
        "escalation_threshold": threshold,
        "review_threshold": review_threshold,
        "meta": {
            "trained_on": sorted({e.file for e in examples}),
            "replies": len(examples),
            "data_sha256": digest,
            "c": C,
        },
    }
    if languages:
        built["languages"] = list(languages)
    if characters_as_words:
        built["characters_as_words"] = True
    if review_by_language:
        built["review_thresholds"] = dict(sorted(review_by_language.items()))
    if ngram_reviews is not None and ngram_reviews[1]:
        built["ngram_temperature"] = ngram_reviews[0]
        built["ngram_review_thresholds"] = dict(sorted(ngram_reviews[1].items()))
    return built


# Longer replies are cut for the prompt: the opening says what a reply is about.
EXAMPLE_CHARS = 400


def examples_document(examples: Sequence[Example]) -> dict[str, Any]:
    """The labelled replies a model may be shown (``outreach/replies/examples.py``).

    Replies a guardrail or named rule catches never reach a model, so they are
    left out; so are exact repeats of a reply's words.
    """
    seen: set[str] = set()
    kept = []
    for example in examples:
        if example.caught or example.words in seen or not example.words.strip():
            continue
        seen.add(example.words)
        kept.append({"words": example.words[:EXAMPLE_CHARS], "bucket": example.bucket})
    return {"format": 1, "examples": kept, "meta": {"from": sorted({e.file for e in examples})}}


def rounded(values: np.ndarray) -> list[float]:
    return [round(float(v), PLACES) for v in values]


def artifact_bytes(document: dict[str, Any]) -> bytes:
    """Gzip'd JSON with no timestamp and sorted keys: the same model, the same bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as handle:
        handle.write(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())
    return buffer.getvalue()


# The multilingual encoder head's logits are added to the n-grams' times this
# (0: the n-grams alone); its inverse regularisation. Chosen on grouped held-out
# readings by language (docs/evaluation.md, the readers compared).
ENCODER_WEIGHT = 1.0
ENCODER_C = 100.0


def embeddings(examples: Sequence[Example]) -> np.ndarray:
    from outreach.replies.encoder import embed_many  # the encoder loads only when training

    return embed_many([e.meaning or e.words for e in examples])


def fit_encoder_head(vectors: np.ndarray, labels: Sequence[str]) -> "LogisticRegression":
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=ENCODER_C, max_iter=5000, solver="lbfgs").fit(vectors, labels)


def encoder_logits(head: "LogisticRegression", vectors: np.ndarray) -> np.ndarray:
    raw: np.ndarray = head.decision_function(vectors)
    return raw[:, [list(head.classes_).index(b) for b in BUCKETS]]


def held_out_readings(
    examples: Sequence[Example],
    vectors: np.ndarray | None = None,
    sentences: Sequence[Sequence[str]] | None = None,
) -> HeldOut:
    """Grouped held-out readings of the multilingual reader: n-grams, plus the encoder head.

    ``sentences``: each reply's sentences, read by the n-grams alone (as the product does).
    """
    readings = grouped_readings(examples, characters_as_words=True, sentences=sentences)
    if not ENCODER_WEIGHT:
        return readings
    readings = dataclasses.replace(readings, ngram_logits=readings.logits.copy())
    logits = readings.logits
    vectors = embeddings(examples) if vectors is None else vectors
    labels = [e.bucket for e in examples]
    for source in sorted({e.source for e in examples}):
        held = [i for i, e in enumerate(examples) if e.source == source]
        rest = [i for i, e in enumerate(examples) if e.source != source]
        head = fit_encoder_head(vectors[rest], [labels[i] for i in rest])
        logits[held] += ENCODER_WEIGHT * encoder_logits(head, vectors[held])
    return readings
