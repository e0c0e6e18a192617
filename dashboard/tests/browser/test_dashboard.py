"""The coordinators' dashboard in a real browser: decisions, the case page, the vanpool page.

Each test builds its scene the real way (tests/browser/scenes.py), works the
live dashboard through Chromium as a person would, then checks the database
and the sent mail. Screenshots of every page visited go to var/screenshots/.
"""

import re

import pytest
from django.contrib.auth.models import Group
from django.core import mail
from playwright.sync_api import expect

from cases.models import Case, PendingAction
from dashboard.tests.browser import scenes
from outreach.models import Message
from tests.factories import UserFactory
from vanpools.models import Rider

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

DONE = re.compile(r"\bqcard-done\b")


def card_of(page, action):
    return page.locator(f"#action-{action.pk}")


# --- Decisions in the review queue -------------------------------------------------------------


def test_a_coordinator_approves_a_cancellation_and_the_rider_is_cancelled(
    page, live_server, log_in, coordinator, screenshots, _frozen_time
):
    action = scenes.pre_cancel(_frozen_time)
    # Other work waiting beside it, so the queue looks like a working day.
    scenes.drafted_reply()
    scenes.reply_to_label()
    rider = scenes.far_rider(action.case.vanpool)
    sent_before = len(mail.outbox)

    log_in(page, coordinator)
    card = card_of(page, action)
    expect(card).to_contain_text(f"Cancel the seat of {rider.employee_id}")
    expect(card.get_by_role("heading", name="What was tried")).to_be_visible()
    screenshots(page, "queue")

    card.get_by_role("link", name="Approve cancellation…").click()
    confirm = card.locator("form.confirm-box")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("It cannot be undone from here.")
    confirm.get_by_label("Reason (goes on the record)").fill("HR confirms the move to LA")
    confirm.get_by_label("I have checked the evidence and the checklist above.").check()
    override = confirm.locator("input[name=override]")
    if override.count():  # only when the supervisor's review of the case failed
        override.check()
    screenshots(page, "cancel-confirm")

    confirm.get_by_role("button", name="Cancel the seat").click()
    expect(card).to_have_class(DONE)
    expect(card.get_by_role("status")).to_contain_text(f"on {action.case.case_id} approved")
    expect(card).to_contain_text("HR confirms the move to LA")

    seat = Rider.objects.get(pk=action.rider_id)
    assert seat.status == Rider.Status.CANCELLED and seat.cancelled_by == coordinator
    case = Case.objects.get(pk=action.case_id)
    assert (case.status, case.outcome) == (Case.Status.CLOSED, Case.Outcome.CANCELLED)
    cancelled = [m for m in mail.outbox[sent_before:] if m.to == [rider.email]]
    assert len(cancelled) == 1
    assert Message.objects.get(template="cancelled").to == [rider.email]

    # The vanpool page lists the seat as cancelled, by whom and why.
    card.get_by_role("link", name=action.case.vanpool.vanpool_id).click()
    past = page.locator("section[aria-labelledby=past-h]")
    expect(past).to_contain_text(rider.employee_id)
    expect(past).to_contain_text(coordinator.username)
    expect(page.locator("section[aria-labelledby=riders-h]")).not_to_contain_text(rider.employee_id)

    # The case list shows the case closed; the program page counts the cancellation.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Cases").click()
    row = page.get_by_role("row").filter(has_text=case.case_id)
    expect(row).to_contain_text("Closed")
    expect(row).to_contain_text("cancelled")
    screenshots(page, "case-list")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Program").click()
    expect(page.get_by_role("heading", name="How closed cases ended")).to_be_visible()
    expect(page.get_by_role("img", name="Closed cases by outcome")).to_be_visible()
    # The weekly trend is one named image; its numbers are in a table for screen readers.
    trend = "Cases per week and automation rate, the last 12 weeks"
    expect(page.get_by_role("img", name=trend)).to_be_visible()
    expect(page.get_by_role("table", name="Cases per week, the last 12 weeks")).to_be_attached()
    screenshots(page, "program")


