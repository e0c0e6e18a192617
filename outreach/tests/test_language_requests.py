"""Replies that only name a language: every rule's examples, both ways."""

import pytest

from outreach.replies.language_requests import (
    POLITE,
    RULES,
    own_words,
    requested_language,
)
from poolpatrol.languages import CODES

MATCHES = [(rule.name, rule.language, text) for rule in RULES for text in rule.must_match]
NON_MATCHES = [(rule.name, text) for rule in RULES for text in rule.must_not_match]


@pytest.mark.parametrize(("rule", "language", "text"), MATCHES)
def test_each_rule_reads_its_examples_as_a_request_for_its_language(rule, language, text):
    assert requested_language(text) == language


@pytest.mark.parametrize(("rule", "text"), NON_MATCHES)
def test_each_rule_leaves_a_message_that_says_more_to_the_reader(rule, text):
    assert requested_language(text) is None


@pytest.mark.parametrize("text", POLITE.must_match)
def test_polite_words_around_a_name_still_make_a_request(text):
    assert requested_language(text) is not None


@pytest.mark.parametrize("text", POLITE.must_not_match)
def test_polite_words_alone_ask_for_no_language(text):
    assert requested_language(text) is None


def test_every_shipped_language_can_be_asked_for_by_its_reply_word():
    from poolpatrol.languages import SHIPPED

    assert {rule.language for rule in RULES} == set(CODES)
    for language in SHIPPED:
        assert requested_language(language.reply_word) == language.code


def test_two_languages_in_one_reply_are_no_request():
    assert requested_language("English or Spanish") is None


def test_the_riders_own_words_leave_out_quoted_history_and_a_phones_tagline():
    reply = (
        "English please\n\nSent from my iPhone\n\n"
        "On Mon, Nov 23, 2026 at 9:00 AM Program <reply+abc@example.com> wrote:\n"
        "> Hola, Ana:\n> Le escribimos sobre su lugar…\n"
    )
    assert requested_language(own_words(reply)) == "en"
