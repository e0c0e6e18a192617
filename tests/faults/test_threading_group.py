"""Faults 14–22: which case a reply belongs to, and which mail is not a reply at all.

Each test drives the path a real message takes: an audit fails a rider, the
loop writes to them, the mail comes back through ``receive_raw`` and what it
queues on commit runs (django-q2 is synchronous in tests). Covered: threading
by reply token and by Message-ID, mail that matches nothing, a forward answered
by someone else, a co-rider's forged In-Reply-To, out-of-office notes, bounces,
Danish and German quote headers, signature-only replies, a reply to a closed
case, mailing-list mail, and the Auto-Submitted header on our own answers.
"""

import datetime as dt
import itertools

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentRun
from caseloop.audits import audit_vanpool
from caseloop.loop.deadlines import process_timeouts
from caseloop.tests.test_loop import (
    FAR_ZIP,
    NEAR_ZIP,
    far_rider,
    fix_home,
    near_rider,
    pre_cancelled,
)
from cases.models import Case, PendingAction
from outreach.inbound import receive_raw
from outreach.models import Message
from outreach.replies.classify import rider_words
from outreach.replies.own_words import strip_quoted
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from tests.inbound_support import OUR_MESSAGE_ID, THREAD_TOKEN, email_bytes, eml
from vanpools.models import Employee, Rider

pytestmark = pytest.mark.django_db

Status = Case.Status
OUR_ADDRESS = "Pool Patrol <vanpool-audit@example.com>"
QUESTION = "How do you measure the distance to the pickup?"
_message_ids = itertools.count(1)


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run):
    """The audit fails the far rider (Farid); the loop writes to him."""
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


# --- Helpers -------------------------------------------------------------------------


def letter_to(employee: Employee) -> Message:
    """The first email the loop sent to ``employee``."""
    return (
        Message.objects.filter(direction=Message.Direction.OUTBOUND, employee=employee)
        .order_by("pk")
        .first()
    )


def reply_address(case: Case) -> str:
    return f"reply+{case.thread.reply_token}@replies.poolpatrol.example"


def mail_from(
    sender: Employee | str,
    body: str,
    *,
    to: str,
    subject: str = "",
    headers: dict[str, str] | None = None,
) -> bytes:
    """A plain-text email from ``sender`` (a rider or an address), with a fresh Message-ID."""
    if isinstance(sender, Employee):
        sender = f"{sender.first_name} {sender.last_name} <{sender.email}>"
    return email_bytes(
        sender=sender,
        to=to,
        subject=subject or "Re: Action needed: please check your home address",
        body=body,
        message_id=f"<fault.threading.{next(_message_ids)}@mail.example.com>",
        headers=headers,
    )


def deliver(run, raw: bytes) -> Message:
    """Receive ``raw`` as the webhook would, then run what it queued (the loop)."""
    message, created = run(receive_raw, raw, provider="postmark")
    assert created
    return Message.objects.get(pk=message.pk)


def state(case: Case) -> tuple:
    """What a reply may change on a case: status, outcome, deadline, re-audits, meta, trail."""
    case.refresh_from_db()
    return (
        case.status,
        case.outcome,
        case.reply_deadline,
        case.reaudit_count,
        case.meta,
        case.events.count(),
    )


def outbound_count() -> int:
    return Message.objects.filter(direction=Message.Direction.OUTBOUND).count()


def classifier_runs() -> int:
    return AgentRun.objects.filter(agent="classifier").count()


def card_html(client, coordinator, action: PendingAction) -> str:
    """The card for ``action`` on the review queue page, as a coordinator sees it."""
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    start = html.index(f'id="action-{action.pk}"')
    return html[start : html.index("</article>", start)]


def assert_untouched(message: Message) -> None:
    """The loop never read ``message``: not claimed, not classified."""
    assert message.processed_at is None
    assert (message.bucket, message.bucket_confidence) == ("", None)


# --- 14: threading -------------------------------------------------------------------


