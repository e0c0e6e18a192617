"""The dashboard for a coordinator who works from the keyboard or with a screen reader.

axe-core (node_modules/, installed by ``make browser``) checks every page at the
desktop and phone widths; the other tests work the queue with the keyboard and
read what a person meets: the error the server gave, where focus lands, the
counts, the colours.
"""

import re

import pytest
from playwright.sync_api import expect

from cases.models import PendingAction
from dashboard.tests.browser import axe, scenes
from dashboard.tests.browser.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

Status = PendingAction.Status


def card_of(page, action):
    return page.locator(f"#action-{action.pk}")


def sideways_pan(page) -> int:
    """How many CSS pixels the page scrolls sideways (0: it fits the window)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def problems_on(page, where: str) -> list[str]:
    found = axe.violations(page)
    problems = [axe.report(where, found)] if found else []
    if page.viewport_size["width"] == PHONE["width"] and (pan := sideways_pan(page)) > 0:
        problems.append(f"{where}: the page pans sideways by {pan} px")
    return problems


def tab_to(page, locator, *, limit: int = 120) -> None:
    """Press Tab until ``locator`` has focus, as a keyboard user reaches it."""
    handle = locator.element_handle()
    for _ in range(limit):
        if page.evaluate("el => document.activeElement === el", handle):
            return
        page.keyboard.press("Tab")
    pytest.fail(f"{locator} is not reachable with Tab")


# --- axe over every page ------------------------------------------------------------------------


@pytest.mark.browser_context_args(bypass_csp=True)  # axe is added as an inline script
def test_every_dashboard_page_has_no_serious_axe_violation_and_fits_a_phone(
    page, live_server, log_in, coordinator, _frozen_time
):
    cancel = scenes.pre_cancel(_frozen_time)
    drafted = {DESKTOP["width"]: scenes.drafted_reply(), PHONE["width"]: scenes.drafted_reply()}
    scenes.reply_to_label()
    scenes.unmatched_email()
    scenes.undecided_check()
    case = cancel.case
    rider = scenes.far_rider(case.vanpool)
    paths = [
        "/",
        "/?kind=cancel_membership",
        f"/queue/{cancel.pk}/",
        f"/queue/{cancel.pk}/?step=confirm",
        "/cases/",
        f"/cases/{case.case_id}/",
        "/vanpools/",
        f"/vanpools/{case.vanpool.vanpool_id}/",
        f"/employees/{rider.employee_id}/",
        "/program/",
    ]
    problems: list[str] = []

    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.goto(f"{live_server.url}/login/")
        problems += problems_on(page, f"/login/ at {size['width']} px")
    log_in(page, coordinator)
    for size in (DESKTOP, PHONE):
        width = size["width"]
        page.set_viewport_size(size)
        for path in paths:
            page.goto(live_server.url + path)
            problems += problems_on(page, f"{path} at {width} px")

        # The states only htmx reaches: a refused form, a decided card, an answer.
        page.goto(f"{live_server.url}/")
        card = card_of(page, drafted[width])
        card.get_by_label("Subject").fill(" ")
        card.get_by_role("button", name="Send reply").click()
        expect(card.locator(".field-error")).to_be_visible()
        problems += problems_on(page, f"/ with a refused form at {width} px")
        card.get_by_role("button", name="Reject draft").click()
        expect(card.get_by_role("status")).to_contain_text("rejected")
        problems += problems_on(page, f"/ with a decided card at {width} px")
        page.goto(f"{live_server.url}/cases/{case.case_id}/")
        page.get_by_label("Question").fill("Why did this case fail?")
        page.get_by_role("button", name="Ask").click()
        expect(page.locator("#case-answer .answer")).to_be_focused()
        problems += problems_on(page, f"/cases/{case.case_id}/ with an answer at {width} px")

    assert not problems, "\n".join(problems)


def test_the_browser_is_given_an_icon(page, live_server, log_in, coordinator):
    log_in(page, coordinator)
    icon = page.locator("link[rel=icon]").first.get_attribute("href")
    for url in (icon, "/favicon.ico"):
        response = page.request.get(live_server.url + url)
        assert response.status == 200, url
        assert response.headers["content-type"].startswith("image/"), url


# --- A form the server refuses ------------------------------------------------------------------


def test_a_decision_the_server_refuses_shows_its_error_on_every_card_kind(
    page, live_server, log_in, coordinator, screenshots, _frozen_time
):
    cancel = scenes.pre_cancel(_frozen_time)
    drafted = scenes.drafted_reply()
    label = scenes.reply_to_label()
    stray = scenes.unmatched_email()
    undecided = scenes.undecided_check()
    log_in(page, coordinator)

    # Spaces pass the browser's `required`; the server strips them and answers 422.
    card = card_of(page, cancel)
    card.get_by_role("link", name="Approve cancellation…").click()
    reason = card.get_by_label("Reason (goes on the record)")
    expect(reason).to_be_focused()
    reason.fill("   ")
    card.get_by_label("I have checked the evidence and the checklist above.").check()
    override = card.locator("input[name=override]")
    if override.count():  # only when the supervisor's review of the case failed
        override.check()
    card.get_by_role("button", name="Cancel the seat").click()
    expect(card.locator(".field-error")).to_have_text(
        "Give the reason for cancelling: it goes on the record."
    )
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")

    card.get_by_role("link", name="Back").click()
    expect(card.get_by_role("heading", level=2)).to_be_focused()
    card.get_by_text("Reject (keep the seat)…").click()
    why = card.get_by_label("Why keep the seat?")
    why.fill("  ")
    card.get_by_role("button", name="Reject cancellation").click()
    expect(card.locator(".field-error")).to_have_text(
        "Say why the cancellation is rejected: it goes on the record."
    )
    expect(why).to_be_focused()

    card = card_of(page, drafted)
    card.get_by_label("Subject").fill("  ")
    card.get_by_role("button", name="Send reply").click()
    expect(card.locator(".field-error")).to_have_text("The email needs a subject.")
    expect(card.get_by_label("Subject")).to_be_focused()

    card = card_of(page, stray)
    card.get_by_label("Thread ID").fill("THREAD-NOPE")
    card.get_by_role("button", name="Match to thread").click()
    expect(card.locator(".field-error")).to_have_text("A thread ID looks like THREAD-1A2B3C4D.")
    expect(card.get_by_label("Thread ID")).to_be_focused()

    # Refusals that are not a form's: the person lost the right to decide meanwhile (403).
    coordinator.groups.clear()
    for action, button in ((label, "Label and continue"), (undecided, "Record rulings")):
        card = card_of(page, action)
        for group in card.locator("fieldset.ruling").all():
            group.get_by_label("pass").check()
        card.get_by_role("button", name=button).click()
        alert = card.get_by_role("alert")
        expect(alert).to_have_text("You do not have permission to do that.")
        expect(alert).to_be_focused()
    screenshots(page, "queue-refused")

    assert set(
        PendingAction.objects.filter(
            pk__in=[a.pk for a in (cancel, drafted, label, stray, undecided)]
        ).values_list("status", flat=True)
    ) == {Status.PENDING}


# --- Keyboard, focus, counts, colours -------------------------------------------------------------


def test_a_keyboard_user_cancels_a_seat_and_focus_and_counts_follow(
    page, live_server, log_in, coordinator, screenshots, _frozen_time
):
    cancel = scenes.pre_cancel(_frozen_time)
    scenes.drafted_reply()
    log_in(page, coordinator)
    chips = page.get_by_role("navigation", name="Kinds of action")
    cancel_chip = chips.get_by_role("link", name=re.compile("^Cancel membership"))
    expect(cancel_chip.locator(".chip-count")).to_have_text("1")
    expect(page.locator("#queue-count")).to_have_text("2 waiting.")
    # No live region holds the cards: a screen reader would read them all again on each swap.
    live_regions_with_cards = """() => [...document.querySelectorAll(
        '[aria-live], [role=status], [role=alert], [role=log]')].filter(
        r => r.querySelector('.qcard')).length"""
    assert page.evaluate(live_regions_with_cards) == 0

    card = card_of(page, cancel)
    tab_to(page, card.get_by_role("link", name="Approve cancellation…"))
    page.keyboard.press("Enter")
    expect(card.get_by_label("Reason (goes on the record)")).to_be_focused()
    page.keyboard.type("HR confirms the move to LA")
    page.keyboard.press("Tab")
    expect(
        card.get_by_label("I have checked the evidence and the checklist above.")
    ).to_be_focused()
    page.keyboard.press("Space")
    if card.locator("input[name=override]").count():
        page.keyboard.press("Tab")
        page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(card.get_by_role("button", name="Cancel the seat")).to_be_focused()
    page.keyboard.press("Enter")

    notice = card.get_by_role("status")
    expect(notice).to_contain_text(f"on {cancel.case.case_id} approved")
    expect(notice).to_be_focused()
    screenshots(page, "queue-decided-by-keyboard", phone=False)
    expect(cancel_chip.locator(".chip-count")).to_have_text("0")
    expect(page.locator("#queue-count")).to_have_text("1 waiting.")
    assert page.evaluate(live_regions_with_cards) == 0
    cancel.refresh_from_db()
    assert cancel.status == Status.APPROVED

    # Filtering swaps the list in place: its new count is said once, not every card.
    page.get_by_label("Kind", exact=True).select_option("review_email")
    expect(page.locator("#announce")).to_have_text("1 waiting (filtered).")
    assert page.evaluate(live_regions_with_cards) == 0


def relative_luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: str, second: str) -> float:
    """WCAG contrast ratio of two CSS ``rgb(r, g, b)`` colours."""
    lighter, darker = sorted(
        (
            relative_luminance(tuple(int(v) for v in re.findall(r"\d+", c)[:3]))
            for c in (first, second)
        ),
        reverse=True,
    )
    return (lighter + 0.05) / (darker + 0.05)


# The focused element's ring colour and the opaque background it is drawn over.
RING = """el => {
    const style = getComputedStyle(el);
    let behind = el.parentElement;
    while (behind && getComputedStyle(behind).backgroundColor.match(/rgba\\(.*, 0\\)|transparent/))
        behind = behind.parentElement;
    return {style: style.outlineStyle, width: parseFloat(style.outlineWidth),
            ring: style.outlineColor,
            behind: behind ? getComputedStyle(behind).backgroundColor : "rgb(255, 255, 255)"};
}"""


def test_the_focus_ring_and_the_success_colour_meet_wcag_contrast(
    page, live_server, log_in, coordinator, _frozen_time
):
    action = scenes.drafted_reply()
    log_in(page, coordinator)
    card = card_of(page, action)
    reached = [
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Cases"),
        page.get_by_role("navigation", name="Kinds of action").get_by_role("link", name="All"),
        card.get_by_role("link", name=action.case.case_id),
        card.get_by_label("Subject"),
        card.get_by_role("button", name="Send reply"),
    ]
    for target in reached:
        tab_to(page, target)
        ring = target.evaluate(RING)
        assert ring["style"] != "none" and ring["width"] >= 2, (target, ring)
        # WCAG 2.2 (1.4.11, 2.4.13): a focus indicator at 3:1 against what is next to it.
        assert contrast(ring["ring"], ring["behind"]) >= 3, (target, ring)

    # The success colour, on its own background, as text: 4.5:1.
    card.get_by_role("button", name="Send reply").click()
    expect(card.get_by_role("status")).to_contain_text("approved")
    for text in (card.get_by_role("status"), card.locator(".badge-approved").first):
        colours = text.evaluate(
            "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]"
        )
        assert contrast(*colours) >= 4.5, (text, colours)
