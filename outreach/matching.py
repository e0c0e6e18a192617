"""Which thread an inbound email belongs to, and which rider sent it, from evidence we put there.

A forced thread, else the reply token in a recipient address (a rider's own,
or the thread's shared one), else In-Reply-To / References / the bounced
Message-ID against what we sent. Nothing else: an email is never guessed onto
a case; a person matches it.
"""

from dataclasses import dataclass

from outreach.models import EmailThread, Message, RiderReplyToken
from outreach.parsing import MAX_REFERENCES, ParsedInbound, reply_token_from
from vanpools.models import Employee


@dataclass(frozen=True)
class Match:
    thread: EmailThread | None
    how: str
    # The message of ours it answers (or that bounced), when matched by Message-ID.
    outbound: Message | None = None
    why_not: str = ""
    # The rider whose own reply address it came to (how == "rider_token").
    rider: Employee | None = None


def match_thread(parsed: ParsedInbound, force_thread: EmailThread | None = None) -> Match:
    """The thread an inbound message belongs to, from evidence we put there ourselves.

    A rider's own token names the thread and the rider; the thread's shared
    token (mail sent before riders had their own) names only the thread.
    """
    if force_thread is not None:
        return Match(force_thread, "forced")
    token = reply_token_from(parsed.recipients)
    thread, rider = token_owner(token) if token else (None, None)
    if thread is not None:
        how = "reply_token" if rider is None else "rider_token"
        return Match(thread, how, _outbound_referenced(parsed, thread), rider=rider)
    outbound = _outbound_referenced(parsed)
    if outbound is not None:
        return Match(outbound.thread, "message_id", outbound)
    if token:
        return Match(None, "", why_not="the reply token matches no thread")
    return Match(None, "", why_not="no reply token and no reference to an email we sent")


def token_owner(token: str) -> tuple[EmailThread | None, Employee | None]:
    """The thread a reply token belongs to, and the rider when it is one rider's own."""
    own = RiderReplyToken.objects.filter(token=token).select_related("thread", "employee").first()
    if own is not None:
        return own.thread, own.employee
    return EmailThread.objects.filter(reply_token=token).first(), None


def _referenced_ids(parsed: ParsedInbound) -> list[str]:
    ids = [parsed.in_reply_to, *parsed.references[:MAX_REFERENCES], *parsed.bounced_message_ids]
    return list(dict.fromkeys(ref for ref in ids if ref))


def _outbound_referenced(
    parsed: ParsedInbound, thread: EmailThread | None = None
) -> Message | None:
    """Our sent message the email names, nearest first (In-Reply-To before References)."""
    ids = _referenced_ids(parsed)
    if not ids:
        return None
    ours = Message.objects.filter(
        direction=Message.Direction.OUTBOUND, rfc_message_id__in=ids, thread__isnull=False
    ).select_related("thread__case", "employee")
    if thread is not None:
        ours = ours.filter(thread=thread)
    by_id = {message.rfc_message_id: message for message in ours}
    return next((by_id[ref] for ref in ids if ref in by_id), None)


def rider_for(thread: EmailThread, sender: str) -> tuple[Employee | None, str]:
    """The case's rider who sent this, and why not when there is none.

    Any membership of the case's vanpool counts, cancelled ones included: a
    rider whose seat was just cancelled may well write back. Two riders
    sharing an address are told apart by whom this thread wrote to.
    """
    riders = list(
        Employee.objects.filter(
            memberships__vanpool_id=thread.case.vanpool_id, email__iexact=sender
        ).distinct()
    )
    if len(riders) > 1:
        written_to = set(
            thread.messages.filter(
                direction=Message.Direction.OUTBOUND, employee__in=riders
            ).values_list("employee_id", flat=True)
        )
        riders = [rider for rider in riders if rider.pk in written_to]
    if len(riders) == 1:
        return riders[0], ""
    if riders:
        return None, "sender's address belongs to several riders of this case"
    return None, "sender is not a rider of this case"


def sender_of(match: Match, parsed: ParsedInbound) -> tuple[Employee | None, str]:
    """The rider who sent this, and why not when no rider may be taken to have.

    At a rider's own address only that rider speaks: a reply from any other
    address (a co-rider, or whoever the email was forwarded to) is not acted
    on as either of them. Elsewhere the sender is looked up among the case's
    riders, as before riders had their own addresses.
    """
    assert match.thread is not None  # only a matched message has a sender on a case
    if match.rider is None:
        return rider_for(match.thread, parsed.from_email)
    if parsed.from_email.strip().lower() == match.rider.email.strip().lower():
        return match.rider, ""
    return None, (
        f"sent to {match.rider.employee_id}'s own reply address from {parsed.from_email}, "
        f"which is not {match.rider.employee_id}'s address"
    )