def test_fault_14_a_reply_to_the_reply_token_address_is_put_on_its_case_thread(
    case, van, run, mailoutbox
):
    farid = far_rider(van)
    # No In-Reply-To, no References: only the token in the address says whose it is.
    raw = mail_from(farid, QUESTION, to=reply_address(case))

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, farid)
    assert message.in_reply_to == "" and message.flags == []
    assert (message.status, message.bucket) == (Message.Status.PROCESSED, "question")
    answer = Message.objects.get(template="answer")
    assert (answer.thread, answer.to, answer.in_reply_to) == (
        case.thread,
        [farid.email],
        message.rfc_message_id,
    )
    assert mailoutbox[-1].to == [farid.email]


def test_fault_14_a_reply_without_the_token_is_matched_by_the_message_id_it_answers(case, van, run):
    farid = far_rider(van)
    ours = letter_to(farid)
    # The rider's client answered our From address and dropped the Reply-To.
    raw = mail_from(
        farid, QUESTION, to=OUR_ADDRESS, headers={"In-Reply-To": f"<{ours.rfc_message_id}>"}
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, farid)
    assert message.in_reply_to == ours.rfc_message_id
    assert "unmatched" not in message.flags
    assert (message.status, message.bucket) == (Message.Status.PROCESSED, "question")
    assert Message.objects.get(template="answer").in_reply_to == message.rfc_message_id


def test_fault_14_a_reply_matching_nothing_is_stored_unmatched_for_a_person_never_guessed(
    case, van, run, client, coordinator, mailoutbox
):
    farid = far_rider(van)
    before, sent = state(case), len(mailoutbox)
    # From the case's only flagged rider, naming the case in the subject: still no
    # token and no reference to an email we sent, so nothing ties it to a case.
    raw = mail_from(
        farid,
        "I moved back to Union City last week.",
        to=OUR_ADDRESS,
        subject=f"About my vanpool seat ({case.case_id})",
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (None, None)
    assert (message.status, message.flags) == (Message.Status.RECEIVED, ["unmatched"])
    assert_untouched(message)
    card = PendingAction.objects.get()
    assert (card.kind, card.status, card.case, card.message) == (
        PendingAction.Kind.MATCH_INBOUND,
        PendingAction.Status.PENDING,
        None,
        message,
    )
    assert card.payload["reason"] == "no reply token and no reference to an email we sent"
    assert f"Match an email from {farid.email}" in card_html(client, coordinator, card)
    assert state(case) == before
    assert len(mailoutbox) == sent


# --- 15: forwards --------------------------------------------------------------------


@pytest.mark.parametrize("an_employee", [False, True], ids=["outsider", "employee-off-the-van"])
def test_fault_15_a_reply_from_whoever_the_rider_forwarded_to_is_kept_and_not_acted_on(
    case, van, run, mailoutbox, an_employee
):
    farid = far_rider(van)
    manager = "dana.okafor@example.com"
    if an_employee:
        EmployeeFactory(email=manager)  # works here, but rides another van (or none)
    before, sent, letters = state(case), len(mailoutbox), outbound_count()
    # Farid forwarded our email; his manager answers the reply address quoted in it.
    raw = mail_from(
        f"Dana Okafor <{manager}>",
        "Farid moved to Hayward last month; I approved it. What else do you need from me?",
        to=reply_address(case),
        subject="RE: FW: Action needed: please check your home address",
        headers={"References": f"<{letter_to(farid).rfc_message_id}> <fwd.1@mail.example.com>"},
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, None)
    assert "unknown_sender" in message.flags
    assert message.status == Message.Status.RECEIVED
    assert_untouched(message)
    card = PendingAction.objects.get()
    assert (card.kind, card.case, card.message) == ("match_inbound", case, message)
    assert card.payload["reason"] == "sender is not a rider of this case"
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)
    assert state(case) == before


# --- 16: forged headers --------------------------------------------------------------


