"""Audit rules and model backends: the model client, the checks' limits, reading replies."""

from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_choice, env_float, env_int, env_prices, env_str

LLM_BACKEND = env_choice("LLM_BACKEND", "rules", ("rules", "openai"))
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
if LLM_BACKEND == "openai" and not OPENAI_API_KEY:
    raise ImproperlyConfigured("LLM_BACKEND=openai needs OPENAI_API_KEY")
# The model client (agents/llm.py): per-call timeout, retries on 429/5xx, and a
# circuit breaker that fails fast for a cooldown after consecutive failed calls.
# A server of one's own (OPENAI_BASE_URL) is often a CPU: a 5-rider audit prompt
# takes it 15-60 s, so its default is longer than OpenAI's.
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 180 if OPENAI_BASE_URL else 20, minimum=0.01)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0)
# Output tokens a call may write; an answer cut at the limit is asked again
# once with LLM_REASK_TOKEN_FACTOR times as many.
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 1024, minimum=16)
LLM_REASK_TOKEN_FACTOR = env_int("LLM_REASK_TOKEN_FACTOR", 4, minimum=1)
# Bounded answers: a small local model under a grammar can repeat itself until
# the token limit. With bounds on, every free-text field and every list in the
# schema sent carries a maximum (maxLength, maxItems) that the server's grammar
# enforces, so the answer ends. OpenAI's strict mode rejects maxLength, so
# bounds are on by default only for a server of one's own (OPENAI_BASE_URL),
# and a server that refuses them is asked again without them.
LLM_OUTPUT_BOUNDS = env_bool("LLM_OUTPUT_BOUNDS", bool(OPENAI_BASE_URL))
LLM_OUTPUT_MAX_CHARS = env_int("LLM_OUTPUT_MAX_CHARS", 240, minimum=1)
LLM_OUTPUT_MAX_ITEMS = env_int("LLM_OUTPUT_MAX_ITEMS", 16, minimum=1)
# Sampling: 0 and a fixed seed, so the same reply gets the same reading.
LLM_TEMPERATURE = env_float("LLM_TEMPERATURE", 0, minimum=0)
LLM_SEED = env_int("LLM_SEED", 7, minimum=0)
# json_schema (OpenAI, llama-server) or json_object with the schema (llama-cpp-python's
# server); auto starts with json_schema and switches if the server refuses it.
LLM_RESPONSE_FORMAT = env_choice(
    "LLM_RESPONSE_FORMAT", "auto", ("auto", "json_schema", "json_object")
)
LLM_BREAKER_THRESHOLD = env_int("LLM_BREAKER_THRESHOLD", 5, minimum=1)
LLM_BREAKER_COOLDOWN_SECONDS = env_float("LLM_BREAKER_COOLDOWN_SECONDS", 60, minimum=0)
# A model per agent (LLM_MODEL_<AGENT>): judgement and writing on the larger
# model, narrow checks and classification on the mini one. Agents not listed
# use LLM_MODEL_DEFAULT.
# OpenAI's names are defaults for OpenAI's endpoint only: another server (OPENAI_BASE_URL)
# serves its own model, whose name the client reads from /v1/models unless one is given.
LLM_DEFAULT_MODEL = env_str("LLM_MODEL_DEFAULT") or ("" if OPENAI_BASE_URL else "gpt-4.1-mini")
LLM_MODELS = {
    agent: env_str(f"LLM_MODEL_{agent.upper()}")
    or (LLM_DEFAULT_MODEL if OPENAI_BASE_URL else default)
    for agent, default in {
        "case_manager": "gpt-4.1",
        "outreach": "gpt-4.1",
        "supervisor": "gpt-4.1",
        "location": "gpt-4.1-mini",
        "shift": "gpt-4.1-mini",
        "classifier": "gpt-4.1-mini",
        "knowledge": "gpt-4.1-mini",
    }.items()
}


