"""The learned reader: retraining reproduces the committed artifact, and reads as trained.

scikit-learn is imported inside the tests: the product reads without it.
"""

import io

import numpy as np
import pytest
from django.core.management import call_command

from outreach.replies.reader import (
    block_settings,
    char_wb_ngrams,
    default_reader,
    default_route,
    multilingual_reader,
    reader_from_document,
    word_ngrams,
)

TEXTS = [
    "I moved to Hayward in May, can you check?",
    "ok",
    "a  b\tc\n¿Qué tengo que hacer?  ¡Gracias!",
    "re: vp-104 — 7:00-15:30 mon-fri!!",
    "我已经在HR portal更新了地址？谢谢",  # characters as words, beside Latin ones
    "주소를 업데이트했습니다. 감사합니다!",
]


# Every test that needs scikit-learn (training tooling, 2 s to import) runs with
# the evaluation step; the product itself never imports it.
@pytest.mark.evaluation
@pytest.mark.parametrize("characters_as_words", [False, True])
@pytest.mark.parametrize("text", TEXTS)
def test_the_product_cuts_n_grams_exactly_as_scikit_learn_does(text, characters_as_words):
    from sklearn.feature_extraction.text import CountVectorizer

    word = CountVectorizer(**block_settings("word", characters_as_words)).build_analyzer()
    char = CountVectorizer(**block_settings("char")).build_analyzer()
    assert word_ngrams(text, characters_as_words) == word(text)
    assert char_wb_ngrams(text) == char(text)


@pytest.mark.evaluation
def test_retraining_reproduces_the_committed_reader_byte_for_byte():
    out = io.StringIO()
    call_command("train_reply_model", "--check", stdout=out)
    assert "reader.json.gz is reproduced exactly" in out.getvalue()
    assert "reader-multilingual.json.gz is reproduced exactly" in out.getvalue()
    assert "examples.json.gz is reproduced exactly" in out.getvalue()


@pytest.mark.evaluation
def test_the_product_reads_as_the_trained_pipeline_does():
    # The reader rebuilt from its JSON document against the scikit-learn pipeline
    # it came from, fitted on a slice of the data: the same probabilities.
    from evals import reply_model

    examples = reply_model.load_examples(["core"])
    fitted = reply_model.fit(examples)
    reader = reader_from_document(reply_model.document(fitted, 1.0, 0.5, 0.5, examples))
    words = [e.words for e in examples[:40]]
    expected = reply_model.softmax(fitted.logits(words), 1.0)
    got = np.array([[reader.probabilities(w)[b] for b in reply_model.BUCKETS] for w in words])
    assert np.allclose(got, expected, atol=1e-3)


def test_the_committed_reader_says_what_it_was_trained_on():
    meta = default_reader().meta
    assert "holdout" not in meta["trained_on"] and meta["replies"] > 1000


def reply(bucket: str, number: int):
    """A labelled reply whose words do not matter: the policy reads probabilities."""
    from evals import reply_model  # scikit-learn: only with the evaluation step

    return reply_model.Example(
        id=f"r{number}",
        source="s",
        file="f",
        text="",
        subject="",
        words="",
        bucket=bucket,
        caught=False,
    )


# Columns in BUCKETS order: acknowledgment, question, update, escalation.
CALM_ESCALATION = [0.10, 0.78, 0.04, 0.08]  # likeliest a question, 8 % an escalation
PLAIN_QUESTION = [0.02, 0.95, 0.02, 0.01]


def test_a_possible_escalation_keeps_its_label_but_goes_to_a_person():
    from evals import reply_model

    assert reply_model.BUCKETS == ("acknowledgment", "question", "update", "escalation")
    policy = reply_model.Policy(0.21, 0.7, review_threshold=0.05)

    assert policy.routes(reply("escalation", 1), np.array(CALM_ESCALATION)) == ("question", True)
    assert policy.routes(reply("question", 2), np.array(PLAIN_QUESTION)) == ("question", False)
    without = reply_model.Policy(0.21, 0.7)
    assert without.routes(reply("escalation", 1), np.array(CALM_ESCALATION)) == ("question", False)


def test_the_review_threshold_is_the_highest_that_acts_on_no_escalation_alone():
    from evals import reply_model, reply_thresholds

    examples = [reply("escalation", 1), reply("question", 2), reply("question", 3)]
    probs = np.array([CALM_ESCALATION, PLAIN_QUESTION, [0.03, 0.90, 0.02, 0.05]])

    chosen = reply_thresholds.choose_review_threshold(examples, probs, 0.7, 0.21)

    assert chosen == 0.08  # reaches the calm escalation; the 5 % question stays automatic
    scored = reply_model.score(examples, probs, reply_model.Policy(0.21, 0.7, chosen))
    assert scored["escalations_acted_on_without_a_person"] == 0
    assert scored["bucket_accuracy"] == pytest.approx(2 / 3, abs=1e-4)  # the reader's labels
    assert scored["automation"] == pytest.approx(2 / 3, abs=1e-4)


def test_an_escalation_read_below_one_percent_gets_a_finer_review_threshold_not_none():
    from evals import reply_thresholds

    examples = [reply("escalation", 1), reply("question", 2)]
    barely = [0.010, 0.986, 0.001, 0.003]  # an escalation read at 0.3 %
    probs = np.array([barely, [0.01, 0.988, 0.001, 0.001]])

    assert reply_thresholds.choose_review_threshold(examples, probs, 0.7, 0.21) == 0.002
    unseen = np.array([[0.010, 0.9899, 0.0, 0.0001], [0.01, 0.988, 0.001, 0.001]])
    assert reply_thresholds.choose_review_threshold(examples, unseen, 0.7, 0.21) == 0.0


def test_a_language_with_its_own_review_threshold_is_routed_by_it():
    import dataclasses

    from evals import reply_model

    policy = reply_model.Policy(0.21, 0.7, review_threshold=0.01, review_by_language={"ko": 0.1})
    korean = dataclasses.replace(reply("question", 1), detected="ko")
    chinese = dataclasses.replace(reply("question", 2), detected="zh")
    reading = np.array(CALM_ESCALATION)  # 8 % an escalation

    assert policy.routes(korean, reading) == ("question", False)  # below Korean's 10 %
    assert policy.routes(chinese, reading) == ("question", True)  # the 1 % over all


def test_each_language_with_enough_replies_gets_the_highest_safe_review_threshold():
    import dataclasses

    from evals import reply_model, reply_thresholds

    def replies(language: str, count: int, start: int) -> list:
        # One calm escalation (8 %) among plain questions (1 %).
        rows = [reply("escalation", start)] + [
            reply("question", start + n) for n in range(1, count)
        ]
        return [dataclasses.replace(r, detected=language) for r in rows]

    examples = replies("ko", 30, 0) + replies("zh", 29, 100)
    probs = np.array(
        [CALM_ESCALATION if e.bucket == "escalation" else PLAIN_QUESTION for e in examples]
    )
    korean = examples[0]
    probs[0] = [0.10, 0.86, 0.02, 0.02]  # Korean's escalation: 2 %

    chosen = reply_thresholds.choose_review_by_language(
        examples, probs, reply_model.Policy(0.21, 0.7, 0.02)
    )

    assert korean.detected == "ko"
    assert chosen.whole == {"ko": 0.02}  # Chinese has too few replies (29) to choose its own
    assert chosen.ngrams == {}  # no n-gram readings given: the whole reading's threshold only


def test_the_ngrams_alone_send_a_reply_to_a_person_at_their_own_threshold():
    import dataclasses

    from evals import reply_model

    policy = reply_model.Policy(0.21, 0.7, 0.2, ngram_review_by_language={"vi": 0.6})
    vietnamese = dataclasses.replace(reply("escalation", 1), detected="vi")
    korean = dataclasses.replace(reply("escalation", 2), detected="ko")
    reading = np.array(CALM_ESCALATION)  # 8 % an escalation over all

    assert policy.routes(vietnamese, reading, 0.9) == ("question", True)  # the n-grams suspect it
    assert policy.routes(vietnamese, reading, 0.5) == ("question", False)  # below their 60 %
    assert policy.routes(vietnamese, reading) == ("question", False)  # no n-gram reading
    assert policy.routes(korean, reading, 0.9) == ("question", False)  # Korean has none