@pytest.mark.parametrize("header", ["In-Reply-To", "References"])
def test_fault_16_a_co_rider_s_forged_reference_during_a_pending_cancellation_goes_to_a_person(
    case, van, run, _frozen_time, mailoutbox, header
):
    case = pre_cancelled(case, run, _frozen_time)
    cancellation = PendingAction.objects.get(kind="cancel_membership")
    pending_before = (cancellation.status, cancellation.payload, cancellation.note)
    before, sent = state(case), len(mailoutbox)
    nadia = near_rider(van)  # rides the same van; the email was written to Farid
    raw = mail_from(
        nadia,
        "Farid still rides with us every day, do not cancel his seat.",
        to=OUR_ADDRESS,
        headers={header: f"<{letter_to(far_rider(van)).rfc_message_id}>"},
    )

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (None, None)
    assert "unmatched" in message.flags
    assert_untouched(message)
    card = PendingAction.objects.get(kind="match_inbound")
    assert (card.case, card.message) == (None, message)
    assert card.payload["reason"] == "sender is not the rider the referenced email was sent to"
    cancellation.refresh_from_db()
    assert (cancellation.status, cancellation.payload, cancellation.note) == pending_before
    assert cancellation.decided_at is None
    assert Rider.objects.get(pk=cancellation.rider_id).status == Rider.Status.ACTIVE
    assert not PendingAction.objects.filter(kind="label_reply").exists()
    assert state(case) == before
    assert case.status == Status.PRE_CANCEL
    assert len(mailoutbox) == sent


# --- 17: auto-replies ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "headers", "body", "reason"),
    [
        (
            "Re: Action needed: please check your home address",
            {"Auto-Submitted": "auto-replied"},
            "I am out of the office until November 30. Questions about my route? Ask Dana.",
            "Auto-Submitted: auto-replied",
        ),
        (
            "Fravær: Action needed: please check your home address",
            {},
            "Jeg er på ferie indtil 30. november. Har du spørgsmål, så skriv til Dana.",
            "out-of-office subject: Fravær",
        ),
        (
            "Abwesenheitsnotiz: Action needed: please check your home address",
            {},
            "Ich bin bis zum 30. November nicht im Büro. Fragen? Bitte an Dana wenden.",
            "out-of-office subject: Abwesenheitsnotiz",
        ),
    ],
    ids=["auto-submitted", "danish-subject", "german-subject"],
)
def test_fault_17_an_out_of_office_note_is_set_aside_unread_unanswered_and_moves_no_deadline(
    case, van, run, _frozen_time, mailoutbox, subject, headers, body, reason
):
    farid = far_rider(van)
    _frozen_time.shift(dt.timedelta(days=2))  # any reset of the deadline would now show
    before, sent, letters = state(case), len(mailoutbox), outbound_count()
    raw = mail_from(
        farid,
        body,
        to=reply_address(case),
        subject=subject,
        headers={"In-Reply-To": f"<{letter_to(farid).rfc_message_id}>", **headers},
    )

    message = deliver(run, raw)

    assert (message.kind, message.status) == (Message.Kind.AUTO_REPLY, Message.Status.SET_ASIDE)
    assert (message.thread, message.employee) == (case.thread, farid)  # kept for the record
    assert message.classification["kind"] == "auto_reply"
    assert message.classification["reason"].startswith(reason)
    assert_untouched(message)
    assert classifier_runs() == 0
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)
    assert not PendingAction.objects.exists()
    assert state(case) == before
    assert case.reply_deadline == timezone.now() + dt.timedelta(days=5)


def test_fault_17_an_out_of_office_note_does_not_stop_the_reminder(case, van, run, _frozen_time):
    farid = far_rider(van)
    deliver(
        run,
        mail_from(
            farid,
            "I am out of the office until Monday.",
            to=reply_address(case),
            subject="Fravær: Action needed: please check your home address",
        ),
    )
    _frozen_time.shift(dt.timedelta(days=5, hours=1))

    assert run(process_timeouts)["reminders"] == 1


