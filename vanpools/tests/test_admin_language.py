"""The admin's employee page shows and edits the language rider mail is written in."""

import pytest

from tests.factories import EmployeeFactory
from vanpools.models import Employee

pytestmark = pytest.mark.django_db


def test_an_auditor_sets_the_roster_language_and_clears_the_riders_request(client, auditor):
    employee = EmployeeFactory(requested_language="en")
    client.force_login(auditor)
    url = f"/admin/vanpools/employee/{employee.pk}/change/"
    form = client.get(url).context["adminform"].form
    assert {"preferred_language", "requested_language"} <= set(form.fields)
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {"shift": employee.shift_id, "preferred_language": "ko", "requested_language": ""}
    data |= {
        f"{prefix}-{key}": value
        for prefix in ("leaves", "memberships")
        for key, value in {"TOTAL_FORMS": 0, "INITIAL_FORMS": 0}.items()
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    employee.refresh_from_db()
    assert (employee.preferred_language, employee.requested_language) == ("ko", "")


def test_a_language_that_is_not_shipped_is_refused():
    employee = EmployeeFactory.build(preferred_language="fr")
    with pytest.raises(Exception, match="preferred_language"):
        employee.full_clean(exclude=["shift"])
    assert not Employee.objects.exists()