def test_a_coordinator_edits_a_drafted_reply_and_sends_it(
    page, live_server, log_in, coordinator, screenshots
):
    action = scenes.drafted_reply()
    rider = scenes.far_rider(action.case.vanpool)
    sent_before = len(mail.outbox)
    edited = "Hello Farid,\n\nDana from the vanpool team will call you today about your seat."

    log_in(page, coordinator)
    card = card_of(page, action)
    expect(card).to_contain_text(f"Review a drafted reply to {rider.employee_id}")
    # The rider's message is shown as text, never as markup.
    expect(card.locator(".email-inbound")).to_contain_text("contacting my lawyer")
    card.get_by_label("Subject").fill("Your vanpool seat: a coordinator will call")
    card.get_by_label("Message").fill(edited)
    screenshots(page, "review-email")
    card.get_by_role("button", name="Send reply").click()

    expect(card).to_have_class(DONE)
    expect(card.get_by_role("status")).to_contain_text("approved")
    sent = mail.outbox[sent_before:]
    assert len(sent) == 1
    assert sent[0].to == [rider.email]
    assert sent[0].subject == "Your vanpool seat: a coordinator will call"
    assert sent[0].body == edited
    action.refresh_from_db()
    assert (action.status, action.decided_by, action.result["edited"]) == (
        PendingAction.Status.APPROVED,
        coordinator,
        True,
    )


def test_a_coordinator_labels_a_reply_and_the_case_moves_on(
    page, live_server, log_in, coordinator, screenshots
):
    action = scenes.reply_to_label()
    assert action.case.status == Case.Status.HITL_REVIEW
    rider = scenes.far_rider(action.case.vanpool)

    log_in(page, coordinator)
    card = card_of(page, action)
    expect(card).to_contain_text(f"Label a reply from {rider.employee_id}")
    expect(card.locator(".email-inbound")).to_contain_text("hmm")
    card.get_by_role("radio", name="question").check()
    screenshots(page, "label-reply")
    card.get_by_role("button", name="Label and continue").click()

    expect(card).to_have_class(DONE)
    expect(card.get_by_role("status")).to_contain_text("approved")
    inbound = Message.objects.get(pk=action.message_id)
    assert (inbound.bucket, inbound.bucket_confidence) == ("question", 1.0)
    case = Case.objects.get(pk=action.case_id)
    assert case.status == Case.Status.PENDING_REPLY  # a question is answered; the case waits
    assert Message.objects.filter(thread__case=case, template="answer").count() == 1


def test_a_coordinator_without_the_approve_permission_cannot_approve(
    page, live_server, log_in, screenshots, _frozen_time
):
    action = scenes.pre_cancel(_frozen_time)
    # Everything a coordinator may do, given directly, except deciding.
    reader = UserFactory(username="reader", is_staff=True)
    reader.user_permissions.set(
        Group.objects.get(name="Coordinators").permissions.exclude(codename="decide_pendingaction")
    )
    sent_before = len(mail.outbox)

    log_in(page, reader)
    card = card_of(page, action)
    expect(card).to_be_visible()
    expect(page.get_by_text("deciding needs the approve permission")).to_be_visible()
    expect(card.get_by_role("link", name="Approve cancellation…")).to_have_count(0)
    expect(card.get_by_role("button")).to_have_count(0)
    screenshots(page, "queue-read-only", phone=False)

    # A forged decision, with a valid CSRF token, is refused and changes nothing.
    csrf = re.search(r'"X-CSRFToken": "([^"]+)"', page.locator("body").get_attribute("hx-headers"))
    forged = page.request.post(
        f"{live_server.url}/queue/{action.pk}/decide/",
        form={"decision": "approve", "confirm": "on", "note": "forged"},
        headers={"X-CSRFToken": csrf.group(1), "HX-Request": "true"},
    )
    assert forged.status == 403
    assert "CSRF" not in forged.text()
    confirm = page.request.get(f"{live_server.url}/queue/{action.pk}/?step=confirm")
    assert confirm.status == 403

    action.refresh_from_db()
    assert action.status == PendingAction.Status.PENDING
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.ACTIVE
    assert Case.objects.get(pk=action.case_id).status == Case.Status.PRE_CANCEL
    assert len(mail.outbox) == sent_before


# --- The case page and the vanpool page ----------------------------------------------------------


def test_a_coordinator_asks_why_a_case_failed_and_gets_a_cited_answer(
    page, live_server, log_in, coordinator, screenshots
):
    case = scenes.audited_case()
    rider = scenes.far_rider(case.vanpool)

    log_in(page, coordinator)
    page.goto(f"{live_server.url}/cases/{case.case_id}/")
    expect(page.get_by_role("heading", name="Ask about this case")).to_be_visible()
    page.get_by_label("Question").fill("Why did this case fail?")
    page.get_by_role("button", name="Ask").click()

    answer = page.locator("#case-answer .answer")
    expect(answer).to_have_class(re.compile(r"\banswer-answered\b"))
    expect(answer).to_contain_text(rider.employee_id)
    expect(answer).to_contain_text("the limit is 50 miles")
    citations = answer.locator(".cites a")
    expect(citations.first).to_be_visible()
    hrefs = [link.get_attribute("href") for link in citations.all()]
    assert all(hrefs), hrefs
    assert any("#verification-" in href for href in hrefs), hrefs
    screenshots(page, "case-answer")

    # A citation leads to the record it cites, on this case's page.
    verification = next(
        link for link in citations.all() if "#verification-" in link.get_attribute("href")
    )
    target = verification.get_attribute("href").split("#", 1)[1]
    verification.click()
    expect(page).to_have_url(re.compile(f"#{target}$"))
    expect(page.locator(f"#{target}")).to_be_visible()