# --- 18: bounces ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dsn_bounce.eml", "dsn_bounce_headers_only.eml"])
def test_fault_18_a_bounce_of_our_email_marks_the_rider_undeliverable_and_is_not_a_reply(
    case, van, run, mailoutbox, name
):
    farid = far_rider(van)
    ours = letter_to(farid)
    sent, letters = len(mailoutbox), outbound_count()
    # The sample bounces, addressed to this case: its token, its rider, our Message-ID.
    raw = (
        eml(name)
        .replace(THREAD_TOKEN.encode(), case.thread.reply_token.encode())
        .replace(OUR_MESSAGE_ID.encode(), ours.rfc_message_id.encode())
        .replace(b"pat.rivera@example.com", farid.email.encode())
        .replace(b"Pat.Rivera@example.com", farid.email.encode())
    )

    message = deliver(run, raw)

    assert (message.kind, message.status) == (Message.Kind.BOUNCE, Message.Status.SET_ASIDE)
    assert (message.thread, message.employee) == (case.thread, farid)
    assert message.classification["reason"].startswith("delivery-status report: failed")
    assert_untouched(message)
    assert classifier_runs() == 0
    farid.refresh_from_db()
    assert farid.email_undeliverable_at == timezone.now()
    ours.refresh_from_db()
    assert ours.flags == ["bounced"]
    case.refresh_from_db()
    assert f"bounced:{farid.employee_id}" in case.meta["flags"]
    assert (case.status, case.reaudit_count) == (Status.PENDING_REPLY, 0)
    assert not PendingAction.objects.exists()
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)


# --- 19: quotes in other languages ---------------------------------------------------

OUTLOOK_QUOTE_HEADERS = {
    "danish": ("Fra", "Sendt", "Til", "Emne", "23. november 2026 09:02"),
    "german": ("Von", "Gesendet", "An", "Betreff", "Montag, 23. November 2026 09:02"),
}


@pytest.mark.parametrize("language", sorted(OUTLOOK_QUOTE_HEADERS))
def test_fault_19_quoted_history_under_a_danish_or_german_outlook_header_is_not_read(
    case, van, run, language
):
    farid = far_rider(van)
    ours = letter_to(farid)
    sender, sent, to, subject, when = OUTLOOK_QUOTE_HEADERS[language]
    # Outlook's quote block in the rider's language, then our whole email, unmarked.
    body = (
        f"{QUESTION}\n\n"
        f"{sender}: Pool Patrol <vanpool-audit@example.com>\n"
        f"{sent}: {when}\n"
        f"{to}: {farid.first_name} {farid.last_name} <{farid.email}>\n"
        f"{subject}: {ours.subject}\n\n"
        f"{ours.text_body}"
    )
    assert FAR_ZIP in ours.text_body  # what would show if the history were read

    message = deliver(run, mail_from(farid, body, to=reply_address(case), subject=ours.subject))

    assert strip_quoted(message.text_body) == QUESTION
    assert rider_words(message.text_body, message.subject) == QUESTION.lower()
    assert (message.status, message.bucket) == (Message.Status.PROCESSED, "question")
    answer = Message.objects.get(template="answer")
    assert answer.text_body.startswith(f"Hello {farid.first_name},\n")  # English, as asked
    quoted = [line for line in answer.text_body.splitlines() if line.startswith(">")]
    assert " ".join(line.lstrip("> ") for line in quoted) == QUESTION
    assert f"{sender}:" not in answer.text_body and f"{subject}:" not in answer.text_body


# --- 20: signature-only replies ------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Sent from my iPhone",
        "\n\nSent from my iPhone\n",
        "-- \nFarid Rivera\nFacilities | Fremont Campus\n555-0142",
        "Sent from Outlook for Android",
        "Sent from Yahoo Mail on Android",
        "Sent from my Verizon, Samsung Galaxy smartphone",
    ],
    ids=["iphone", "iphone-blank-lines", "signature-block", "outlook", "yahoo", "verizon"],
)
def test_fault_20_a_reply_with_only_a_signature_goes_to_a_person_and_is_not_acted_on(
    case, van, run, _frozen_time, mailoutbox, body
):
    farid = far_rider(van)
    ours = letter_to(farid)
    _frozen_time.shift(dt.timedelta(days=2))  # a deadline moved by an answer would show
    deadline, sent, letters = case.reply_deadline, len(mailoutbox), outbound_count()
    raw = mail_from(farid, body, to=reply_address(case), subject=f"Re: {ours.subject}")

    message = deliver(run, raw)

    assert (message.thread, message.employee) == (case.thread, farid)
    # Nothing to read: our own subject coming back is not the rider's words either.
    assert message.classification["hitl"] is True
    assert message.classification["reasoning"] == "Nothing to read."
    card = PendingAction.objects.get(message=message)
    assert (card.kind, card.status) == (PendingAction.Kind.LABEL_REPLY, "pending")
    case.refresh_from_db()
    assert (case.status, case.reaudit_count, case.reply_deadline) == (
        Status.HITL_REVIEW,
        0,
        deadline,
    )
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)


