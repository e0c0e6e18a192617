import pytest
from django.db import IntegrityError

from cases.models import Case
from tests.factories import CaseFactory, VanpoolFactory

pytestmark = pytest.mark.django_db


def test_it_refuses_a_second_open_case_for_a_vanpool():
    vanpool = VanpoolFactory()
    CaseFactory(vanpool=vanpool)
    with pytest.raises(IntegrityError):
        CaseFactory(vanpool=vanpool, status=Case.Status.PENDING_REPLY)
