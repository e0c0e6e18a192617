"""What every queue card shares, and the shape of one kind's card.

A kind's card module (``dashboard/cards/<kind>.py``) names its payload
class, its template (``templates/cases/cards/<kind>.html``, with a ``title``
and a ``body`` partial), its decision form, and gathers what its cards show
for a page of actions in a fixed number of queries.
"""

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from django.db.models import Model, QuerySet
from django.utils import timezone

from caseloop.kinds import decision_for
from caseloop.kinds.base import Reason
from cases.desk import Holder, due_at, holder
from cases.kinds import ReviewPayload
from cases.models import PendingAction, Verification
from dashboard.case_forms import DecisionForm
from dashboard.queries import newest_verifications
from outreach.rider_language import WordsLanguage, words_language
from vanpools.scope import visible

P = TypeVar("P", bound=ReviewPayload)
_M = TypeVar("_M", bound=Model)


@dataclass
class PageReads:
    """What cards of several kinds on one page read, fetched once for the whole page."""

    # The cases whose cards show their evidence (their kind ``reads_verifications``).
    verified_cases: set[int]
    # Who reads the page: what a card shows beyond its own case (similar past
    # cases, threads a message may belong to) stays inside their scope.
    viewer: Any
    _verifications: dict[int, dict[str, Verification]] | None = field(default=None, repr=False)

    def newest_verifications(self) -> dict[int, dict[str, Verification]]:
        """{case pk: {check: its newest Verification}} for those cases: one query a page."""
        if self._verifications is None:
            cases = self.verified_cases
            self._verifications = newest_verifications(cases) if cases else {}
        return self._verifications

    def visible(self, rows: QuerySet[_M]) -> QuerySet[_M]:
        """``rows`` without those outside the viewer's scope (vanpools/scope.py)."""
        return visible(rows, self.viewer)


def hours_text(delta: dt.timedelta) -> str:
    """A duration in whole days and hours ("1 d 2 h", "5 h"; under an hour: "< 1 h")."""
    hours = int(delta.total_seconds() // 3600)
    if hours < 1:
        return "< 1 h"
    return f"{hours // 24} d {hours % 24} h" if hours >= 24 else f"{hours} h"


@dataclass
class Card:
    """Everything one queue card shows about its action; a kind's card adds its own."""

    action: PendingAction
    kind: "CardKind[Any]"
    form: DecisionForm | None = None
    notice: dict[str, str] | None = None

    @property
    def ask(self) -> ReviewPayload:
        """What the person is asked, typed by the action's kind (templates read this)."""
        return self.action.ask

    @property
    def due(self) -> dt.datetime:
        """When the card is due: its kind's SLA after it was asked for (cases.desk)."""
        return due_at(self.action)

    @property
    def overdue(self) -> bool:
        return self.due <= timezone.now()

    @property
    def due_text(self) -> str:
        """ "due in 5 h" or "overdue 1 d 2 h": the card's chip."""
        left = self.due - timezone.now()
        return (
            f"overdue {hours_text(-left)}"
            if left <= dt.timedelta(0)
            else f"due in {hours_text(left)}"
        )

    @property
    def holder(self) -> Holder | None:
        """Who said "I'm on it", while the claim holds (``claimed_by`` is joined in)."""
        return holder(self.action)

    @property
    def reason_label(self) -> str:
        """The decision's reason as its kind's list words it (the code, if no list has it)."""
        decision = decision_for(self.action)
        for reason in decision.reasons_for("approve") + decision.reasons_for("reject"):
            if reason.code == self.action.reason:
                return reason.label
        return self.action.reason

    @property
    def title_template(self) -> str:
        return f"{self.kind.template}#title"

    @property
    def body_template(self) -> str:
        return f"{self.kind.template}#body"

    @property
    def repeats_follow_the_decision(self) -> bool:
        """The emails counted on the card go where the decision sends the first one."""
        return decision_for(self.action).repeats_follow_the_decision

    @property
    def result_rows(self) -> list[tuple[str, str]]:
        """What the decision did, as label/value lines a person reads."""
        rows = []
        for key, value in (self.action.result or {}).items():
            if key == "review":
                continue  # the review's pk; its score and outcome are shown
            if isinstance(value, bool):
                value = "yes" if value else "no"
            elif value is None or value == "":
                value = "—"
            elif isinstance(value, dict):
                value = ", ".join(f"{k}: {v}" for k, v in value.items())
            rows.append((key.replace("_", " ").capitalize(), str(value)))
        return rows

    @property
    def message_body(self) -> str:
        return self.action.message.readable_text() if self.action.message is not None else ""

    @property
    def message_language(self) -> WordsLanguage | None:
        """The language of the message's words when not English: the card names it."""
        return words_language(self.action.message) if self.action.message is not None else None

    @property
    def employee_id(self) -> str:
        action = self.action
        if action.rider is not None:
            return action.rider.employee.employee_id
        return self.ask.about()


class CardKind(Generic[P]):
    """How one kind is shown on the queue. One subclass per kind."""

    payload_class: type[P]
    template: ClassVar[str]
    form_class: ClassVar[type[DecisionForm]]
    # An approval goes through a confirmation step (?step=confirm) first.
    confirms: ClassVar[bool] = False
    # Its cards show their case's evidence (``PageReads.newest_verifications``).
    reads_verifications: ClassVar[bool] = False

    def cards(self, actions: list[PendingAction], page: PageReads) -> list[Card]:
        """Cards for this kind's actions on a page: a fixed number of queries, however many.

        ``page`` holds what cards of several kinds read (fetched once for the page).
        """
        return [Card(action, self) for action in actions]

    def form(self, action: PendingAction, data: Any = None) -> DecisionForm:
        return self.form_class(data, reasons=reasons_offered(action))


def reasons_offered(action: PendingAction) -> dict[str, list[Reason]]:
    """The reasons a card offers for each decision: its kind's lists (caseloop/kinds/<kind>.py)."""
    decision = decision_for(action)
    return {
        "approve": decision.reasons_for("approve"),
        "reject": [] if decision.rejection_refused else decision.reasons_for("reject"),
    }
