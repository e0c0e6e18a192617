"""Rider letters word for word: every email template, for riders that reach every branch.

``letter_copy.json`` holds the subject, text and HTML of every template in
``outreach.compose.TEMPLATES`` for the riders of ``test_answer_copy`` (each
check, with and without a deadline, a name, a pickup address…), in English,
and in Spanish for the two letters that were written in Spanish before the
copy was translated (the answer and the holding reply). Moving the copy into
translated templates must leave it unchanged; a deliberate wording change
rewrites the fixture:

    .venv/bin/python manage.py shell -c \
        "from outreach.tests.test_letter_copy import write_fixture; write_fixture()"
"""

import json
from pathlib import Path

from outreach.compose import TEMPLATES, render_email
from outreach.tests.test_answer_copy import RIDERS

FIXTURE = Path(__file__).parent / "fixtures" / "letter_copy.json"
# The letters that had Spanish copy before they were translated.
SPANISH_BEFORE = ("answer", "holding_reply")
EXTRA: dict[str, dict[str, object]] = {
    "answer": {
        "answer_paragraphs": [
            "We measure from your home ZIP.",
            "Correct it at https://portal.example.com/my-profile if it changed.",
        ],
        "question_excerpt": "How far <is> it & why?",
    },
    "answer_no_excerpt": {"answer_paragraphs": ["One paragraph."]},
    "holding_reply_named": {"coordinator_name": "Kim Lee"},
}


def render_every_letter() -> dict[str, dict[str, str]]:
    """Subject, text and HTML of every template for RIDERS, keyed rider/template/language."""
    rendered: dict[str, dict[str, str]] = {}
    variants = [(name, name) for name in sorted(TEMPLATES)] + [
        ("answer", "answer_no_excerpt"),
        ("holding_reply", "holding_reply_named"),
    ]
    for rider, facts in RIDERS.items():
        for template, variant in variants:
            languages = ("en", "es") if template in SPANISH_BEFORE else ("en",)
            for lang in languages:
                email = render_email(template, facts, lang=lang, **EXTRA.get(variant, {}))
                rendered[f"{rider}/{variant}/{lang}"] = {
                    "subject": email.subject,
                    "text": email.text,
                    "html": email.html,
                }
    return rendered


def test_it_renders_every_letter_word_for_word_as_the_fixture():
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    rendered = render_every_letter()
    assert rendered.keys() == expected.keys()
    different = [key for key in expected if rendered[key] != expected[key]]
    assert not different, (different[:5], [rendered[key] for key in different[:1]])


def write_fixture() -> None:
    """Store what the templates write today as the text to compare with."""
    FIXTURE.write_text(
        json.dumps(render_every_letter(), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )
