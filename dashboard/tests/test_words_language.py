"""Staff pages stay in English; a rider's words in another language are named, shown as written."""

import re

import pytest
from django.urls import reverse

from cases.models import PendingAction
from tests.factories import CaseFactory, EmailThreadFactory, MessageFactory, PendingActionFactory

Kind = PendingAction.Kind
SPANISH = "Ya actualicé mi dirección con recursos humanos la semana pasada, gracias."
ARABIC = "لقد غيرت عنواني مع الموارد البشرية الأسبوع الماضي، شكرا لكم."
ENGLISH = "I updated my address with HR last week, thanks."


def _inbound(text: str, language: str = "", **fields):
    fields = {"status": "processed", **fields}
    return MessageFactory(
        direction="inbound", kind="reply", text_body=text, language=language, **fields
    )


def _words_block(page: str, words: str) -> str:
    """The body element that holds ``words``, with the 'Written in' line just before it, if any."""
    body = re.search(r'<div class="email-body"[^>]*>' + re.escape(words), page)
    assert body, f"{words!r} is not on the page as written"
    before = page[: body.start()].rstrip()
    named = re.search(r'<div class="small words-language">(?:(?!<div).)*</div>$', before, re.S)
    return (named.group(0) if named else "") + body.group(0)


@pytest.mark.django_db
def test_a_reply_card_names_the_language_of_the_riders_words_and_shows_them_as_written(
    client, coordinator
):
    case = CaseFactory()
    spanish = _inbound(SPANISH, "es", thread=EmailThreadFactory(case=case))
    english = _inbound(ENGLISH, "en", thread=spanish.thread)
    PendingActionFactory(kind=Kind.LABEL_REPLY, case=case, message=spanish)
    PendingActionFactory(kind=Kind.LABEL_REPLY, case=case, message=english)
    client.force_login(coordinator)
    page = client.get(reverse("review-queue")).content.decode()
    block = _words_block(page, SPANISH)
    assert "Written in Spanish" in block and 'lang="es"' in block and "rtl" not in block
    assert "Written in" not in _words_block(page, ENGLISH)
    assert 'lang="en"' not in page.split("<body", 1)[1]  # the page itself is English throughout


@pytest.mark.django_db
def test_an_email_not_yet_read_is_named_from_the_riders_own_words_right_to_left_for_arabic(
    client, coordinator
):
    stray = _inbound(ARABIC + "\n\nOn Mon, Vanpool Program wrote:\n> Please update your address",
                     thread=None, status="received", flags=["unmatched"])  # fmt: skip
    PendingActionFactory(kind=Kind.MATCH_INBOUND, case=None, message=stray, payload={"from": "x@y"})
    client.force_login(coordinator)
    block = _words_block(client.get(reverse("review-queue")).content.decode(), ARABIC)
    assert "Written in Arabic" in block and 'lang="ar" dir="rtl"' in block


@pytest.mark.django_db
def test_the_case_thread_names_the_language_of_each_email_not_in_english(client, coordinator):
    case = CaseFactory()
    thread = EmailThreadFactory(case=case)
    MessageFactory(thread=thread, language="vi", text_body="Xin chào Ana, hồ sơ của bạn cho thấy")
    _inbound(SPANISH, "es", thread=thread)
    _inbound(ENGLISH, "", thread=thread)
    client.force_login(coordinator)
    page = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "Written in Vietnamese" in _words_block(page, "Xin chào Ana")
    assert "Written in Spanish" in _words_block(page, SPANISH)
    assert "Written in" not in _words_block(page, ENGLISH)