def test_a_language_gets_an_ngram_threshold_when_the_encoder_outvotes_them_on_an_escalation():
    import dataclasses

    from evals import reply_model, reply_thresholds

    # 40 Vietnamese replies: one escalation the whole reading puts at 0.3 % (the
    # encoder sure it is ordinary) though the n-grams alone read 94 %; the ordinary
    # replies read 5 % over all, and 30 % (or, for five of them, 70 %) by the n-grams.
    examples = [reply("escalation", 0)] + [reply("question", n) for n in range(1, 40)]
    examples = [dataclasses.replace(e, detected="vi") for e in examples]
    probs = np.array([[0.010, 0.987, 0.0, 0.003]] + [[0.01, 0.94, 0.0, 0.05]] * 39)
    ngram = np.array([0.94] + [0.7] * 5 + [0.3] * 34)

    chosen = reply_thresholds.choose_review_by_language(
        examples, probs, reply_model.Policy(0.21, 0.7, 0.02), ngram
    )
    alone = reply_thresholds.choose_review_by_language(
        examples, probs, reply_model.Policy(0.21, 0.7, 0.02)
    )

    # Alone, the whole reading must go down to 0.2 % and sends every ordinary reply
    # to a person; beside the n-grams at 90 %, none but the escalation goes.
    assert alone.whole == {"vi": 0.002}
    assert chosen.ngrams == {"vi": 0.9}
    policy = reply_model.Policy(0.21, 0.7, 0.02, chosen.whole, chosen.ngrams)
    scored = reply_model.score(examples, probs, policy, ngram)
    assert scored["escalations_acted_on_without_a_person"] == 0
    assert scored["ordinary_to_person_rate"] == 0.0


def test_the_committed_reader_carries_a_review_threshold_at_or_below_its_escalation_one():
    reader = default_reader()
    assert 0 < reader.review_threshold <= reader.escalation_threshold


@pytest.mark.evaluation
def test_a_language_is_read_only_where_its_held_out_figures_meet_the_floor():
    from evals import reply_model

    def figures(replies: int, accuracy: float, recall: float, alone: int) -> dict:
        return {
            "replies": replies,
            "bucket_accuracy": accuracy,
            "escalation_recall": recall,
            "escalations_acted_on_without_a_person": alone,
        }

    by_language = {
        "en": figures(1400, 0.92, 0.99, 0),
        "ko": figures(40, 0.70, 1.0, 0),  # below the accuracy floor
        "vi": figures(40, 0.95, 1.0, 1),  # one escalation acted on alone
        "sw": figures(3, 1.0, 1.0, 0),  # too few replies to say
        "und": figures(200, 1.0, 1.0, 0),  # not a language
    }
    assert reply_model.languages_read(by_language) == ["en"]


def test_the_committed_multilingual_reader_names_the_languages_it_reads():
    reader = multilingual_reader()
    assert reader is not None and reader.languages
    assert not reader.languages & {"und", "zxx"}


def test_the_english_and_spanish_reader_is_trained_on_the_files_it_always_was():
    from evals import reply_model

    assert default_reader().meta["trained_on"] == sorted(reply_model.BASE_FILES)
    multilingual = multilingual_reader()
    assert multilingual is not None
    assert multilingual.meta["trained_on"] == sorted(reply_model.TRAINING_FILES)


@pytest.mark.parametrize(
    ("language", "multilingual"),
    [("en", False), ("", False), ("es", True), ("vi", True), ("zh", True), ("fi", True)],
)
def test_the_route_gives_english_and_unsure_replies_to_the_english_and_spanish_reader(
    language, multilingual
):
    route = default_route()
    expected = route.multilingual if multilingual else route.base
    assert route.reader_for(language) is expected


def test_the_held_out_route_applies_the_safety_rules_as_the_product_does():
    import dataclasses

    from evals import reply_model, reply_routes

    policy = reply_model.Policy(0.3, 0.7, review_threshold=0.05)
    # Three replies: one the multilingual reader reads (Korean), one in no named
    # language long enough to say one, one too short to say one.
    korean = dataclasses.replace(reply("question", 1), detected="ko", words="질문 하나 있습니다")
    unnamed = dataclasses.replace(reply("escalation", 2), words="e ko he ky ten ai lay ten e v")
    short = dataclasses.replace(reply("question", 3), words="ok thanks")
    examples = [korean, unnamed, short]
    plain = np.array([PLAIN_QUESTION] * 3)
    calm = np.array([PLAIN_QUESTION, CALM_ESCALATION, CALM_ESCALATION])
    base = reply_routes.Calibrated(plain, policy, 1.0)
    other = reply_routes.Calibrated(calm, policy, 1.0)

    alone = reply_routes.route_all(examples, base, other, [0], [0.0, 0.0, 0.0])
    escalated = reply_routes.route_all(examples, base, other, [0], [0.75, 0.0, 0.0])

    assert alone[0] == ("question", False)
    assert escalated[0] == ("escalation", True)  # one sentence read alone decides
    # The other reader's possible escalation sends the unnamed reply to a person.
    assert alone[1] == ("question", True)
    assert alone[2] == ("question", False)  # too short: the first reader alone