# --- 21: a reply to a closed case ----------------------------------------------------


def test_fault_21_please_reinstate_my_seat_on_a_closed_case_is_a_card_and_the_case_stays_closed(
    case, van, run, client, coordinator, mailoutbox
):
    farid = far_rider(van)
    fix_home(farid)
    deliver(
        run,
        mail_from(
            farid, "I updated my address in the portal this morning.", to=reply_address(case)
        ),
    )
    case.refresh_from_db()
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.RESOLVED)
    sent, letters = len(mailoutbox), outbound_count()

    message = deliver(
        run,
        mail_from(farid, "Please reinstate my seat, I need the van again.", to=reply_address(case)),
    )

    assert (message.thread, message.employee) == (case.thread, farid)
    assert message.status == Message.Status.PROCESSED
    case.refresh_from_db()
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.RESOLVED)
    card = PendingAction.objects.get(status=PendingAction.Status.PENDING)
    assert (card.kind, card.case, card.message) == ("label_reply", case, message)
    assert card.payload["why"].startswith(f"{case.case_id} is closed")
    assert case.case_id in card_html(client, coordinator, card)
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)


# --- 22: mailing lists and our own automatic answers ---------------------------------


def test_fault_22_mail_with_a_list_id_is_set_aside_as_automatic(case, van, run, mailoutbox):
    farid = far_rider(van)
    before, sent = state(case), len(mailoutbox)
    # The riders' list relays Farid's post to everyone on it, our reply address included.
    raw = mail_from(
        farid,
        "Does anyone have a spare seat on Friday? How early does the van leave?",
        to=f"Fremont riders <fremont-riders@lists.example.com>, {reply_address(case)}",
        subject="[fremont-riders] Friday seat",
        headers={"List-Id": "Fremont riders <fremont-riders.lists.example.com>"},
    )

    message = deliver(run, raw)

    assert (message.kind, message.status) == (Message.Kind.AUTO_REPLY, Message.Status.SET_ASIDE)
    assert message.classification["reason"].startswith("List-Id:")
    assert_untouched(message)
    assert classifier_runs() == 0
    assert not PendingAction.objects.exists()
    assert not Message.objects.filter(template="answer").exists()
    assert state(case) == before
    assert len(mailoutbox) == sent


@pytest.mark.parametrize(
    ("text", "fixed", "template"),
    [
        (QUESTION, False, "answer"),
        ("OK, thanks for letting me know.", False, "still_shows"),
        ("I updated my address in the portal this morning.", True, "resolved"),
    ],
)
def test_fault_22_an_automatic_answer_carries_auto_submitted_and_is_set_aside_if_echoed(
    case, van, run, mailoutbox, text, fixed, template
):
    farid = far_rider(van)
    if fixed:
        fix_home(farid)
    first = mailoutbox[0]
    assert "Auto-Submitted" not in first.extra_headers  # the first letter is a person's word

    deliver(run, mail_from(farid, text, to=reply_address(case)))

    ours = Message.objects.get(template=template)
    [email] = [sent for sent in mailoutbox if sent.subject == ours.subject]
    assert email.extra_headers["Auto-Submitted"] == "auto-replied"
    wire = email.message().as_bytes()
    assert b"Auto-Submitted: auto-replied" in wire
    # A rider's forwarding rule sends our answer straight back to the reply address.
    echoed = f"Delivered-To: {reply_address(case)}\r\n".encode() + wire
    sent, letters = len(mailoutbox), outbound_count()

    echo = deliver(run, echoed)

    assert (echo.kind, echo.status) == (Message.Kind.AUTO_REPLY, Message.Status.SET_ASIDE)
    assert echo.classification["reason"] == "Auto-Submitted: auto-replied"
    assert_untouched(echo)
    assert (outbound_count(), len(mailoutbox)) == (letters, sent)
