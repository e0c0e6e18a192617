"""The learned reader: retraining reproduces the committed artifact, and reads as trained."""

import io

import numpy as np
import pytest
from django.core.management import call_command

from evals import reply_model
from outreach.replies.reader import default_reader, reader_from_document


@pytest.mark.evaluation
def test_retraining_reproduces_the_committed_reader_byte_for_byte():
    out = io.StringIO()
    call_command("train_reply_model", "--check", stdout=out)
    assert "reproduced exactly" in out.getvalue()


def test_the_product_reads_as_the_trained_pipeline_does():
    # The committed reader, rebuilt from JSON, against a fit of the same pipeline
    # on a small slice of the data: the same features give the same arithmetic.
    examples = reply_model.load_examples(["core"])
    fitted = reply_model.fit(examples)
    document = reply_model.document(fitted, 1.0, 0.5, examples)
    reader = reader_from_document(document)
    words = [e.words for e in examples[:20]]
    expected = reply_model.softmax(fitted.logits(words), 1.0)
    got = np.array([[reader.probabilities(w)[b] for b in reply_model.BUCKETS] for w in words])
    assert np.allclose(got, expected, atol=1e-3)


def test_the_committed_reader_says_what_it_was_trained_on():
    meta = default_reader().meta
    assert "holdout" not in meta["trained_on"] and meta["replies"] > 1000
