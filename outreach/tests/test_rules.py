"""Every named escalation rule matches its examples and none of its counter-examples."""

import pytest

from outreach.replies.classify import classify_reply, rider_words
from outreach.replies.rules import RULES, first_hit

MATCHES = [(rule.name, text) for rule in RULES for text in rule.must_match]
MISSES = [(rule.name, text) for rule in RULES for text in rule.must_not_match]


def test_every_rule_has_a_reason_and_examples_both_ways():
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.reason and len(rule.must_match) >= 2 and len(rule.must_not_match) >= 2


@pytest.mark.parametrize(("name", "text"), MATCHES)
def test_a_rule_matches_what_it_names(name, text):
    rule = next(rule for rule in RULES if rule.name == name)
    assert rule.search(rider_words(text)), text


@pytest.mark.parametrize(("name", "text"), MISSES)
def test_a_rule_leaves_its_counter_examples_alone(name, text):
    rule = next(rule for rule in RULES if rule.name == name)
    assert not rule.search(rider_words(text)), text


@pytest.mark.parametrize(("name", "text"), MATCHES)
def test_a_rule_sends_the_reply_to_a_person_whatever_else_it_says(name, text):
    result = classify_reply(f"{text} I also updated my address in Workday yesterday.")
    assert (result.bucket, result.hitl, result.rule) == ("escalation", True, name)


def test_an_update_beside_an_escalation_is_kept_for_the_person():
    result = classify_reply("I moved to Tracy in March and updated Workday. I want a lawyer.")
    assert (result.bucket, result.also) == ("escalation", "update")


def test_no_rule_fires_on_an_ordinary_reply():
    assert first_hit(rider_words("Thanks, got it. I'll update my address today.")) is None
