"""Faults 70–74: who may speak for a rider, and which bounce may cut one off.

A reply address is a secret shared with whoever holds the email: the rider,
a co-rider they forward it to, anyone. These tests hold it and try to act as
someone else: a forged "mailer-daemon" bounce, a forged delivery-status
report, a co-rider writing to another rider's address, a From the sender's
own domain disowns (SPF/DKIM/DMARC). Each must reach a person and change
nothing. A real bounce still marks the address, and mail sent before riders
had their own addresses still finds its thread.
"""

import importlib
import json
from pathlib import Path

import pytest
from django.apps import apps

from caseloop.audits import audit_vanpool
from caseloop.tests.test_loop import FAR_ZIP, NEAR_ZIP
from cases.models import Case, PendingAction
from outreach.models import Message, RiderReplyToken
from tests.factories import EmployeeFactory, MessageFactory, RiderFactory, VanpoolFactory
from tests.faults.support import basic_auth, post_json, postmark_payload, production_webhooks
from tests.faults.test_threading_group import (
    QUESTION,
    assert_untouched,
    card_html,
    classifier_runs,
    deliver,
    letter_to,
    mail_from,
    outbound_count,
    reply_address,
    state,
)
from tests.inbound_support import OUR_MESSAGE_ID, THREAD_TOKEN, eml

pytestmark = pytest.mark.django_db

Status = Case.Status
SENDGRID_INBOUND = "/anymail/sendgrid/inbound/"
DSN_SAMPLES = ("dsn_bounce.eml", "dsn_bounce_headers_only.eml")


@pytest.fixture
def van():
    """Nadia rides near the pickup; Farid and Bo live too far: both are written to."""
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Bo", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run):
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


def rider(van, first_name: str):
    return van.riders.get(employee__first_name=first_name).employee


def own_address(employee) -> str:
    """The reply address the loop gave ``employee`` in its first email to them."""
    return letter_to(employee).reply_to


def undeliverable(employee) -> bool:
    employee.refresh_from_db()
    return employee.email_undeliverable_at is not None


def bounce_sample(name: str, *, to: str, original_id: str, failed: str) -> bytes:
    """One of the sample DSNs, addressed to ``to`` and returning ``original_id`` for ``failed``."""
    return (
        eml(name)
        .replace(f"reply+{THREAD_TOKEN}@replies.poolpatrol.example".encode(), to.encode())
        .replace(b"bounces@poolpatrol.example", to.encode())
        .replace(OUR_MESSAGE_ID.encode(), original_id.encode())
        .replace(b"pat.rivera@example.com", failed.encode())
        .replace(b"Pat.Rivera@example.com", failed.encode())
    )


def the_card(case: Case) -> PendingAction:
    card = PendingAction.objects.get()
    assert (card.kind, card.status, card.case) == (
        PendingAction.Kind.MATCH_INBOUND,
        PendingAction.Status.PENDING,
        case,
    )
    return card


# --- 70: a forged bounce -------------------------------------------------------------


@pytest.mark.parametrize("to", ["the rider's own address", "the thread's shared address"])
def test_fault_70_a_failure_notice_forged_with_a_reply_address_marks_no_one_and_goes_to_a_person(
    case, van, run, mailoutbox, client, coordinator, to
):
    farid = rider(van, "Farid")
    address = own_address(farid) if to.startswith("the rider") else reply_address(case)
    before, sent, letters = state(case), len(mailoutbox), outbound_count()
    # Anyone holding the address can write this: a daemon's From, the header Exim uses.
    raw = mail_from(
        "Mail Delivery System <MAILER-DAEMON@mx.mallory.example>",
        f"A message that you sent could not be delivered.\n\n  {farid.email}\n"
        "    retry timeout exceeded",
        to=address,
        subject="Mail delivery failed: returning message to sender",
        headers={"X-Failed-Recipients": farid.email},
    )

    message = deliver(run, raw)

    assert (message.kind, message.status) == (Message.Kind.BOUNCE, Message.Status.SET_ASIDE)
    assert (message.thread, message.employee) == (case.thread, None)
    assert "bounce_unverified" in message.flags
    assert not undeliverable(farid)
    assert letter_to(farid).flags == []
    card = the_card(case)
    assert "not a delivery-status report" in card.payload["reason"]
    assert "not a delivery-status report" in card_html(client, coordinator, card)
    assert state(case) == before  # no bounced:… flag, no move
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)