# USD per 1M tokens. LLM_PRICES_JSON adds or replaces models, e.g.
# {"my-model": {"input": 0.5, "output": 1.5}}; an unpriced model is recorded at 0.
LLM_PRICES = {
    "gpt-4.1": {"input": Decimal("2.00"), "output": Decimal("8.00")},
    "gpt-4.1-mini": {"input": Decimal("0.40"), "output": Decimal("1.60")},
} | env_prices("LLM_PRICES_JSON")
DEFAULT_MAX_COMMUTE_MILES = env_int("DEFAULT_MAX_COMMUTE_MILES", 50, minimum=1)
COMMUTE_CIRCUITY_FACTOR = env_float("COMMUTE_CIRCUITY_FACTOR", 1.2, minimum=1.0)
# Dotted path to a class with .name and .commute_miles(home, pickup); the
# default is offline (great-circle × circuity), a routing service can replace it.
DISTANCE_PROVIDER = env_str("DISTANCE_PROVIDER", "vanpools.geo.OfflineDistanceProvider")
# Shift check: how far (minutes) a rider's start/end may sit from the van's
# arrival/departure, and how many days from the audit date are compared.
SHIFT_TOLERANCE_MINUTES = env_int("SHIFT_TOLERANCE_MINUTES", 30, minimum=0)
AUDIT_WINDOW_DAYS = env_int("AUDIT_WINDOW_DAYS", 7, minimum=1)
# Ridership (docs/audit.md, "The ridership check"): the window (days ending the
# day before the audit), the rule (a share of counted workdays when
# RIDERSHIP_MIN_SHARE is set, else days a week scaled to the rider's own week),
# the fewest counted workdays worth judging, and how near the van's arrival a
# gate swipe counts as a ride.
RIDERSHIP_WINDOW_DAYS = env_int("RIDERSHIP_WINDOW_DAYS", 28, minimum=1)
RIDERSHIP_MIN_DAYS_PER_WEEK = env_float("RIDERSHIP_MIN_DAYS_PER_WEEK", 3, minimum=0)
RIDERSHIP_MIN_SHARE = (
    env_float("RIDERSHIP_MIN_SHARE", 0.0, minimum=0)
    if env_str("RIDERSHIP_MIN_SHARE").strip()
    else None
)
if RIDERSHIP_MIN_SHARE is not None and RIDERSHIP_MIN_SHARE > 1:
    raise ImproperlyConfigured("RIDERSHIP_MIN_SHARE is a fraction of workdays, 0 to 1 (e.g. 0.8)")
RIDERSHIP_MIN_WORKDAYS = env_int("RIDERSHIP_MIN_WORKDAYS", 5, minimum=1)
RIDERSHIP_SWIPE_WINDOW_MINUTES = env_int("RIDERSHIP_SWIPE_WINDOW_MINUTES", 30, minimum=0)
# The IRS §132(f) "commuter highway vehicle" per month: seats not counting the
# driver, average occupancy as a share of those seats, commute share of miles.
VANPOOL_MIN_SEATS = env_int("VANPOOL_MIN_SEATS", 6, minimum=1)
VANPOOL_MIN_OCCUPANCY = env_float("VANPOOL_MIN_OCCUPANCY", 0.5, minimum=0)
VANPOOL_MIN_COMMUTE_SHARE = env_float("VANPOOL_MIN_COMMUTE_SHARE", 0.8, minimum=0)
# What one seat costs the program a month (USD): the subsidy at stake on a seat
# held but not ridden, on the program page.
SEAT_SUBSIDY_MONTHLY = Decimal(str(env_float("SEAT_SUBSIDY_MONTHLY", 150, minimum=0)))
# A rider's reply classified below this confidence (0-1) goes to a human to label.
REPLY_CONFIDENCE_THRESHOLD = env_float("REPLY_CONFIDENCE_THRESHOLD", 0.7, minimum=0)
# The reader's escalation probability at or above which a reply goes to a person.
# Unset: the threshold the reader was trained with, chosen for recall on held-out
# replies (docs/evaluation.md shows what each value costs in automation).
REPLY_ESCALATION_THRESHOLD = (
    env_float("REPLY_ESCALATION_THRESHOLD", 0.0, minimum=0)
    if env_str("REPLY_ESCALATION_THRESHOLD").strip()
    else None
)
# Below that, the escalation probability at or above which a reply still goes to
# a person, as a card with the reader's best ordinary guess: it may be an
# escalation. Unset: the reader's own, chosen so that no held-out escalation is
# acted on without a person (docs/evaluation.md).
REPLY_REVIEW_THRESHOLD = (
    env_float("REPLY_REVIEW_THRESHOLD", 0.0, minimum=0)
    if env_str("REPLY_REVIEW_THRESHOLD").strip()
    else None
)
# Threads the multilingual encoder reads a reply with (outreach/replies/encoder.py).
# It is compute-bound at about 1 ms a token on one core: two threads take a
# 50-token reply from about 54 to 29 ms on the 2-core machine (docs/evaluation.md).
# On a host where several workers share the cores, 1 keeps one reading to a core.
REPLY_ENCODER_THREADS = env_int("REPLY_ENCODER_THREADS", 2, minimum=1)
# With a model configured, the prompt it reads replies with (agents/prompts/
# classify_reply.<version>.md) and how many labelled replies that resemble the
# one in hand it is shown (v2 only; docs/evaluation.md measures each).
REPLY_MODEL_PROMPT = env_choice("REPLY_MODEL_PROMPT", "v2", ("v1", "v2"))
REPLY_MODEL_EXAMPLES = env_int("REPLY_MODEL_EXAMPLES", 4, minimum=0)
# With a model configured, the shift prompt: v1 answers verdicts only (a proposal
# for a person); v2 also returns the week it read from HR's text, which the rules
# check and may pass on (audit/resolve.py). The packaged local models rarely
# answer v2's schema usably (docs/evaluation.md), so v1 is the default.
SHIFT_MODEL_PROMPT = env_choice("SHIFT_MODEL_PROMPT", "v1", ("v1", "v2"))
