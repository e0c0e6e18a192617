"""factory-boy factories: the smallest valid rows, overridden per test."""

import datetime as dt

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from agents.models import AgentRun
from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import EmailThread, Message
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

DAY_SCHEDULE = [
    {"day": day, "start": "07:00", "end": "16:00"} for day in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")

    @factory.post_generation
    def groups(self, create: bool, extracted: list[str] | None, **kwargs: object) -> None:
        if create and extracted:
            self.groups.set(Group.objects.filter(name__in=extracted))


class ShiftFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Shift

    shift_id = factory.Sequence(lambda n: f"SH-{n:03d}")
    name = "Day"
    schedule = factory.LazyFunction(lambda: [dict(span) for span in DAY_SCHEDULE])


class VanpoolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vanpool

    vanpool_id = factory.Sequence(lambda n: f"VP-{100 + n}")
    name = factory.LazyAttribute(lambda v: f"Van {v.vanpool_id}")
    work_site = "Fremont Campus"
    work_site_address = "45500 Fremont Blvd, Fremont, CA 94538"
    work_site_lat = 37.4926
    work_site_lng = -121.9466
    pickup_address = "Union City BART, Union City, CA 94587"
    pickup_zip = "94587"
    pickup_lat = 37.5906
    pickup_lng = -122.0172


class EmployeeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Employee

    employee_id = factory.Sequence(lambda n: f"EMP-{1000 + n}")
    first_name = factory.Sequence(lambda n: f"Pat{n}")
    last_name = "Rivera"
    email = factory.LazyAttribute(lambda e: f"{e.employee_id.lower()}@example.com")
    work_site = "Fremont Campus"
    home_zip = "94587"
    shift = factory.SubFactory(ShiftFactory)


class LeaveFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Leave

    employee = factory.SubFactory(EmployeeFactory)
    start_date = dt.date(2026, 11, 23)
    end_date = dt.date(2026, 11, 27)


class RiderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rider

    vanpool = factory.SubFactory(VanpoolFactory)
    employee = factory.SubFactory(EmployeeFactory)
    joined = dt.date(2026, 1, 5)


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case

    vanpool = factory.SubFactory(VanpoolFactory)
    meta = factory.LazyFunction(
        lambda: {"reason": "location_mismatch", "failed_checks": ["location"], "details": ""}
    )


class CaseEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CaseEvent

    case = factory.SubFactory(CaseFactory)
    actor_agent = "case_manager"
    to_status = "open"


class VerificationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Verification

    case = factory.SubFactory(CaseFactory)
    vanpool = factory.SelfAttribute("case.vanpool")
    check_type = "location"
    verdict = "fail"
    confidence = 5
    reasoning = "EMP-1000 lives 314.2 miles from the pickup; the limit is 50."
    evidence = factory.LazyFunction(
        lambda: [
            {
                "type": "distance_check",
                "employee_id": "EMP-1000",
                "home_zip": "90026",
                "pickup": "VP-100",
                "miles": 314.2,
                "threshold_miles": 50,
            }
        ]
    )


class PendingActionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PendingAction

    kind = PendingAction.Kind.CANCEL_MEMBERSHIP
    case = factory.SubFactory(CaseFactory)
    requested_by = "agent:supervisor"
    payload = factory.LazyFunction(dict)


class EmailThreadFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EmailThread

    case = factory.SubFactory(CaseFactory)
    subject = "Your vanpool seat: please confirm your details"


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    thread = factory.SubFactory(EmailThreadFactory)
    direction = Message.Direction.OUTBOUND
    from_email = "vanpool-audit@example.com"
    to = factory.LazyFunction(lambda: ["emp-1000@example.com"])
    subject = "Your vanpool seat"
    text_body = "Hello,"
    status = Message.Status.SENT


class AgentRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AgentRun

    agent = "location"
    backend = "rules"
    input = factory.LazyFunction(lambda: {"vanpool_id": "VP-100"})
    output = factory.LazyFunction(lambda: {"verdict": "pass"})