@pytest.mark.parametrize("name", DSN_SAMPLES)
def test_fault_70_a_delivery_report_forged_without_our_original_marks_no_one(case, van, run, name):
    farid = rider(van, "Farid")
    before = state(case)
    # A well-formed multipart/report naming Farid, but the original it "returns"
    # is not the email we sent him: the forger never saw its Message-ID.
    raw = bounce_sample(
        name, to=own_address(farid), original_id="made.up.1@mx.mallory.example", failed=farid.email
    )

    message = deliver(run, raw)

    assert message.kind == Message.Kind.BOUNCE
    assert (message.thread, message.employee) == (case.thread, None)
    assert "bounce_unverified" in message.flags
    assert not undeliverable(farid)
    assert "the original it returns is not an email" in the_card(case).payload["reason"]
    assert state(case) == before


def test_fault_70_a_report_returning_one_rider_s_email_cannot_mark_another(case, van, run):
    farid, bo = rider(van, "Farid"), rider(van, "Bo")
    # Bo holds his own letter's Message-ID; he names Farid as the failed address.
    raw = bounce_sample(
        "dsn_bounce.eml",
        to=own_address(bo),
        original_id=letter_to(bo).rfc_message_id,
        failed=farid.email,
    )

    message = deliver(run, raw)

    assert "bounce_unverified" in message.flags
    assert not undeliverable(farid) and not undeliverable(bo)


# --- 71: a real bounce ---------------------------------------------------------------


@pytest.mark.parametrize("name", DSN_SAMPLES)
def test_fault_71_a_real_delivery_report_of_our_email_to_the_rider_s_own_address_marks_them(
    case, van, run, name
):
    farid, bo = rider(van, "Farid"), rider(van, "Bo")
    ours = letter_to(farid)
    raw = bounce_sample(
        name, to=own_address(farid), original_id=ours.rfc_message_id, failed=farid.email
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, farid)
    assert undeliverable(farid) and not undeliverable(bo)
    ours.refresh_from_db()
    assert ours.flags == ["bounced"]
    case.refresh_from_db()
    assert f"bounced:{farid.employee_id}" in case.meta["flags"]
    assert not PendingAction.objects.exists()


# --- 72: a reply address per rider ---------------------------------------------------


def test_fault_72_each_rider_on_a_case_gets_a_reply_address_of_their_own(case, van, mailoutbox):
    farid, bo = rider(van, "Farid"), rider(van, "Bo")
    addresses = {own_address(farid), own_address(bo)}

    assert len(addresses) == 2
    assert reply_address(case) not in addresses
    for employee in (farid, bo):
        token = RiderReplyToken.objects.get(thread=case.thread, employee=employee).token
        assert own_address(employee) == f"reply+{token}@replies.poolpatrol.example"
    # What went out on the wire: each rider's email carries their own address.
    assert {(tuple(m.to), tuple(m.reply_to)) for m in mailoutbox} == {
        ((farid.email,), (own_address(farid),)),
        ((bo.email,), (own_address(bo),)),
    }


