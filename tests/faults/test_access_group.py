import pytest
from django.test import Client
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fmt", ["81.2.69.{i}", "81.2.69.{i}, 127.0.0.1", "81.2.69.{i}, 81.2.70.1"])
def test_probe(settings, fmt):
    user = UserFactory(username="victim", is_staff=True, groups=["Coordinators"])
    user.set_password("a-long-enough-password"); user.save()
    anon = Client()
    out = []
    for i in range(settings.AXES_FAILURE_LIMIT + 3):
        r = anon.post("/login/", {"username": "victim", "password": f"wrong{i}"}, HTTP_X_FORWARDED_FOR=fmt.format(i=i+1))
        out.append(r.status_code)
    r = anon.post("/login/", {"username": "victim", "password": "a-long-enough-password"}, HTTP_X_FORWARDED_FOR=fmt.format(i=99))
    print("\nXFF", fmt, out, "right:", r.status_code, "_auth_user_id" in anon.session)
