"""The answer page's views: thin doors onto ``outreach.answer_page``.

GET and HEAD read only (scanners follow every link in a message); a POST
with Django's CSRF token stores the answer and redirects (303) to the page,
which says it was received. A link that cannot answer gets a page saying what
to do, never an error.
"""

import datetime as dt
from typing import Any

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from outreach.answer_page import (
    BY_NAME,
    Answer,
    Choice,
    Refused,
    TooManyAnswers,
    answers_given,
    choices_for,
    open_link,
    store_answer,
)
from outreach.compose import RiderFacts, rider_facts
from outreach.localize import deadline_text
from outreach.models import AnswerLink, Message
from outreach.rider_language import rider_language
from vanpools.models import Employee

LATEST_DATE_DAYS = 2 * 365


class AnswerForm(forms.Form):
    choice = forms.ChoiceField(widget=forms.RadioSelect, label=_("Your answer"))
    until = forms.DateField(
        required=False,
        label=_("Until (if it applies)"),
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    text = forms.CharField(
        required=False,
        max_length=4000,
        label=_("In your own words (if you want to add anything)"),
        widget=forms.Textarea(attrs={"rows": 5}),
    )

    def __init__(self, *args: Any, offered: list[Choice], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offered = offered
        choice = self.fields["choice"]
        assert isinstance(choice, forms.ChoiceField)
        choice.choices = [(c.name, c.label) for c in offered]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        choice = BY_NAME.get(data.get("choice") or "")
        if choice is None:
            return data
        until = data.get("until")
        if choice.takes_date and until is None:
            self.add_error("until", _("Please give the date this lasts until."))
        if until is not None and not choice.takes_date:
            data["until"] = None
        elif until is not None:
            today = timezone.localdate()
            if until < today or until > today + dt.timedelta(days=LATEST_DATE_DAYS):
                self.add_error("until", _("Please give a date from today to two years ahead."))
        if choice.needs_text and not (data.get("text") or "").strip():
            self.add_error("text", _("Please write a few words so we can help."))
        if not choice.takes_text:
            data["text"] = ""
        return data

    def answer(self) -> Answer:
        data = self.cleaned_data
        return Answer(BY_NAME[data["choice"]], data.get("text") or "", data.get("until"))


def page_language(employee: Employee) -> str:
    """The language the page speaks to this rider in: the emails' (rider_language's order)."""
    return rider_language(employee).code


@require_http_methods(["GET", "HEAD", "POST"])
def answer_page(request: HttpRequest, case_id: str, token: str) -> HttpResponse:
    try:
        link = open_link(case_id, token)
    except Refused as refused:
        return _refused(request, refused.why, refused.status)
    with translation.override(page_language(link.employee)):
        facts = rider_facts(link.thread.case, link.employee)
        offered = choices_for(facts.failed_checks)
        if request.method == "POST":
            return _answer(request, link, facts, token, offered)
        chosen = request.GET.get("choice", "")
        form = AnswerForm(
            offered=offered, initial={"choice": chosen if chosen in BY_NAME else None}
        )
        return _page(request, link, facts, form, sent=request.GET.get("sent") == "1")


def _answer(
    request: HttpRequest, link: AnswerLink, facts: RiderFacts, token: str, offered: list[Choice]
) -> HttpResponse:
    form = AnswerForm(request.POST, offered=offered)
    if not form.is_valid():
        return _page(request, link, facts, form, status=400)
    case_id = facts.case_id
    try:
        store_answer(case_id, token, form.answer())
    except Refused as refused:
        return _refused(request, refused.why, refused.status)
    except TooManyAnswers:
        return _refused(request, "too_many", 429)
    url = reverse("answer-page", args=[case_id, token]) + "?sent=1"
    return HttpResponseRedirect(url, status=303)


def _page(
    request: HttpRequest,
    link: AnswerLink,
    facts: RiderFacts,
    form: AnswerForm,
    *,
    sent: bool = False,
    status: int = 200,
) -> HttpResponse:
    given: list[Message] = answers_given(link)
    context = {
        "facts": facts,
        "form": form,
        "sent": sent,
        "given": [_given_row(message) for message in given],
        "latest": given[-1] if given else None,
        "text_choices": [c.name for c in form.offered if c.takes_text],
        "date_choices": [c.name for c in form.offered if c.takes_date],
    }
    return _private(render(request, "rider/answer/page.html", context, status=status))


def _given_row(message: Message) -> tuple[Message, Choice | None, str, str]:
    """An answer so far: its choice, the day it came and any "until" date, as the language
    writes a day (the page's deadline's format), never a locale's default or an ISO date."""
    until = message.answer.get("until") or ""
    return (
        message,
        BY_NAME.get(message.answer.get("choice", "")),
        deadline_text(timezone.localdate(message.received_at)),
        deadline_text(dt.date.fromisoformat(until)) if until else "",
    )


def _refused(request: HttpRequest, why: str, status: int) -> HttpResponse:
    context = {"why": why, "contact_email": settings.PROGRAM_CONTACT_EMAIL}
    return _private(render(request, "rider/answer/refused.html", context, status=status))


def _private(response: HttpResponse) -> HttpResponse:
    # The token is in the URL: kept out of caches, other sites' referrers and search
    # engines. "same-origin", not "no-referrer": with no referrer a browser sends
    # "Origin: null" on the form's POST, which Django's CSRF check rightly refuses.
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "same-origin"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response
