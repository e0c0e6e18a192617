"""Labelled replies shown to a model: the nearest by the reader's own features."""

from outreach.replies.examples import (
    ExampleIndex,
    LabelledReply,
    example_index,
    reader_vector,
)
from outreach.replies.reader import default_reader

EXAMPLES = (
    LabelledReply("thanks, got it", "acknowledgment"),
    LabelledReply("i moved to fremont last month and updated my address", "update"),
    LabelledReply("what happens to my seat if i change shifts?", "question"),
    LabelledReply("i am talking to my union rep about this letter", "escalation"),
    LabelledReply("we moved in june, new address is in workday", "update"),
)


def index() -> ExampleIndex:
    return ExampleIndex(EXAMPLES, default_reader())


def test_a_reply_is_one_unit_vector_over_the_readers_blocks():
    vector = reader_vector(default_reader(), "I moved to Fremont")
    assert abs(sum(w * w for w in vector.values()) - 1.0) < 1e-9


def test_the_nearest_examples_are_the_ones_that_say_the_same_kind_of_thing():
    nearest = index().nearest("I moved to Hayward and updated my address", 2)
    assert [e.bucket for e in nearest] == ["update", "update"]


def test_it_shows_no_more_than_asked_and_nothing_unrelated():
    assert index().nearest("thanks, got it", 0) == []
    assert len(index().nearest("thanks, got it", 10)) <= len(EXAMPLES)
    # Words the reader has no features for resemble nothing.
    assert index().nearest("zzqx", 3) == []


def test_equally_near_examples_keep_their_file_order():
    twins = (LabelledReply("ok", "acknowledgment"), LabelledReply("ok", "question"))
    assert [e.bucket for e in ExampleIndex(twins, default_reader()).nearest("ok", 2)] == [
        "acknowledgment",
        "question",
    ]


def test_the_committed_examples_hold_every_bucket_and_no_holdout_reply():
    committed = example_index().examples
    assert {e.bucket for e in committed} == {"acknowledgment", "question", "update", "escalation"}
    assert len({e.words for e in committed}) == len(committed)