def test_a_coordinator_sees_the_vanpool_map_and_week_chart_with_the_flagged_rider(
    page, live_server, log_in, coordinator, screenshots
):
    case = scenes.audited_case()
    vanpool = case.vanpool
    rider = scenes.far_rider(vanpool)

    log_in(page, coordinator)
    page.get_by_role("link", name="Vanpools").click()
    expect(page.get_by_role("row").filter(has_text=vanpool.vanpool_id)).to_contain_text(
        "location mismatch", ignore_case=True
    )
    page.get_by_role("link", name=vanpool.vanpool_id).first.click()

    # A group, not an image: the riders' markers on it are links.
    vp_map = page.get_by_role("group", name=re.compile(f"^Map of {vanpool.vanpool_id}"))
    expect(vp_map).to_be_visible()
    expect(vp_map.locator("circle.map-limit")).to_have_count(1)
    expect(vp_map.locator("g.map-pickup")).to_have_count(1)
    expect(vp_map.locator("g.map-site")).to_have_count(1)
    expect(vp_map.locator("g.map-home")).to_have_count(2)
    flagged = vp_map.locator("g.map-home.is-flagged")
    expect(flagged).to_have_count(1)
    expect(flagged).to_contain_text(rider.employee_id)
    expect(vp_map.get_by_role("link", name=re.compile(f"^{rider.employee_id}"))).to_have_count(1)
    expect(vp_map.get_by_role("link")).to_have_count(2)

    week = page.get_by_role("group", name=re.compile("^Week chart"))
    expect(week).to_be_visible()
    expect(week.locator("rect.wk-van").first).to_be_visible()
    expect(week.locator("rect.wk-shift").first).to_be_visible()
    flagged_row = week.locator("g.wk-row.is-flagged")
    expect(flagged_row).to_have_count(1)
    expect(flagged_row).to_contain_text(f"✕ {rider.employee_id}")
    screenshots(page, "vanpool")

    page.locator("section[aria-labelledby=riders-h]").get_by_role(
        "link", name=rider.employee_id
    ).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(rider.employee_id)
    expect(page.get_by_text("commute miles")).to_be_visible()
    screenshots(page, "employee")


# --- The review desk: claims ------------------------------------------------------------------


def test_a_reviewer_claims_a_card_another_sees_who_holds_it_and_is_asked_before_deciding(
    page, browser, live_server, log_in, coordinator, screenshots
):
    action = scenes.drafted_reply()
    log_in(page, coordinator)
    card = card_of(page, action)
    expect(card).to_contain_text("due in")
    card.get_by_role("button", name="I’m on it").click()
    expect(card).to_contain_text("You are on it")
    expect(card.get_by_role("button", name="Let go")).to_be_visible()
    screenshots(page, "claimed")
    assert PendingAction.objects.get(pk=action.pk).claimed_by == coordinator

    colleague = UserFactory(username="colleague", is_staff=True)
    colleague.groups.set(Group.objects.filter(name="Coordinators"))
    other = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(other, colleague)
    theirs = card_of(other, action)
    expect(theirs).to_contain_text(f"{coordinator.username} is on it")
    expect(theirs.get_by_role("button", name="I’m on it")).to_have_count(0)

    theirs.get_by_role("button", name="Send reply").click()
    expect(theirs.get_by_role("alert")).to_contain_text(f"{coordinator.username} is on this card")
    assert PendingAction.objects.get(pk=action.pk).status == PendingAction.Status.PENDING
    screenshots(other, "held-by-another")

    theirs.get_by_label(f"{coordinator.username} is on this card: decide anyway").check()
    theirs.get_by_label("Because (from the list)").select_option("as_drafted")
    theirs.get_by_role("button", name="Send reply").click()
    expect(theirs).to_have_class(DONE)
    decided = PendingAction.objects.get(pk=action.pk)
    assert (decided.status, decided.decided_by, decided.reason) == (
        PendingAction.Status.APPROVED,
        colleague,
        "as_drafted",
    )
    other.context.close()
