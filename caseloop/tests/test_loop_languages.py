"""The rider's language in the reply loop: the choice order, a reply that asks for one."""

import datetime as dt

import pytest
from django.core import mail

from caseloop.audits import audit_vanpool
from caseloop.loop.deadlines import process_timeouts
from caseloop.tests.test_loop import FAR_ZIP, NEAR_ZIP, deliver, far_rider, pre_cancelled, reply
from cases.models import Case, CaseEvent, PendingAction
from outreach.models import Message
from outreach.rider_language import rider_language
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import Employee

pytestmark = pytest.mark.django_db
Status = Case.Status


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run):
    """The audit fails the far rider; outreach writes to them."""
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


def test_the_first_letter_is_in_the_roster_language(van, run):
    far = far_rider(van)
    Employee.objects.filter(pk=far.pk).update(preferred_language="vi")
    run(audit_vanpool, van.vanpool_id)
    letter = Message.objects.get(direction="outbound", employee=far)
    assert letter.language == "vi"
    assert letter.text_body.startswith(f"Xin chào {far.first_name},")
    assert "To get this email in English, reply ENGLISH." in letter.text_body
    assert '<html lang="vi">' in letter.html_body


def test_a_reply_in_a_language_the_detector_is_sure_of_sets_the_riders_language(case, van, run):
    far = far_rider(van)
    inbound = deliver(run, reply(case, far, "Tôi đã cập nhật địa chỉ nhà với phòng nhân sự rồi."))
    assert inbound.language == "vi"
    assert rider_language(Employee.objects.get(pk=far.pk)).code == "vi"
    # The multilingual reader reads Vietnamese to its floor: no person labels it.
    assert not PendingAction.objects.filter(message=inbound, kind="label_reply").exists()


def test_a_reply_in_a_language_no_reader_reads_goes_to_a_person_with_a_holding_reply(
    case, van, run
):
    far = far_rider(van)
    inbound = deliver(run, reply(case, far, "了解しました。住所はもう直しました。"))
    # unread_language: a person labels it, with the reader's guess and a holding reply.
    card = PendingAction.objects.get(message=inbound, kind="label_reply")
    assert "unread_language" not in card.payload["why"]  # the why is for people
    assert "ja, which the reader does not read" in card.payload["reasoning"]
    assert far.first_name in card.payload["holding_reply"]["text"]


def test_a_short_reply_the_detector_is_unsure_of_leaves_the_language_as_it_was(case, van, run):
    far = far_rider(van)
    deliver(run, reply(case, far, "Tôi đã cập nhật địa chỉ nhà với phòng nhân sự rồi."))
    unsure = deliver(run, reply(case, far, "ok"))
    assert unsure.language == ""
    assert rider_language(Employee.objects.get(pk=far.pk)).code == "vi"


def test_a_reply_asking_for_english_resends_the_letter_in_english_and_keeps_the_choice(
    case, van, run
):
    far = far_rider(van)
    Employee.objects.filter(pk=far.pk).update(preferred_language="es")
    first = Message.objects.get(direction="outbound", employee=far)
    inbound = deliver(run, reply(case, far, "ENGLISH"))
    far.refresh_from_db()
    assert far.requested_language == "en"
    kept = far.history.order_by("-history_id")[0]  # the roster's history has the choice too
    assert (kept.history_type, kept.requested_language) == ("~", "en")
    assert rider_language(far).describe() == "English (the rider asked for it by reply)"
    assert inbound.bucket == "" and inbound.classification["language_request"] == "en"
    again = Message.objects.get(idempotency_key=f"{case.case_id}:language:{inbound.message_id}")
    assert again.template == first.template and again.language == "en"
    assert again.in_reply_to == inbound.rfc_message_id
    assert again.text_body.startswith(f"Hello {far.first_name},")
    assert mail.outbox[-1].subject == again.subject
    event = CaseEvent.objects.filter(data__message_id=inbound.message_id).get()
    assert event.data == {
        "message_id": inbound.message_id,
        "language": "en",
        "resent": first.template,
    }
    case.refresh_from_db()
    assert case.status == Status.PENDING_REPLY
    assert not PendingAction.objects.exists()


def test_the_riders_request_comes_before_the_roster(case, van, run):
    far = far_rider(van)
    Employee.objects.filter(pk=far.pk).update(preferred_language="es")
    deliver(run, reply(case, far, "Tiếng Việt"))
    far.refresh_from_db()
    assert rider_language(far).code == "vi" and far.preferred_language == "es"


def test_a_language_request_is_not_an_answer_the_reminder_still_goes(case, van, run, _frozen_time):
    deliver(run, reply(case, far_rider(van), "Español por favor"))
    _frozen_time.shift(dt.timedelta(days=5, hours=1))
    assert run(process_timeouts)["reminders"] == 1
    reminder = Message.objects.get(template="reminder")
    assert reminder.language == "es" and reminder.subject.startswith("Recordatorio:")


def test_a_language_request_while_a_cancellation_waits_withdraws_it_for_a_person(
    case, van, run, _frozen_time
):
    case = pre_cancelled(case, run, _frozen_time)
    action = PendingAction.objects.get(kind="cancel_membership")
    inbound = deliver(run, reply(case, far_rider(van), "العربية"))
    assert PendingAction.objects.get(pk=action.pk).status == "superseded"
    card = PendingAction.objects.get(kind="label_reply", message=inbound)
    assert "Arabic" in card.payload["reasoning"]
    again = Message.objects.get(idempotency_key=f"{case.case_id}:language:{inbound.message_id}")
    assert again.language == "ar" and 'dir="rtl"' in again.html_body
