"""Review kinds as types: each payload is checked when asked for, and read back by its class."""

import datetime as dt
from typing import ClassVar, Self

import pytest
from django.core.management import call_command
from pydantic import ValidationError

from cases import kinds as kinds_module
from cases.kinds import (
    PAYLOADS,
    CancelMembership,
    DecideVerification,
    HoldingReply,
    InvalidPayload,
    LabelReply,
    MatchInbound,
    ReviewEmail,
    ReviewPayload,
    UnknownKind,
    kind_choices,
    payload_class,
)
from cases.lifecycle import request_review
from cases.models import Case, CaseEvent, PendingAction, WrongKind
from cases.tests.test_admin import admin_url
from tests.factories import CaseFactory, PendingActionFactory

pytestmark = pytest.mark.django_db


def nothing_asked(case: Case) -> None:
    assert not PendingAction.objects.exists()
    assert not CaseEvent.objects.filter(case=case).exists()
    case.refresh_from_db()
    assert case.status == Case.Status.OPEN


# --- Asking ----------------------------------------------------------------------------------


def test_the_kind_is_taken_from_the_payloads_class_and_stored_as_asked():
    case = CaseFactory()
    asked = ReviewEmail(employee_id="EMP-1", subject="Re: your seat", text="Thanks.", to="a@b.c")

    action, _ = request_review(case, asked, actor="outreach", note="draft")

    action.refresh_from_db()
    assert action.kind == "review_email"
    # Only what the asker said is kept; the class fills the rest when it reads it back.
    assert action.payload == {
        "employee_id": "EMP-1",
        "subject": "Re: your seat",
        "text": "Thanks.",
        "to": "a@b.c",
    }
    assert action.ask == asked and action.ask.template == "reviewed"


REFUSED = {
    "a field of the wrong type": LabelReply.model_construct(confidence="very"),
    "a confidence above 1": LabelReply.model_construct(confidence=3.0),
    "a verdict that is not unknown": DecideVerification.model_construct(
        checks=["shift"], riders={"EMP-1": {"shift": "maybe"}}
    ),
    "a draft without its body": ReviewEmail.model_construct(employee_id="EMP-1", subject="Re"),
    "a cancellation that names no rider": CancelMembership.model_construct(
        failed_checks=["location"], why="deadline"
    ),
    "a ruling asked about no rider": DecideVerification.model_construct(checks=["shift"]),
}


@pytest.mark.parametrize("payload", REFUSED.values(), ids=REFUSED.keys())
def test_an_invalid_payload_is_refused_when_asked_for_and_nothing_is_stored(payload):
    case = CaseFactory()
    with pytest.raises(InvalidPayload, match=payload.kind):
        request_review(case, payload, actor="outreach", note="n")
    nothing_asked(case)


def test_a_payload_that_does_not_fit_its_class_is_refused_as_it_is_built():
    with pytest.raises(ValidationError, match="confidence"):
        LabelReply(confidence=1.5)
    with pytest.raises(ValidationError, match="extra_forbidden"):
        MatchInbound(reason="r", sneaky="x")  # type: ignore[call-arg]


def test_a_plain_dict_or_an_unregistered_class_is_not_an_ask():
    case = CaseFactory()
    with pytest.raises(TypeError, match="review kind's payload"):
        request_review(case, {"why": "x"}, actor="outreach", note="n")  # type: ignore[arg-type]

    class Stray(ReviewPayload):
        kind: ClassVar[str] = "stray"
        label: ClassVar[str] = "stray"

    with pytest.raises(UnknownKind, match="stray"):
        request_review(case, Stray(), actor="outreach", note="n")
    nothing_asked(case)


def test_a_repeated_ask_is_counted_on_the_card_in_the_kinds_own_keys():
    case = CaseFactory()
    first, _ = request_review(
        case,
        MatchInbound(reason="no token", sender="pat@example.com", subject="hi"),
        actor="inbound",
        note="n",
        hold_in=None,
        collapse_key="match:pat",
    )
    again, _ = request_review(
        case,
        MatchInbound(reason="no token", sender="pat@example.com", subject="hi again"),
        actor="inbound",
        note="n",
        hold_in=None,
        collapse_key="match:pat",
    )

    assert again.pk == first.pk
    first.refresh_from_db()
    assert first.payload["from"] == "pat@example.com" and first.payload["repeats"] == 1
    assert first.ask.repeats == 1 and isinstance(first.ask.last_repeat_at, dt.datetime)


# --- Reading ---------------------------------------------------------------------------------


