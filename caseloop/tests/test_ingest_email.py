"""manage.py ingest_email: a raw .eml through the same path as the webhook."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from outreach import inbound
from outreach.models import Message
from tests.inbound_support import EMAILS, eml, open_thread

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


def ingest(*args: str) -> str:
    out = StringIO()
    call_command("ingest_email", *args, stdout=out)
    return out.getvalue()


def inbound_messages():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


def test_it_stores_a_reply_and_says_what_became_of_it(queued):
    scene = open_thread()

    output = ingest(str(EMAILS / "plain_reply.eml"))

    message = inbound_messages().get()
    assert output == (
        f"{message.message_id} stored: kind reply, status received, "
        f"thread {scene.thread.thread_id}\n"
        f"case {scene.case.case_id}: pending_reply\n"
    )
    assert queued == [message.pk]


def test_the_same_file_twice_stores_one_message_and_says_so():
    open_thread()
    ingest(str(EMAILS / "plain_reply.eml"))

    output = ingest(str(EMAILS / "plain_reply.eml"))

    assert "already stored, nothing changed" in output
    assert inbound_messages().count() == 1


def test_thread_files_a_message_nothing_else_would_match_on_that_thread(tmp_path, queued):
    scene = open_thread(token="0" * 40)
    # No token, no reference to anything we sent.
    lone = tmp_path / "forwarded.eml"
    lone.write_bytes(
        eml("plain_reply.eml")
        .replace(b"reply+5f1c0d3a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f40", b"vanpools")
        .replace(b"177.20261120170000.outreach", b"unknown")
    )

    output = ingest(str(lone), "--thread", scene.thread.thread_id.lower())

    message = inbound_messages().get()
    assert message.thread == scene.thread
    assert f"thread {scene.thread.thread_id}" in output
    assert queued == [message.pk]


def test_an_unmatched_message_is_reported_with_its_flag():
    output = ingest(str(EMAILS / "spanish_reply.eml"))

    assert "thread -" in output
    assert "flags: unmatched" in output


def test_a_garbage_file_is_quarantined_not_a_crash():
    output = ingest(str(EMAILS / "garbage.eml"))

    assert "status quarantined" in output
    assert "flags: unparseable" in output


def test_a_missing_file_is_a_clear_error_and_stores_nothing(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        ingest(str(tmp_path / "missing.eml"))

    assert not inbound_messages().exists()


def test_an_unknown_thread_is_a_clear_error_and_stores_nothing():
    with pytest.raises(CommandError, match="THREAD-00000000: no such thread"):
        ingest(str(EMAILS / "plain_reply.eml"), "--thread", "THREAD-00000000")

    assert not inbound_messages().exists()
