"""The coordinators' dashboard: the review queue, the case list, a case, and its Q&A.

Each view serves the full page and, for htmx, only the fragment it swaps.
Decisions go through ``caseloop.decisions`` (which checks the permission
again, claims the action and writes the audit trail); a view only turns
their outcome into a card, a message and a redirect.
"""

from typing import Any, cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.timesince import timesince
from django.utils.timezone import localtime
from django.views.decorators.http import require_GET, require_POST

from caseloop.case_qa.answer import answer_question
from caseloop.decisions import (
    DECIDE_PERMISSION,
    AlreadyDecided,
    NewerReplyWaiting,
    approve,
    reject,
)
from caseloop.lessons import similar_past_cases
from cases.kinds import kind_choices
from cases.models import Case, PendingAction
from dashboard import queries
from dashboard.access import HtmxHttpRequest, dashboard_view, paginate
from dashboard.cards import build_cards, card_kind, decision_form
from dashboard.case_forms import AskForm, CardStepForm, CaseFilterForm, QueueFilterForm
from dashboard.case_qa import case_page_links


def can_decide(user: Any) -> bool:
    return bool(user.has_perm(DECIDE_PERMISSION))


def _query_without_page(form: Any) -> str:
    return urlencode({k: v for k, v in form.cleaned_data.items() if k != "page" and v})


def _bad_request(form: Any) -> HttpResponse:
    problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
    return HttpResponseBadRequest(f"Bad query parameters — {problems}", content_type="text/plain")


# --- Review queue -------------------------------------------------------------------------


@require_GET
@dashboard_view
def review_queue(request: HtmxHttpRequest) -> HttpResponse:
    form = QueueFilterForm(request.GET, sites=queries.work_sites())
    if not form.is_valid():
        return _bad_request(form)
    pending = queries.pending_actions()
    filtered = form.filter(pending)
    page = paginate(filtered, form.cleaned_data.get("page"), per_page=20)
    cards = build_cards(list(page.object_list))
    allowed = can_decide(request.user)
    for card in cards:
        card.form = decision_form(card.action) if allowed else None
    context = {
        "nav": "queue",
        "form": form,
        "page": page,
        "cards": cards,
        "query": _query_without_page(form),
        "kind_counts": _kind_counts(form, pending),
        "waiting": page.paginator.count,
        "model_backlog": queries.replies_waiting_for_the_model(),
        "can_decide": allowed,
        "next": request.get_full_path(),
    }
    template = "cases/queue.html#queue-list" if request.htmx else "cases/queue.html"
    return render(request, template, context)


def _kind_counts(form: QueueFilterForm, pending: Any) -> list[dict[str, Any]]:
    site = form.cleaned_data.get("site")
    scoped = pending.filter(case__vanpool__work_site=site) if site else pending
    counts = queries.pending_counts_by_kind(scoped)
    rows = []
    for value, label in kind_choices():
        query = urlencode({"kind": value, **({"site": site} if site else {})})
        rows.append(
            {
                "value": value,
                "label": label,
                "count": counts.get(value, 0),
                "query": query,
                "current": form.cleaned_data.get("kind") == value,
            }
        )
    return rows