LEGACY = {
    # A label card as the first reply loop wrote it: no rider, no holding reply, no "also".
    "label_reply": (
        {"suggested_bucket": "question", "confidence": 0.55, "reasoning": "asks", "why": "unsure"},
        {"suggested_bucket": "question", "confidence": 0.55, "employee_id": "", "also": ""},
    ),
    # An unmatched email, its From under the key "from".
    "match_inbound": (
        {"reason": "no token", "from": "pat@example.com", "subject": "hi"},
        {"sender": "pat@example.com", "quarantined": False, "repeats": 0},
    ),
    # A ruling card with its audit date as stored (an ISO string) and a key no version reads.
    "decide_verification": (
        {
            "checks": ["shift"],
            "riders": {"EMP-1": {"shift": "unknown"}},
            "audit_date": "2026-11-23",
            "details": "",
            "retired_key": 1,
        },
        {"audit_date": dt.date(2026, 11, 23), "inputs": {}},
    ),
    # A cancellation stored with nothing in it (actions added by hand, older fixtures).
    "cancel_membership": ({}, {"employee_id": "", "failed_checks": [], "why": ""}),
    "review_email": (
        {"employee_id": "EMP-1", "subject": "Re", "text": "Thanks."},
        {"template": "reviewed", "html": "", "guardrail": ""},
    ),
}


@pytest.mark.parametrize(("kind", "stored", "read"), [(k, *v) for k, v in LEGACY.items()])
def test_a_stored_legacy_payload_is_read_by_its_kinds_class(kind, stored, read):
    action = PendingActionFactory(kind=kind, payload=stored)
    fresh = PendingAction.objects.get(pk=action.pk)

    assert type(fresh.ask) is payload_class(kind)
    assert {field: getattr(fresh.ask, field) for field in read} == read


def test_an_action_reads_its_payload_again_once_it_is_reloaded():
    action = PendingActionFactory(kind="label_reply", payload={"why": "unsure"})
    assert action.ask.why == "unsure"
    PendingAction.objects.filter(pk=action.pk).update(payload={"why": "a possible escalation"})
    action.refresh_from_db()
    assert action.ask.why == "a possible escalation"


def test_an_action_read_as_another_kind_says_so():
    action = PendingActionFactory(kind="label_reply", payload={})
    assert action.ask_as(LabelReply) == LabelReply()
    with pytest.raises(WrongKind, match="label_reply, not a cancel_membership"):
        action.ask_as(CancelMembership)


def test_an_unknown_kind_raises_as_soon_as_it_is_read():
    with pytest.raises(UnknownKind, match="no review kind 'renew_permit'"):
        payload_class("renew_permit")
    with pytest.raises(UnknownKind):
        _ = PendingAction(kind="renew_permit", payload={}).ask


def test_the_kind_choices_and_the_kind_enum_come_from_the_registry():
    assert kind_choices() == [(p.kind, p.label) for p in PAYLOADS]
    assert PendingAction.Kind.choices == kind_choices()
    assert CancelMembership.kind == PendingAction.Kind.CANCEL_MEMBERSHIP
    assert PendingAction(kind="match_inbound").get_kind_display() == "match inbound email"


@pytest.mark.parametrize("kind", PAYLOADS, ids=[p.kind for p in PAYLOADS])
def test_every_kind_gives_a_sample_that_it_would_accept_as_an_ask(kind):
    sample = kind.sample("EMP-7")
    assert kind.checked_for_asking(sample) == sample
    assert kind.read(sample.stored()) == sample
    assert sample.about() in ("", "EMP-7") and sample.employee_ids() <= {"EMP-7"}


def test_a_new_kind_in_the_registry_needs_no_migration(monkeypatch):
    class RenewPermit(ReviewPayload):
        kind: ClassVar[str] = "renew_permit"
        label: ClassVar[str] = "renew a parking permit"
        permit: str = ""

        @classmethod
        def sample(cls, employee_id: str) -> Self:
            return cls(permit="P-1")

    monkeypatch.setattr(kinds_module, "PAYLOADS", (*PAYLOADS, RenewPermit))
    assert ("renew_permit", "renew a parking permit") in kind_choices()
    # --check exits non-zero when the models need a migration the repo does not have.
    call_command("makemigrations", "cases", "--check", "--dry-run", verbosity=0)


def test_the_admin_refuses_a_hand_made_payload_that_does_not_fit_its_kind(client, auditor):
    client.force_login(auditor)
    auditor_client = client
    case = CaseFactory()
    bad = auditor_client.post(
        admin_url(PendingAction, "add"),
        {"kind": "label_reply", "case": case.pk, "payload": '{"confidence": 7}', "note": "n"},
    )
    assert bad.status_code == 200 and "confidence" in bad.content.decode()
    unknown_key = auditor_client.post(
        admin_url(PendingAction, "add"),
        {"kind": "match_inbound", "case": case.pk, "payload": '{"form": "x"}', "note": "n"},
    )
    assert unknown_key.status_code == 200 and "form" in unknown_key.content.decode()
    assert not PendingAction.objects.exists()


def test_a_holding_reply_is_a_typed_part_of_a_label_card():
    card = LabelReply(holding_reply=HoldingReply(subject="Re", text="We will write."))
    assert card.stored() == {"holding_reply": {"subject": "Re", "text": "We will write."}}
    assert LabelReply.read(card.stored()).holding_reply == HoldingReply(
        subject="Re", text="We will write."
    )
