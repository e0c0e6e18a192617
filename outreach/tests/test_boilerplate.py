"""Every boilerplate rule matches its examples and leaves the rider's own sentences alone."""

import pytest

from outreach.replies.boilerplate import RULES, without_boilerplate

EXAMPLES = [(rule, text) for rule in RULES for text in rule.must_match]
COUNTER = [(rule, text) for rule in RULES for text in rule.must_not_match]


@pytest.mark.parametrize(("rule", "text"), EXAMPLES, ids=[t for _, t in EXAMPLES])
def test_a_rule_removes_each_line_it_names(rule, text):
    assert rule.compiled.search(text), f"{rule.name} misses {text!r}"
    assert without_boilerplate(f"{text}\n") == ""


@pytest.mark.parametrize(("rule", "text"), COUNTER, ids=[t for _, t in COUNTER])
def test_a_rule_leaves_the_rider_s_sentences_alone(rule, text):
    assert not rule.compiled.search(text), f"{rule.name} matches {text!r}"


def test_only_the_tagline_goes_and_the_reply_above_it_stays():
    reply = "I moved back to Fremont in May.\n\nSent from my iPhone"
    assert without_boilerplate(reply) == "I moved back to Fremont in May."


def test_every_rule_has_a_name_a_reason_and_examples_both_ways():
    for rule in RULES:
        assert rule.name and rule.reason and rule.must_match and rule.must_not_match
