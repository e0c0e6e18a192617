import re

import pytest
from django.db import IntegrityError

from cases.models import Case
from outreach.models import EmailThread, Message
from poolpatrol import ids
from tests.factories import CaseFactory, EmailThreadFactory, MessageFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("factory", "field", "pattern"),
    [
        (CaseFactory, "case_id", r"^CASE-[0-9A-F]{8}$"),
        (EmailThreadFactory, "thread_id", r"^THREAD-[0-9A-F]{8}$"),
        (MessageFactory, "message_id", r"^MSG-[0-9A-F]{8}$"),
    ],
)
def test_it_gives_each_record_a_prefixed_hex_id(factory, field, pattern):
    assert re.match(pattern, getattr(factory(), field))


def test_it_draws_a_new_id_when_the_first_one_is_taken(monkeypatch):
    taken = CaseFactory(vanpool__vanpool_id="VP-900")
    draws = iter([taken.case_id, "CASE-0000BEEF"])
    monkeypatch.setattr(ids, "new_public_id", lambda prefix: next(draws))
    fresh = CaseFactory()
    assert fresh.case_id == "CASE-0000BEEF"
    assert Case.objects.count() == 2


def test_it_gives_up_after_repeated_clashes(monkeypatch):
    taken = CaseFactory(vanpool__vanpool_id="VP-900")
    monkeypatch.setattr(ids, "new_public_id", lambda prefix: taken.case_id)
    with pytest.raises(IntegrityError):
        CaseFactory()
    assert Case.objects.count() == 1


def test_it_does_not_retry_other_integrity_errors(monkeypatch):
    # A second open case for a vanpool is a real error, not an id clash.
    first = CaseFactory()
    calls = []
    real = ids.new_public_id
    monkeypatch.setattr(ids, "new_public_id", lambda prefix: calls.append(1) or real(prefix))
    with pytest.raises(IntegrityError):
        CaseFactory(vanpool=first.vanpool)
    assert len(calls) == 1


def test_it_keeps_the_id_when_a_record_is_saved_again():
    case = CaseFactory()
    before = case.case_id
    case.reaudit_count = 1
    case.save()
    assert Case.objects.get(pk=case.pk).case_id == before


def test_it_gives_threads_an_unguessable_lowercase_reply_token():
    thread = EmailThreadFactory()
    assert re.match(r"^[0-9a-f]{40}$", thread.reply_token)
    assert EmailThread.objects.exclude(reply_token=thread.reply_token).count() == 0


@pytest.mark.parametrize("field", ["provider_message_id", "rfc_message_id"])
def test_it_stores_a_redelivered_inbound_message_once(field):
    MessageFactory(**{field: "<abc@mail.example>"}, direction="inbound", status="received")
    with pytest.raises(IntegrityError):
        MessageFactory(**{field: "<abc@mail.example>"}, direction="inbound", status="received")


def test_it_allows_many_messages_without_provider_ids():
    MessageFactory()
    MessageFactory()
    assert Message.objects.count() == 2
