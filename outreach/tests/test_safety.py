"""Every safety rule sends its examples to a person and leaves its counter-examples alone."""

import pytest

from outreach.language import CONVENTIONS, detect, passages
from outreach.replies.classify import ReplyClassification, classify_reply, with_safety_rules
from outreach.replies.reader import default_route
from outreach.replies.safety import RULES, read_languages, sentences

REACH = [(rule.name, text) for rule in RULES for text in rule.must_reach_a_person]
LEAVE = [(rule.name, text) for rule in RULES for text in rule.left_to_the_reader]


def test_every_safety_rule_has_a_reason_and_examples_both_ways():
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.reason and rule.must_reach_a_person and len(rule.left_to_the_reader) >= 2


@pytest.mark.parametrize(("name", "text"), REACH)
def test_a_safety_rule_sends_its_examples_to_a_person(name, text):
    assert classify_reply(text).hitl
    # The rule over an ordinary reading of the example: a reader that already
    # reads the example as an escalation must not hide whether the rule would.
    route = default_route()
    found = read_languages(text, route)
    ordinary = ReplyClassification(bucket="update", confidence=0.9, reasoning="", hitl=False)
    ruled = with_safety_rules(ordinary, found, text, route)
    assert ruled.hitl and name in ruled.safety_rules, ruled.reasoning


@pytest.mark.parametrize(("name", "text"), LEAVE)
def test_a_safety_rule_leaves_its_counter_examples_to_the_reader(name, text):
    assert name not in classify_reply(text).safety_rules


def test_an_escalation_in_one_sentence_keeps_the_update_for_the_person():
    (text,) = [t for n, t in REACH if n == "escalation_anywhere"]
    result = classify_reply(text)
    assert (result.bucket, result.also) == ("escalation", "update")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("我已经在HR系统里更新了地址，谢谢。", "zh"),  # no spaces between words
        ("我已经在HR portal更新了地址", "zh"),  # Chinese around English words
        ("네, 알겠습니다", "ko"),  # short
        ("شكرا، تم التحديث", "ar"),
        ("đã sửa", "vi"),  # two words, but letters only Vietnamese writes
        ("ありがとうございます", "ja"),
    ],
)
def test_the_detector_names_a_language_without_spaces_short_or_mixed(text, language):
    detected = detect(text)
    assert (detected.language, detected.sure) == (language, True)


def test_every_latin_convention_has_a_reason_and_examples_both_ways():
    assert len({c.name for c in CONVENTIONS}) == len(CONVENTIONS)
    for convention in CONVENTIONS:
        assert convention.reason and convention.must_name and len(convention.must_not_name) >= 2


@pytest.mark.parametrize(
    ("language", "text"), [(c.language, t) for c in CONVENTIONS for t in c.must_name]
)
def test_a_latin_convention_names_its_language(language, text):
    detected = detect(text)
    assert (detected.language, detected.sure, detected.by) == (language, True, "letters")


@pytest.mark.parametrize(
    ("language", "text"), [(c.language, t) for c in CONVENTIONS for t in c.must_not_name]
)
def test_a_latin_convention_leaves_its_look_alikes_to_langid(language, text):
    assert detect(text).by != "letters"


def test_latin_script_text_is_named_by_langid():
    english = "I moved to Fremont in October and updated my address in Workday."
    assert detect(english).language == "en"
    assert detect("Ya actualicé mi dirección en el portal de recursos humanos.").language == "es"


def test_a_reply_too_short_to_tell_has_no_language_it_is_sure_of():
    assert not detect("ok").sure
    assert not detect("👍").sure


def test_each_line_of_a_mixed_reply_is_named_for_its_own_language():
    text = (
        "Hi, I updated my address in the portal yesterday and it shows now.\n"
        "我已经在系统里更新了地址，麻烦你们再查一下。"
    )
    assert [p.detected.language for p in passages(text)] == ["en", "zh"]


def test_a_reply_is_read_sentence_by_sentence_in_any_script():
    text = (
        "我上个月搬家了，住得离接送点很近。地址已经在系统里更新了。"
        "司机一直骚扰我，我不想再坐他的车。"
    )
    assert len(sentences(text)) == 3
    assert sentences("Thanks, I updated it.") == []  # one sentence: the whole reply is read
