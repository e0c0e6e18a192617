"""Which language a rider is written to in: request, roster, replies, the program's."""

import datetime as dt

import pytest
from django.utils import timezone

from outreach.models import Message
from outreach.rider_language import detected_language, rider_language
from tests.factories import EmployeeFactory

pytestmark = pytest.mark.django_db


def replied(employee, language, *, minutes_ago=0, kind=Message.Kind.REPLY):
    return Message.objects.create(
        direction=Message.Direction.INBOUND,
        employee=employee,
        kind=kind,
        from_email=employee.email,
        status=Message.Status.PROCESSED,
        language=language,
        received_at=timezone.now() - dt.timedelta(minutes=minutes_ago),
    )


@pytest.mark.parametrize(
    ("requested", "roster", "replies", "expected"),
    [
        ("ko", "es", ["vi"], ("ko", "asked")),
        ("", "es", ["vi"], ("es", "roster")),
        ("", "", ["vi"], ("vi", "reply")),
        ("", "", [], ("fr-program", "program")),
    ],
)
def test_the_language_is_the_riders_request_then_the_roster_then_a_reply_then_the_programs(
    settings, requested, roster, replies, expected
):
    settings.PROGRAM_LANGUAGE = "ht"
    employee = EmployeeFactory(requested_language=requested, preferred_language=roster)
    for language in replies:
        replied(employee, language)
    choice = rider_language(employee)
    wanted = ("ht", "program") if expected[1] == "program" else expected
    assert (choice.code, choice.source) == wanted


def test_the_latest_reply_the_detector_was_sure_of_counts_not_a_later_unsure_one():
    employee = EmployeeFactory()
    replied(employee, "ar", minutes_ago=30)
    replied(employee, "vi", minutes_ago=20)
    replied(employee, "", minutes_ago=10)  # "ok": too short to tell
    assert rider_language(employee).code == "vi"


def test_an_auto_reply_says_nothing_about_the_riders_language():
    employee = EmployeeFactory()
    replied(employee, "ko", kind=Message.Kind.AUTO_REPLY)
    assert rider_language(employee).source == "program"


def test_the_choice_says_where_it_came_from_for_staff():
    employee = EmployeeFactory(preferred_language="pt-br")
    assert rider_language(employee).describe() == "Portuguese (Brazil) (from the roster)"


@pytest.mark.parametrize(
    ("words", "language"),
    [
        ("Tôi đã cập nhật địa chỉ nhà với phòng nhân sự rồi.", "vi"),
        ("我已经在人事部门更新了我的地址，谢谢", "zh-hans"),
        ("주소를 인사팀에 업데이트했습니다", "ko"),
        ("Na-update ko na ang address ko sa HR kahapon.", "tl"),
        ("Eu já atualizei meu endereço no RH ontem.", "pt-br"),
        ("Mwen te deja mete adrès mwen ajou ak RH la.", "ht"),
        ("لقد قمت بتحديث عنواني لدى الموارد البشرية", "ar"),
        ("Why was I flagged? What address do you have on file?", "en"),
        ("¿Por qué?", "es"),  # short, but Spanish words only
        ("hola, gracias", "es"),
        ("ok", ""),  # too short to tell
        ("I moved", ""),
        ("Ich bin letzten Monat umgezogen und habe die Adresse geändert.", ""),  # not shipped
    ],
)
def test_the_detector_names_a_shipped_language_only_when_it_is_sure(words, language):
    assert detected_language(words) == language


def test_an_employee_loaded_with_its_reply_language_needs_no_query(django_assert_num_queries):
    from outreach.rider_language import with_reply_language
    from vanpools.models import Employee

    employee = EmployeeFactory()
    replied(employee, "tl")
    loaded = with_reply_language(Employee.objects.filter(pk=employee.pk)).get()
    with django_assert_num_queries(0):
        assert rider_language(loaded).code == "tl"
