"""Classify a rider's email reply into one of the enumerated buckets.

Order (design, audit step 5): quoted history and signature stripped
(``own_words``) →
guardrails (a hit is an escalation a person reads) → the named escalation
rules → the learned reader (``reader.py``), escalation first → with
``LLM_BACKEND=openai`` the model, asked only about replies not already bound
for a person, which answers a bucket and a confidence and falls back to the
reader on any failure. Below ``REPLY_CONFIDENCE_THRESHOLD``, and for every
escalation, ``hitl`` is set: a person looks before anything happens.
"""

import re
from dataclasses import dataclass
from typing import Literal, get_args

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from agents import llm
from agents.model_errors import (
    ModelBadOutput,
    ModelError,
    ModelRateLimited,
    ModelRefused,
    ModelTimeout,
    ModelTruncated,
    ModelUnavailable,
)
from agents.prompting import Prompt, data_block, load_prompt
from agents.tracing import RunTrace, traced_call
from outreach.replies.boilerplate import without_boilerplate
from outreach.replies.examples import example_index
from outreach.replies.guardrails import check_untrusted
from outreach.replies.own_words import forwarded_news, strip_quoted, without_signature
from outreach.replies.reader import Reader, Reading, Route, default_reader, default_route
from outreach.replies.rules import first_hit
from outreach.replies.safety import (
    ESCALATION_ANYWHERE,
    UNNAMED_LANGUAGE,
    UNREAD_LANGUAGE,
    LanguageFinding,
    escalated_sentence,
    read_languages,
    read_twice,
)
from outreach.replies.text_readings import as_written, normalise

Bucket = Literal["acknowledgment", "question", "update", "escalation"]
BUCKETS: tuple[Bucket, ...] = get_args(Bucket)
AGENT = "classifier"
PROMPT_NAME = "classify_reply"
# Replies whose readings lead to the same action: an update re-audits the
# failed checks, an acknowledgment every check; either way the record decides.
SAME_ACTION = frozenset({"update", "acknowledgment"})