@pytest.mark.parametrize("sender", ["co-rider Bo", "Nadia, who rides but was not written to"])
def test_fault_72_a_co_rider_writing_to_another_rider_s_address_goes_to_a_person(
    case, van, run, mailoutbox, client, coordinator, sender
):
    farid = rider(van, "Farid")
    writer = rider(van, sender.split()[-1] if sender.startswith("co-rider") else "Nadia")
    before, sent, letters = state(case), len(mailoutbox), outbound_count()
    # Farid forwarded his email (or left it on the shared printer): the writer
    # answers his address, from their own, and speaks for him.
    raw = mail_from(
        writer,
        "Farid still rides with us every day, please do not cancel his seat.",
        to=own_address(farid),
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, None)
    assert {"sender_mismatch", "unknown_sender"} <= set(message.flags)
    assert_untouched(message)
    assert classifier_runs() == 0
    card = the_card(case)
    assert farid.employee_id in card.payload["reason"]
    assert writer.email in card.payload["reason"]
    assert "own reply address" in card_html(client, coordinator, card)
    assert state(case) == before
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)


def test_fault_72_the_rider_s_own_reply_to_their_address_is_read_as_theirs(case, van, run):
    farid = rider(van, "Farid")

    message = deliver(run, mail_from(farid, QUESTION, to=own_address(farid)))

    assert (message.thread, message.employee) == (case.thread, farid)
    assert (message.status, message.bucket) == (Message.Status.PROCESSED, "question")


# --- 73: the provider's SPF / DKIM / DMARC verdicts -----------------------------------

FAILING_VERDICTS = {
    "spf": ("Authentication-Results", "mx.poolpatrol.example; spf=fail smtp.mailfrom=x.example"),
    "dkim": ("Authentication-Results", "mx.poolpatrol.example; dkim=fail header.d=x.example"),
    "dmarc": (
        "Authentication-Results",
        "mx.poolpatrol.example; spf=pass; dmarc=fail (p=REJECT) header.from=x.example",
    ),
    "received-spf": ("Received-SPF", "Fail (mx.poolpatrol.example: 192.0.2.7 not permitted)"),
    "arc": ("ARC-Authentication-Results", "i=1; mx.poolpatrol.example; dmarc=fail"),
}


@pytest.mark.parametrize("verdict", sorted(FAILING_VERDICTS))
def test_fault_73_a_reply_whose_sender_fails_authentication_goes_to_a_person_with_the_reason(
    case, van, run, mailoutbox, client, coordinator, verdict
):
    farid = rider(van, "Farid")
    header, value = FAILING_VERDICTS[verdict]
    before, sent = state(case), len(mailoutbox)
    # Farid's From and Farid's address, but his domain says the mail is not his.
    raw = mail_from(
        farid, "I do not need the seat any more.", to=own_address(farid), headers={header: value}
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, None)
    assert "authentication_failed" in message.flags
    assert_untouched(message)
    card = the_card(case)
    assert "failed authentication" in card.payload["reason"]
    assert f"{header}: {value}" in card.payload["reason"]
    assert "failed authentication" in card_html(client, coordinator, card)
    assert state(case) == before
    assert len(mailoutbox) == sent


@pytest.mark.parametrize(
    "value",
    [
        "mx.poolpatrol.example; spf=softfail smtp.mailfrom=x.example; dmarc=none",
        "mx.poolpatrol.example; spf=neutral; dkim=none; dmarc=none",
        "",
    ],
    ids=["softfail", "neutral-none", "absent"],
)
def test_fault_73_a_verdict_that_is_not_a_failure_leaves_the_reply_to_the_loop(
    case, van, run, value
):
    farid = rider(van, "Farid")
    headers = {"Authentication-Results": value} if value else None

    message = deliver(run, mail_from(farid, QUESTION, to=own_address(farid), headers=headers))

    assert message.employee == farid
    assert message.status == Message.Status.PROCESSED


