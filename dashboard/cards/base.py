"""What every queue card shares, and the shape of one kind's card.

A kind's card module (``dashboard/cards/<kind>.py``) names its payload
class, its template (``templates/cases/cards/<kind>.html``, with a ``title``
and a ``body`` partial), its decision form, and gathers what its cards show
for a page of actions in a fixed number of queries.
"""

from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from caseloop.kinds import decision_for
from cases.kinds import ReviewPayload
from cases.models import PendingAction, Verification
from dashboard.case_forms import DecisionForm
from dashboard.queries import newest_verifications

P = TypeVar("P", bound=ReviewPayload)


@dataclass
class PageReads:
    """What cards of several kinds on one page read, fetched once for the whole page."""

    # The cases whose cards show their evidence (their kind ``reads_verifications``).
    verified_cases: set[int]
    _verifications: dict[int, dict[str, Verification]] | None = field(default=None, repr=False)

    def newest_verifications(self) -> dict[int, dict[str, Verification]]:
        """{case pk: {check: its newest Verification}} for those cases: one query a page."""
        if self._verifications is None:
            cases = self.verified_cases
            self._verifications = newest_verifications(cases) if cases else {}
        return self._verifications


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
        return self.form_class(data)