class ReplyClassification(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    bucket: Bucket
    confidence: float = Field(ge=0, le=1)
    reasoning: str
    hitl: bool
    guardrail: str = ""
    # The escalation rule that fired, if one did.
    rule: str = ""
    # Beside an escalation: the likeliest ordinary reading (an update is still
    # news for the person who handles it).
    also: str = ""
    probabilities: dict[str, float] = Field(default_factory=dict)
    # Set when a configured model gave no label: "model_unavailable" (the
    # reply waits) or "classification_failed" (a person labels it).
    failure: str = ""
    # A configured model's own label, kept beside the reading it may only add caution to.
    model_bucket: str = ""
    # Read as an ordinary reply, but its escalation probability is at or above
    # the review threshold: it may be one, so a person reads it.
    possible_escalation: bool = False
    # The reply's language, where the detector is sure of it ("" otherwise).
    language: str = ""
    # The safety rules (``safety.py``) that added caution to the reading.
    safety_rules: tuple[str, ...] = ()


class ModelReplyLabel(BaseModel):
    """All a model may answer about a reply: a bucket from the enum and a confidence."""

    model_config = ConfigDict(extra="forbid")
    bucket: Bucket
    confidence: float = Field(ge=0, le=1)


def classify_reply(
    text: str,
    subject: str = "",
    *,
    trace: RunTrace | None = None,
    ours: tuple[str, ...] = (),
    hidden_text: bool = False,
) -> ReplyClassification:
    """The reply's bucket; with ``trace``, a model call is recorded as its child run.

    ``ours`` are the subjects of the emails we sent on the thread: a reply
    whose subject only repeats one of them has said nothing in it.
    ``hidden_text``: its HTML hides words from the reader (flag ``hidden_text``).
    """
    if hidden_text:
        # Words written for software, not for a person: a person reads them.
        return ReplyClassification(
            bucket="escalation",
            confidence=1.0,
            reasoning="Guardrail: the HTML hides words from its reader. A person reads this reply.",
            hitl=True,
            guardrail="hidden_html",
        )
    # Guardrails read the whole message, quoted part included: hidden text and
    # a fake "On … wrote:" line must not be a way to slip past them.
    hit = check_untrusted(text, subject)
    if hit:
        return ReplyClassification(
            bucket="escalation",
            confidence=1.0,
            reasoning=f"Guardrail: {hit.reason}. A person reads this reply.",
            hitl=True,
            guardrail=hit.rule,
        )
    body = strip_quoted(text)
    said = rider_said(text, subject, body, ours=ours)
    words, meaning = folded_words(said), written_words(said)
    route = default_route()
    found = read_languages(body, route)
    reader = route.reader_for(found.language)
    result = with_safety_rules(
        read_words(words, reader, found.language, meaning), found, words, route, meaning
    )
    backend = llm.get_backend()
    if isinstance(backend, llm.OpenAIClient) and result.bucket != "escalation":
        # An escalation stays one: a model may add caution, never remove it.
        request = model_request(body, subject, words)
        return _ask_model(backend, request, result, trace)
    return result


# --- Reading ------------------------------------------------------------------------------

_POINTS_AT_SUBJECT = re.compile(r"\b(?:see|read|per|as in|check) (?:the )?subject\b", re.I)
_REPLY_PREFIX = re.compile(r"^(?:\s*(?:re|fwd?|aw|sv|rv)\s*:\s*)+", re.I)

# A reply pointing at a file it sent ("see attached", "I've attached my lease"),
# not a footer's "this e-mail and any attachments are confidential".
_ATTACHMENT_PATTERN = (
    r"\b(?:see|find|please find|i've|i have|i|we've|we have|have|has|is|are) attached\b"
    r"|\battached (?:is|are|you'll find|please find|(?:\w+ ){0,2}(?:letter|note|form|document|"
    r"copy|pdf|file|photo|picture|screenshot|paperwork|proof|lease|bill|statement))\b"
    r"|\battaching\b|\b(?:in|see) the attachment\b"
    r"|\b(?:adjunto|anexo) (?:la|el|los|las|una|un|mi|mis)\b|\ben el (?:archivo )?adjunto\b"
)

_ATTACHMENT = re.compile(_ATTACHMENT_PATTERN)
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
# Phone spellings read as the words they stand for, so one set of patterns serves both.
_SHORTHAND = {
    "u": "you",
    "ur": "your",
    "yr": "your",
    "pls": "please",
    "plz": "please",
    "tnx": "thanks",
    "thnx": "thanks",
    "thanx": "thanks",
    "thks": "thanks",
    "tks": "thanks",
    "chek": "check",
    "msg": "message",
    "im": "i'm",
    "ive": "i've",
    "dont": "don't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "cant": "can't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "hasnt": "hasn't",
    "havent": "haven't",
    "hadnt": "hadn't",
    "arent": "aren't",
    "werent": "weren't",
    "np": "no problem",
    "upd8": "update",
    "updt": "update",
    "addr": "address",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "wkdy": "workday",
    "sched": "schedule",
}
_SHORTHAND_RE = re.compile(r"\b(?:" + "|".join(_SHORTHAND) + r")\b")


def _expand_shorthand(text: str) -> str:
    return _SHORTHAND_RE.sub(lambda match: _SHORTHAND[match[0]], text)


def rider_words(
    text: str,
    subject: str = "",
    body: str | None = None,
    *,
    ours: tuple[str, ...] = (),
    folded: bool = True,
) -> str:
    """What the reader reads: the rider's own words, normalised.

    The same function prepares the training data, so the reader learns from
    what it will read. ``folded=False``: the same words as written
    (``written_words``), for the sentence encoder.
    """
    said = rider_said(text, subject, body, ours=ours)
    return folded_words(said) if folded else written_words(said)


def rider_said(
    text: str, subject: str = "", body: str | None = None, *, ours: tuple[str, ...] = ()
) -> str:
    """The rider's own words, not yet normalised.

    Quoted history, signature and footer go; a forward the rider points at
    and a subject they point at ("see subject") come in.
    ``body`` is ``strip_quoted(text)`` when the caller already has it.
    """
    body = strip_quoted(text) if body is None else body
    said = without_signature(without_boilerplate(body)) + forwarded_news(text, body)
    if _POINTS_AT_SUBJECT.search(body):
        said = f"{_REPLY_PREFIX.sub('', subject)}\n{said}"  # "see subject": the news is there
    return said or _their_subject(subject, ours)


def folded_words(said: str) -> str:
    """What the n-grams read: accents, case and look-alikes folded, shorthand spelled out."""
    # A link's "?" and words are an address, not the rider's question.
    return _URL.sub(" ", _expand_shorthand(normalise(said))).strip()


def written_words(said: str) -> str:
    """What the sentence encoder reads: the words as written (``text_readings.as_written``)."""
    return _URL.sub(" ", as_written(said)).strip()


def _their_subject(subject: str, ours: tuple[str, ...]) -> str:
    """The subject as the rider's words, for a reply with nothing in its body.

    "Re: <our subject>" is our own words coming back: read, they made an
    empty reply (a photo, a phone's tagline) look like whatever our email was
    about. A subject the rider wrote or edited ("Re: updated my address") is theirs.
    """
    own = _same_subject(_REPLY_PREFIX.sub("", subject))
    return "" if own and own in {_same_subject(s) for s in ours} else subject


def _same_subject(subject: str) -> str:
    return " ".join(subject.lower().split())


def read_words(
    words: str, reader: Reader | None = None, language: str = "", meaning: str = ""
) -> ReplyClassification:
    """Escalation first, then the most likely ordinary reading.

    1. A named escalation rule (``rules.py``) sends the reply to a person.
    2. So does the reader's escalation probability at or above its threshold,
       which was chosen for recall on held-out data (``REPLY_ESCALATION_THRESHOLD``
       overrides it). Nothing outweighs either: a question or an update beside
       an escalation is kept in ``also`` for the person, not acted on.
    3. Below that but at or above the review threshold (``review_threshold``,
       the reader's own for ``language`` where it has one), it may be an
       escalation: the likeliest ordinary reading goes to a person as a card,
       never acted on alone.
    4. Otherwise the likeliest of acknowledgment, question and update, which a
       person labels when its probability is below ``REPLY_CONFIDENCE_THRESHOLD``.

    ``meaning``: the same words as written (``rider_words(folded=False)``), which the
    sentence encoder reads; without it, it reads ``words``.
    """
    reader = reader or default_reader()
    if not re.search(r"\w", words):
        return _labelled("acknowledgment", 0.0, "Nothing to read.", {})
    reading = reader.read(words, meaning=meaning)
    probs = reading.probabilities
    ordinary = sorted((b for b in BUCKETS if b != "escalation"), key=probs.__getitem__)[::-1]
    best, runner_up = ordinary[0], ordinary[1]
    shown = ", ".join(f"{b} {probs[b]:.2f}" for b in sorted(probs, key=probs.__getitem__)[::-1])
    threshold = escalation_threshold(reader)
    if hit := first_hit(words):
        rule, matched = hit
        return ReplyClassification(
            bucket="escalation",
            confidence=1.0,
            reasoning=f"Rule {rule.name}: {rule.reason} ({matched!r}). Reader: {shown}.",
            hitl=True,
            also=best,
            probabilities=probs,
            rule=rule.name,
        )
    if probs["escalation"] >= threshold:
        return ReplyClassification(
            bucket="escalation",
            confidence=round(probs["escalation"], 3),
            reasoning=f"Reader: {shown}; escalation at or above {threshold:.2f}.",
            hitl=True,
            also=best,
            probabilities=probs,
        )
    reasoning = f"Reader: {shown}."
    confidence = round(probs[best], 3)
    # What the reply rests on is in a file nobody here has opened.
    attached = " It refers to an attachment." if _ATTACHMENT.search(words) else ""
    if suspicion := possible_escalation(reading, reader, language):
        return ReplyClassification(
            bucket=best,
            confidence=confidence,
            reasoning=f"{reasoning} {suspicion}: it may be one, so a person reads it.{attached}",
            hitl=True,
            probabilities=probs,
            possible_escalation=True,
        )
    if not reading.words_known:
        # Nothing it has learned ("hmm", a name, a number): a guess from letters alone.
        return _labelled(best, min(confidence, 0.5), f"{reasoning} No word it knows.", probs)
    if attached:
        return _labelled(best, min(confidence, 0.5), f"{reasoning}{attached}", probs)
    if {best, runner_up} == SAME_ACTION:
        # Torn between update and acknowledgment only: both re-audit at once,
        # so there is nothing for a person to choose between.
        settled = round(probs[best] + probs[runner_up], 3)
        return _labelled(best, settled, f"{reasoning} Either reading re-audits.", probs)
    return _labelled(best, confidence, reasoning, probs)


def escalation_threshold(reader: Reader) -> float:
    override = settings.REPLY_ESCALATION_THRESHOLD
    return reader.escalation_threshold if override is None else override


def possible_escalation(reading: Reading, reader: Reader, language: str) -> str:
    """Why a reading below the escalation threshold may still be one ("": it is not).

    The whole reading at or above the review threshold, or the n-grams alone at
    or above theirs (``Reader.ngram_review_thresholds``): either reader's
    suspicion sends the reply to a person.
    """
    review = review_threshold(reader, language)
    if reading.probabilities["escalation"] >= review:
        return f"Escalation at or above {review:.2f}"
    ngram_review = reader.ngram_review_for(language)
    alone = reading.ngram_escalation
    if ngram_review is not None and alone is not None and alone >= ngram_review:
        return f"The n-grams alone read escalation {alone:.2f}, at or above {ngram_review:.2f}"
    return ""


def review_threshold(reader: Reader, language: str = "") -> float:
    """Where a possible escalation starts: never above the escalation threshold."""
    override = settings.REPLY_REVIEW_THRESHOLD
    review = reader.review_for(language) if override is None else override
    return min(review, escalation_threshold(reader))


def with_safety_rules(
    result: ReplyClassification,
    found: LanguageFinding,
    words: str,
    route: Route,
    meaning: str = "",
) -> ReplyClassification:
    """The safety rules (``safety.py``) over any reading: they only add caution.

    ``found``: the reply's languages (``safety.read_languages``); ``route``:
    the readers, of which the reply's language chose the one that read it;
    ``meaning``: the words as written, for the encoder (``read_words``).

    - A reply long enough to say its language, in none the detector can name,
      is read by the other reader too; the more cautious reading decides.
    - An escalation signal in one sentence decides, the whole reply's ordinary
      reading kept in ``also`` for the person. Sentence by sentence only where
      the multilingual reader reads: the English and Spanish reader, read a
      sentence at a time, took 39 of the 300 sealed holdout replies to
      escalations wrongly (docs/evaluation.md); its named rules (``rules.py``)
      already decide wherever in a reply they match.
    - A language no reader reads to its floor sends the reply to a person; the
      reply's language is kept for the holding reply.
    """
    result = result.model_copy(update={"language": found.language})
    reader = route.reader_for(found.language)
    if route.multilingual is not None and reader is route.base and read_twice(found, words):
        result = more_cautious(result, read_words(words, route.multilingual, meaning=meaning))
    if reader is not route.base and result.bucket != "escalation":
        threshold = escalation_threshold(reader)
        if hit := escalated_sentence(words, reader, threshold):
            sentence, probability = hit
            result = result.model_copy(
                update={
                    "bucket": "escalation",
                    "confidence": round(probability, 3),
                    "hitl": True,
                    "also": result.bucket,
                    "safety_rules": (*result.safety_rules, ESCALATION_ANYWHERE.name),
                    "reasoning": f"{result.reasoning} One sentence reads as an escalation on "
                    f"its own ({probability:.2f}): {sentence!r}.",
                }
            )
    if found.unread:
        why = (
            f"It is written, in whole or part, in {', '.join(found.unread)}, "
            "which the reader does not read to its floor."
        )
        result = result.model_copy(
            update={
                "confidence": 0.0,
                "hitl": True,
                "safety_rules": (*result.safety_rules, UNREAD_LANGUAGE.name),
                "reasoning": f"{result.reasoning} {why}",
            }
        )
    return result


def more_cautious(first: ReplyClassification, second: ReplyClassification) -> ReplyClassification:
    """``first``, as cautious as ``second`` where the other reader saw more.

    The other reader's escalation decides (the first reading kept in ``also``);
    its possible escalation sends the first reading to a person.
    """
    why = f"{first.reasoning} The other reader too ({UNNAMED_LANGUAGE.name}): {second.reasoning}"
    rules = (*first.safety_rules, UNNAMED_LANGUAGE.name)
    if first.bucket != "escalation" and second.bucket == "escalation":
        return second.model_copy(
            update={"also": first.bucket, "safety_rules": rules, "reasoning": why}
        )
    if not first.hitl and second.possible_escalation:
        return first.model_copy(
            update={
                "hitl": True,
                "possible_escalation": True,
                "safety_rules": rules,
                "reasoning": why,
            }
        )
    return first


def _labelled(
    bucket: Bucket, confidence: float, reasoning: str, probabilities: dict[str, float]
) -> ReplyClassification:
    unsure = confidence < settings.REPLY_CONFIDENCE_THRESHOLD
    return ReplyClassification(
        bucket=bucket,
        confidence=confidence,
        reasoning=reasoning,
        hitl=bucket == "escalation" or unsure,
        probabilities=probabilities,
    )


# --- Model -------------------------------------------------------------------------------


# A model answer that could not be used: asked once more, then a person reads it.
REASK_ERRORS = (ModelBadOutput, ModelTruncated, ModelRefused)
# The endpoint is down or busy: the reply waits and is read when it is back.
WAIT_ERRORS = (ModelUnavailable, ModelTimeout, ModelRateLimited)
MODEL_UNAVAILABLE = "model_unavailable"
CLASSIFICATION_FAILED = "classification_failed"


@dataclass(frozen=True)
class ModelRequest:
    prompt: Prompt
    user: str


def model_request(body: str, subject: str, words: str) -> ModelRequest:
    """The prompt (``REPLY_MODEL_PROMPT``) and the data a model reads a reply from.

    v2 adds ``REPLY_MODEL_EXAMPLES`` labelled replies that resemble this one,
    chosen by the reader's own features, as an ``<examples>`` block before the
    reply (docs/evaluation.md has what each variant does on held-out replies).
    """
    version = settings.REPLY_MODEL_PROMPT
    prompt = load_prompt(PROMPT_NAME, version)
    reply = data_block("reply", {"subject": subject, "body": body})
    if version == "v1" or not settings.REPLY_MODEL_EXAMPLES:
        return ModelRequest(prompt, reply)
    shown = example_index().nearest(words, settings.REPLY_MODEL_EXAMPLES)
    examples = [{"reply": e.words, "bucket": e.bucket} for e in shown]
    return ModelRequest(prompt, f"{data_block('examples', examples)}\n\n{reply}")


def _ask_model(
    client: llm.OpenAIClient,
    request: ModelRequest,
    rules: ReplyClassification,
    parent: RunTrace | None = None,
) -> ReplyClassification:
    """The model's label, or why there is none: never a silent fallback that acts.

    - An unusable answer (not JSON, a label outside the enum, cut at the token
      limit, a refusal) is asked once more, with a larger limit after a cut.
      Failing again, the reply is ``classification_failed``: a person labels it.
    - An endpoint that is down, slow or rate-limited (or its breaker open)
      makes the reply ``model_unavailable``: the loop keeps it waiting, visibly,
      and reads it when the model answers again.
    - Any other error (a 4xx: our request or credentials) fails the same way
      every time, so a person reads the reply now.
    """
    prompt, user = request.prompt, request.user
    trace = (
        parent if parent is not None else RunTrace(agent="classifier", backend="openai", input={})
    )
    outcome = traced_call(client, AGENT, prompt, user, ModelReplyLabel, trace)
    if isinstance(outcome, REASK_ERRORS):
        trace.children[-1].output = {"fallback": "re-ask"}
        limit = None
        if isinstance(outcome, ModelTruncated):
            limit = settings.LLM_MAX_TOKENS * settings.LLM_REASK_TOKEN_FACTOR
        outcome = traced_call(client, AGENT, prompt, user, ModelReplyLabel, trace, max_tokens=limit)
    if isinstance(outcome, ModelError):
        failure = MODEL_UNAVAILABLE if isinstance(outcome, WAIT_ERRORS) else CLASSIFICATION_FAILED
        trace.children[-1].output = {
            "fallback": "wait" if failure == MODEL_UNAVAILABLE else "person"
        }
        why = (
            "the model is unavailable; the reply waits until it answers"
            if failure == MODEL_UNAVAILABLE
            else "the model's answer was unusable twice; a person labels this reply"
        )
        return rules.model_copy(
            update={
                "hitl": True,
                "failure": failure,
                "reasoning": f"{rules.reasoning} Model failed ({outcome}): {why}.",
            }
        )
    return cross_checked(rules, outcome.parsed, f"{outcome.model}, {prompt.version}")


def cross_checked(
    reader: ReplyClassification, label: ModelReplyLabel, model: str
) -> ReplyClassification:
    """The model's label may only add caution to the default reader's reading.

    A small model prompted zero-shot let half of one set's escalations through
    when its label replaced the reader's. So: the model saying escalation makes
    it one; a model that disagrees, or is unsure, sends the reply to a person
    with both readings; a model that agrees leaves the reader's reading as it
    was, an unsure one still going to a person.
    """
    said = f"Model ({model}): {label.bucket} ({label.confidence:.2f})."
    if label.bucket == "escalation":
        return _labelled(
            "escalation", label.confidence, f"{said} {reader.reasoning}", reader.probabilities
        ).model_copy(update={"model_bucket": label.bucket})
    if label.bucket != reader.bucket:
        both = f"The reader read {reader.bucket}, the model {label.bucket}: a person decides."
        return reader.model_copy(
            update={
                "hitl": True,
                "reasoning": f"{said} {both} {reader.reasoning}",
                "model_bucket": label.bucket,
            }
        )
    unsure = label.confidence < settings.REPLY_CONFIDENCE_THRESHOLD
    return reader.model_copy(
        update={
            "hitl": reader.hitl or unsure,
            "reasoning": f"{said} Agrees. {reader.reasoning}",
            "model_bucket": label.bucket,
        }
    )
