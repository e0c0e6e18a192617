"""Ask about this case on the case page: the form, the view, and links to the cited records."""

import pytest
from django.urls import reverse

from agents.models import AgentRun
from caseloop.tests.test_case_qa import FAR_ZIP, audited_case, miles
from dashboard.case_qa import case_page_links
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def case(django_capture_on_commit_callbacks):
    return audited_case(django_capture_on_commit_callbacks)


def test_each_cited_record_links_to_where_it_is_shown(case):
    link = case_page_links(case.case_id)
    page = reverse("case-detail", args=[case.case_id])
    employee = case.vanpool.riders.get(employee__home_zip=FAR_ZIP).employee.employee_id
    assert link("case") == f"{page}#summary"
    assert link("verification:12") == f"{page}#verification-12"
    assert link("event:40") == f"{page}#event-40"
    assert link("MSG-0A1B2C3D") == f"{page}#MSG-0A1B2C3D"
    assert link(f"vanpool:{case.vanpool.vanpool_id}") == reverse(
        "vanpool-detail", args=[case.vanpool.vanpool_id]
    )
    assert link(f"employee:{employee}") == reverse("employee-detail", args=[employee])
    assert link("policy") == ""


# --- The view ------------------------------------------------------------------------------


def test_asking_over_htmx_returns_the_answer_fragment(client, coordinator, case):
    client.force_login(coordinator)
    url = reverse("case-ask", args=[case.case_id])
    response = client.post(url, {"question": "Why did this case fail?"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<div id="case-answer"')
    assert str(miles(case)) in html and "Sources:" in html and "#verification-" in html


def test_asking_without_javascript_renders_the_case_page_with_the_answer(client, coordinator, case):
    client.force_login(coordinator)
    url = reverse("case-ask", args=[case.case_id])
    html = client.post(url, {"question": "What happens next?"}).content.decode()
    assert "<html" in html and "pre-cancel" in html


def test_an_empty_or_overlong_question_is_refused_with_the_reason(client, coordinator, case):
    client.force_login(coordinator)
    url = reverse("case-ask", args=[case.case_id])
    empty = client.post(url, {"question": "  "}, **HTMX)
    assert empty.status_code == 422 and b"Type a question" in empty.content
    assert client.post(url, {"question": "x" * 501}, **HTMX).status_code == 422
    assert not AgentRun.objects.filter(agent="case_qa").exists()


def test_the_answer_is_escaped(client, coordinator, case):
    employee = case.vanpool.riders.get(employee__home_zip=FAR_ZIP).employee
    MessageFactory(
        thread=case.thread,
        direction="inbound",
        employee=employee,
        text_body='<img src=x onerror="alert(1)"> I moved',
        status="processed",
    )
    client.force_login(coordinator)
    url = reverse("case-ask", args=[case.case_id])
    html = client.post(url, {"question": "What did the rider say?"}, **HTMX).content.decode()
    assert "<img" not in html and "&lt;img" in html


def test_only_dashboard_users_may_ask_and_only_by_post(client, outsider, coordinator, case):
    url = reverse("case-ask", args=[case.case_id])
    client.force_login(outsider)
    assert client.post(url, {"question": "Why?"}).status_code == 403
    client.force_login(coordinator)
    assert client.get(url).status_code == 405