def test_fault_73_a_postmark_delivery_with_a_failing_received_spf_goes_to_a_person(
    case, van, run, client, settings
):
    production_webhooks(settings)
    farid = rider(van, "Farid")
    payload = postmark_payload(
        From=farid.email,
        FromFull={"Email": farid.email, "Name": "Farid", "MailboxHash": ""},
        To=own_address(farid),
        ToFull=[{"Email": own_address(farid), "Name": "", "MailboxHash": ""}],
        Headers=[
            {"Name": "Received-SPF", "Value": "Fail (sender not permitted) client-ip=192.0.2.7"},
            {"Name": "Message-ID", "Value": "<fault.73.pm@mail.example.com>"},
        ],
    )

    response = run(post_json, client, "/anymail/postmark/inbound/", payload, **basic_auth())

    assert response.status_code == 200
    message = Message.objects.get(direction=Message.Direction.INBOUND)
    assert (message.employee, message.processed_at) == (None, None)
    assert "Received-SPF: Fail" in the_card(case).payload["reason"]


@pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning")
def test_fault_73_sendgrid_s_spf_and_dkim_fields_are_read(case, van, run, client, settings):
    production_webhooks(settings)
    farid = rider(van, "Farid")
    raw = mail_from(farid, "Cancel my seat, I drive now.", to=own_address(farid))
    fields = {
        "email": raw.decode(),
        "envelope": json.dumps({"from": farid.email, "to": [own_address(farid)]}),
        "SPF": "pass",
        "dkim": "{@example.com : fail}",
    }

    response = run(client.post, SENDGRID_INBOUND, fields, **basic_auth())

    assert response.status_code == 200
    message = Message.objects.get(direction=Message.Direction.INBOUND)
    assert (message.employee, message.processed_at) == (None, None)
    assert "dkim: {@example.com : fail}" in the_card(case).payload["reason"]


# --- 74: mail sent before riders had their own addresses -----------------------------


def migration_step():
    """The data step of the migration that gave riders their own tokens (any number)."""
    path = next(
        Path(__file__).resolve().parents[2].glob("outreach/migrations/*_rider_reply_tokens.py")
    )
    return importlib.import_module(f"outreach.migrations.{path.stem}").give_riders_their_own_tokens


def test_fault_74_an_upgrade_gives_written_riders_their_own_token_and_the_old_address_still_works(
    case, van, run
):
    farid, bo = rider(van, "Farid"), rider(van, "Bo")
    shared = reply_address(case)
    # The database as it was: no rider tokens, every email out with the shared
    # address, and one reminder to Farid still waiting in the outbox.
    RiderReplyToken.objects.all().delete()
    Message.objects.filter(direction=Message.Direction.OUTBOUND).update(reply_to=shared)
    waiting = MessageFactory(
        thread=case.thread,
        employee=farid,
        to=[farid.email],
        reply_to=shared,
        status=Message.Status.QUEUED,
    )

    migration_step()(apps, None)

    tokens = RiderReplyToken.objects.filter(thread=case.thread)
    assert {t.employee for t in tokens} == {farid, bo}
    farid_token = tokens.get(employee=farid).token
    waiting.refresh_from_db()
    assert waiting.reply_to == f"reply+{farid_token}@replies.poolpatrol.example"
    assert letter_to(farid).reply_to == shared  # what was sent stays as sent
    # A reply to the address Farid already has is still his.
    message = deliver(run, mail_from(farid, QUESTION, to=shared))
    assert (message.thread, message.employee) == (case.thread, farid)
    assert message.status == Message.Status.PROCESSED
    # Running it again changes nothing.
    migration_step()(apps, None)
    assert RiderReplyToken.objects.get(thread=case.thread, employee=farid).token == farid_token


def test_fault_74_the_old_shared_address_from_someone_who_is_no_rider_goes_to_a_person(
    case, van, run
):
    before = state(case)

    message = deliver(
        run,
        mail_from(
            "Mallory <mallory@mallory.example>", "Cancel Farid's seat.", to=reply_address(case)
        ),
    )

    assert (message.thread, message.employee) == (case.thread, None)
    assert "unknown_sender" in message.flags
    assert the_card(case).payload["reason"] == "sender is not a rider of this case"
    assert state(case) == before