@require_GET
@dashboard_view
def action_card(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One queue card on its own: the no-JS page, and the confirmation step of a cancellation."""
    step_form = CardStepForm(request.GET)
    if not step_form.is_valid():
        return _bad_request(step_form)
    action = queries.action_with_relations(pk)
    if action is None:
        raise Http404("No such pending action.")
    step = step_form.cleaned_data["step"]
    if step == "confirm" and not can_decide(request.user):
        raise PermissionDenied("Deciding needs the approve permission.")
    return _render_card(request, action, step=step)


def _render_card(
    request: HtmxHttpRequest,
    action: PendingAction,
    *,
    form: Any = None,
    notice: dict[str, str] | None = None,
    step: str = "",
    status: int = 200,
) -> HttpResponse:
    card = build_cards([action])[0]
    allowed = can_decide(request.user)
    if allowed and action.status == PendingAction.Status.PENDING:
        card.form = form if form is not None else decision_form(action)
    card.notice = notice
    if step == "confirm" and form is None and card.form is not None:
        card.form.initial = {"decision": "approve"}
    next_url = _safe_next(request)
    context = {
        "nav": "queue",
        "card": card,
        "can_decide": allowed,
        "step": step,
        "next": next_url,
    }
    template = "cases/queue.html#card" if request.htmx else "cases/action.html"
    return render(request, template, context, status=status)


def _safe_next(request: HttpRequest) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return reverse("review-queue")


@require_POST
@dashboard_view
def decide(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Approve (with edits) or reject a pending action; the card comes back with the outcome."""
    if not can_decide(request.user):
        raise PermissionDenied("Deciding needs the approve permission.")
    action = queries.action_with_relations(pk)
    if action is None:
        raise Http404("No such pending action.")
    form = decision_form(action, request.POST)
    if action.status != PendingAction.Status.PENDING:
        return _outcome(request, action, "warning", _already_text(action))
    if not form.is_valid():
        confirming = request.POST.get("decision") == "approve" and card_kind(action).confirms
        step = "confirm" if confirming else ""
        return _render_card(request, action, form=form, step=step, status=422)
    data = form.cleaned_data
    decider = cast(User, request.user)  # dashboard_view let only logged-in staff in
    try:
        if data["decision"] == "approve":
            approve(action, by=decider, note=data["note"], edits=form.edits())
        else:
            reject(action, by=decider, note=data["note"])
    except NewerReplyWaiting as exc:
        return _outcome(request, action, "warning", str(exc).capitalize() + ".")
    except AlreadyDecided:
        fresh = queries.action_with_relations(pk) or action
        return _outcome(request, fresh, "warning", _already_text(fresh))
    except ValueError as exc:  # InvalidDecision, or a ruling that does not fit the action
        form.add_error(None, str(exc))
        return _render_card(request, action, form=form, status=422)
    fresh = queries.action_with_relations(pk) or action
    return _outcome(request, fresh, "success", _done_text(fresh))


def _outcome(
    request: HtmxHttpRequest, action: PendingAction, level: str, text: str
) -> HttpResponse:
    if request.htmx:
        response = _render_card(request, action, notice={"level": level, "text": text})
        response.write(_queue_counts_out_of_band(request))
        return response
    messages.add_message(
        request, messages.SUCCESS if level == "success" else messages.WARNING, text
    )
    return redirect(_safe_next(request))


def _queue_counts_out_of_band(request: HtmxHttpRequest) -> str:
    """The queue's kind chips and count, for htmx to swap in beside the decided card.

    Only when the decision was taken on the queue page itself (HX-Current-URL),
    under the filters that page shows; other pages have no chips to update.
    """
    path, _, query = (request.htmx.current_url_abs_path or "").partition("?")
    if path != reverse("review-queue"):
        return ""
    form = QueueFilterForm(QueryDict(query), sites=queries.work_sites())
    if not form.is_valid():
        return ""
    pending = queries.pending_actions()
    context = {
        "form": form,
        "kind_counts": _kind_counts(form, pending),
        "waiting": form.filter(pending).count(),
        "oob": True,
    }
    return render_to_string("cases/queue.html#kind-chips", context, request) + render_to_string(
        "cases/queue.html#queue-count", context, request
    )


def _already_text(action: PendingAction) -> str:
    who = f" by {action.decided_by.get_username()}" if action.decided_by is not None else ""
    why = f" ({action.note})" if action.note else ""
    return (
        f"Nothing changed: this {action.get_kind_display()} was already {action.status}{who}{why}."
    )


def _done_text(action: PendingAction) -> str:
    verb = "approved" if action.status == PendingAction.Status.APPROVED else "rejected"
    where = f" on {action.case.case_id}" if action.case is not None else ""
    return f"{action.get_kind_display().capitalize()}{where} {verb}."


# --- Case list ----------------------------------------------------------------------------


@require_GET
@dashboard_view
def case_list(request: HtmxHttpRequest) -> HttpResponse:
    form = CaseFilterForm(request.GET, sites=queries.work_sites())
    if not form.is_valid():
        return _bad_request(form)
    everything = queries.cases()
    counts = queries.counts_by_status(form.filter_except_status(Case.objects.all()))
    page = paginate(
        form.filter(everything).order_by("-created_at", "-id"), form.cleaned_data.get("page")
    )
    base = {k: v for k, v in form.cleaned_data.items() if k not in ("page", "status") and v}
    status_tabs = [
        {
            "value": "",
            "label": "All",
            "count": sum(counts.values()),
            "query": urlencode(base),
        },
        *(
            {
                "value": value,
                "label": label,
                "count": counts.get(value, 0),
                "query": urlencode({**base, "status": value}),
            }
            for value, label in Case.Status.choices
        ),
    ]
    context = {
        "nav": "cases",
        "form": form,
        "page": page,
        "query": _query_without_page(form),
        "status_tabs": status_tabs,
        "current_status": form.cleaned_data.get("status") or "",
    }
    template = "cases/case_list.html#case-table" if request.htmx else "cases/case_list.html"
    return render(request, template, context)


# --- Case page ----------------------------------------------------------------------------


@require_GET
@dashboard_view
def case_detail(request: HttpRequest, case_id: str) -> HttpResponse:
    records = queries.case_records(case_id)
    if records is None:
        raise Http404("No such case.")
    return render(request, "cases/case_detail.html", _case_context(request, records))


def _case_context(request: HttpRequest, records: queries.CaseRecords, **extra: Any) -> dict:
    case = records.case
    flagged = set(records.flagged)
    evidence = []
    for verification in sorted(records.latest.values(), key=lambda v: v.check_type):
        items = queries.evidence_items(verification)
        shown = [
            item
            for item in items
            if item.item.get("employee_id") in flagged
            and not (item.type == "shift_day" and item.item.get("matches"))
        ]
        others = [item for item in items if item.item.get("employee_id") not in flagged]
        evidence.append({"verification": verification, "shown": shown, "others": others})
    older = [v for v in records.verifications if records.latest.get(v.check_type) != v]
    emails = [{"message": m, "body": m.readable_text()} for m in records.messages]
    flags = [
        {
            "employee_id": emp,
            "employee": records.employees.get(emp),
            "checks": sorted(checks.items()),
        }
        for emp, checks in sorted(case.meta.get("rider_flags", {}).items())
    ]
    return {
        "nav": "cases",
        "case": case,
        "summary": summary_line(case),
        "records": records,
        "evidence": evidence,
        "older_verifications": older,
        "emails": emails,
        "flags": flags,
        "ask_form": extra.pop("ask_form", None) or AskForm(),
        "can_decide": can_decide(request.user),
        "similar": similar_past_cases(case),
        **extra,
    }


REASON_TEXT: dict[str, str] = {
    Case.Reason.SHIFT: "Shift mismatch",
    Case.Reason.LOCATION: "Location mismatch",
    Case.Reason.BOTH: "Shift and location mismatch",
    Case.Reason.UNKNOWN: "A check the rules could not decide",
}


def summary_line(case: Case) -> str:
    """The case in one line: what, where, who, since when, what is due."""
    flagged = sorted(case.meta.get("rider_flags", {}))
    parts = [
        f"{REASON_TEXT.get(case.reason, 'No finding recorded')} on {case.vanpool.name} "
        f"({case.vanpool.work_site})",
        f"{len(flagged)} rider{'s' if len(flagged) != 1 else ''} flagged"
        + (f" ({', '.join(flagged)})" if flagged else ""),
        f"opened {timesince(case.created_at)} ago",
    ]
    if case.reply_deadline:
        parts.append(f"replies due {localtime(case.reply_deadline):%a %d %b, %H:%M}")
    parts.append(f"{case.reaudit_count} re-audit{'s' if case.reaudit_count != 1 else ''}")
    if case.closed_at:
        parts.append(f"closed {case.get_outcome_display()} {localtime(case.closed_at):%Y-%m-%d}")
    return " · ".join(parts) + "."


@require_POST
@dashboard_view
def case_ask(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    """Answer a question from the case's records: the answer fragment, or the whole page."""
    records = queries.case_records(case_id)
    if records is None:
        raise Http404("No such case.")
    form = AskForm(request.POST)
    answer = None
    status = 200
    if form.is_valid():
        question = form.cleaned_data["question"]
        answer = answer_question(records, question, link=case_page_links(records.case.case_id))
    else:
        status = 422
    if request.htmx:
        context = {"case": records.case, "ask_form": form, "answer": answer}
        return render(request, "cases/case_detail.html#answer", context, status=status)
    context = _case_context(request, records, ask_form=form, answer=answer)
    return render(request, "cases/case_detail.html", context, status=status)
