"""Each review kind is one class per layer, found through a registry; nothing else branches on it.

The registries: ``cases.kinds.PAYLOADS`` (what is asked), ``caseloop.kinds.DECISIONS``
(what deciding does), ``dashboard.cards.CARDS`` (how it is shown, with a template).
"""

import ast
import re
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.template.loader import get_template
from django.test import override_settings
from django.urls import reverse

from caseloop import decisions
from caseloop import kinds as decision_registry
from caseloop.kinds import DECISIONS, KindDecision, decision_for
from caseloop.kinds.base import claim, record_result
from cases import kinds as payload_registry
from cases.kinds import PAYLOADS, ReviewPayload, UnknownKind
from cases.lifecycle import request_review
from cases.models import PendingAction
from dashboard import cards as card_registry
from dashboard.cards import CARDS, CardKind, build_cards, card_kind
from dashboard.case_forms import DecisionForm
from tests.factories import CaseFactory, PendingActionFactory

ROOT = Path(settings.BASE_DIR)
KIND_IDS = [payload.kind for payload in PAYLOADS]
# Where a kind may be named as a string, compared, or its stored JSON read by key.
KIND_MODULES = ("cases/kinds/", "caseloop/kinds/", "dashboard/cards/")
# The model itself: its Kind enum is built from the registry, ``ask`` reads the JSON.
MODEL = "cases/models.py"
PRODUCT = [
    "poolpatrol", "vanpools", "cases", "agents", "audit", "outreach", "caseloop", "dashboard",
    "api", "evals",
]  # fmt: skip


@pytest.mark.parametrize("payload", PAYLOADS, ids=KIND_IDS)
def test_every_kind_has_a_payload_a_decision_module_a_card_module_and_a_template(payload):
    decision = DECISIONS[payload]
    card = CARDS[payload]
    assert decision.payload_class is payload and card.payload_class is payload
    assert decision.__module__ == f"caseloop.kinds.{payload.kind}"
    assert card.__module__ == f"dashboard.cards.{payload.kind}"
    assert payload.__module__ == f"cases.kinds.{payload.kind}"
    assert card.template == f"cases/cards/{payload.kind}.html"
    for part in ("title", "body"):
        get_template(f"{card.template}#{part}")  # TemplateDoesNotExist if a part is missing
    assert payload.kind in PendingAction.Kind.values
    assert len(payload.kind) <= PendingAction._meta.get_field("kind").max_length


def test_the_registries_hold_the_same_kinds():
    assert set(DECISIONS) == set(CARDS) == set(PAYLOADS)
    assert len({payload.kind for payload in PAYLOADS}) == len(PAYLOADS)


@pytest.mark.django_db
@pytest.mark.parametrize("payload", PAYLOADS, ids=KIND_IDS)
def test_every_kinds_card_shows_its_sample_on_the_queue_and_on_its_own_page(
    payload, client, coordinator
):
    case = CaseFactory()
    action, _ = request_review(
        case, payload.sample("EMP-7"), actor="outreach", note="n", hold_in=None
    )
    client.force_login(coordinator)
    queue = client.get(reverse("review-queue"))
    page = client.get(reverse("action-card", args=[action.pk]))
    assert queue.status_code == page.status_code == 200
    assert f'id="action-{action.pk}"' in queue.content.decode()
    assert f'action="{reverse("action-decide", args=[action.pk])}"' in page.content.decode()


@pytest.mark.django_db
def test_an_action_of_an_unknown_kind_raises_in_every_layer():
    action = PendingActionFactory(kind="renew_permit")
    with pytest.raises(UnknownKind):
        decision_for(action)
    with pytest.raises(UnknownKind):
        card_kind(action)
    with pytest.raises(UnknownKind):
        build_cards([action])


# --- Nothing outside a kind's own modules branches on a kind --------------------------------


def product_modules() -> list[Path]:
    return [
        path
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if "/tests/" not in path.as_posix() and "/migrations/" not in path.as_posix()
    ]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.add(id(first.value))
    return found


def _all_names(tree: ast.Module) -> set[int]:
    """The strings of ``__all__``: names of functions, not kinds."""
    found: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            found |= {id(n) for n in ast.walk(node.value)}
    return found


def _names_a_kind(node: ast.expr, kind_classes: set[str]) -> bool:
    """A review kind as a value: its string, ``PendingAction.Kind.X``, or ``SomeKind.kind``."""
    if isinstance(node, ast.Constant) and node.value in KIND_IDS:
        return True
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        return node.value.attr == "Kind" and getattr(node.value.value, "id", "") == "PendingAction"
    if isinstance(node, ast.Attribute) and node.attr == "kind":
        return getattr(node.value, "id", "") in kind_classes
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_kind(item, kind_classes) for item in node.elts)
    return False


def branches_on_a_kind(source: str, *, model: bool = False) -> list[str]:
    """Where code outside the kinds' modules names, compares or reads a kind's raw payload."""
    tree = ast.parse(source)
    kind_classes = {payload.__name__ for payload in PAYLOADS}
    skip = _docstring_nodes(tree) | _all_names(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "Kind"
            and getattr(node.value, "id", "") == "PendingAction"
            and not model
        ):
            found.append(f"{line}: PendingAction.Kind")
        elif isinstance(node, ast.Constant) and node.value in KIND_IDS and id(node) not in skip:
            found.append(f"{line}: the kind {node.value!r} as a string")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            on_kind = any(
                isinstance(s, ast.Attribute)
                and s.attr == "kind"
                and getattr(s.value, "id", "") not in kind_classes
                for s in sides
            )
            if on_kind and any(_names_a_kind(s, kind_classes) for s in sides):
                found.append(f"{line}: a comparison of .kind with a kind")
        elif isinstance(node, ast.Subscript | ast.Attribute) and not model:
            inner = node.value
            reads_key = isinstance(node, ast.Subscript) or node.attr in ("get", "items", "keys")
            if reads_key and isinstance(inner, ast.Attribute) and inner.attr == "payload":
                found.append(f"{line}: the stored payload read by key (use .ask)")
    return found


def test_nothing_outside_a_kinds_own_modules_branches_on_a_kind():
    offenders = {}
    for path in product_modules():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(KIND_MODULES):
            continue
        found = branches_on_a_kind(path.read_text(), model=relative == MODEL)
        if found:
            offenders[relative] = found
    assert offenders == {}


BRANCHES = {
    "if a.kind == 'cancel_membership': pass": "as a string",
    "if a.kind == PendingAction.Kind.LABEL_REPLY: pass": "PendingAction.Kind",
    "x = [a for a in rows if a.kind in (CancelMembership.kind, 'x')]": "comparison",
    "who = action.payload.get('employee_id')": "read by key",
    "who = action.payload['employee_id']": "read by key",
    "handlers = {'review_email': send}": "as a string",
}


@pytest.mark.parametrize(("source", "said"), BRANCHES.items(), ids=list(BRANCHES.values()))
def test_the_branch_check_finds_each_way_of_branching(source, said):
    assert said in " ".join(branches_on_a_kind(source))


def test_the_branch_check_lets_code_name_a_kinds_class():
    allowed = """
'''A docstring may say cancel_membership.'''
__all__ = ["decide_verification"]
pending = PendingAction.objects.of(CancelMembership).filter(case=case)
ask = action.ask_as(LabelReply)
who = ask.employee_id
message.kind == Message.Kind.REPLY
counted = event["action"] == CancelMembership.kind
"""
    assert branches_on_a_kind(allowed) == []


TEMPLATES = ROOT / "templates"


def test_no_template_reads_a_payload_directly():
    readers = {
        path.relative_to(TEMPLATES).as_posix(): [
            n + 1 for n, line in enumerate(path.read_text().splitlines()) if "payload" in line
        ]
        for path in sorted(TEMPLATES.rglob("*"))
        if path.is_file()
    }
    assert {name: lines for name, lines in readers.items() if lines} == {}


def test_no_template_outside_the_kinds_own_branches_on_a_kind():
    kind_words = re.compile(r"\b(" + "|".join(KIND_IDS) + r")\b")
    branching = {
        path.relative_to(TEMPLATES).as_posix()
        for path in TEMPLATES.rglob("*.html")
        if not path.relative_to(TEMPLATES).as_posix().startswith("cases/cards/")
        and kind_words.search(path.read_text())
    }
    assert branching == set()


# --- Adding a kind: one class per layer, a template, a registry entry each -------------------


class RenewPermit(ReviewPayload):
    """The worked example of docs/design.md: a rider's parking permit to renew."""

    kind: ClassVar[str] = "renew_permit"
    label: ClassVar[str] = "renew parking permit"
    asked_with: ClassVar[frozenset[str]] = frozenset({"employee_id", "permit"})

    employee_id: str = ""
    permit: str = ""

    def about(self) -> str:
        return self.employee_id

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(employee_id=employee_id, permit="P-100")


class RenewPermitDecision(KindDecision[RenewPermit]):
    payload_class = RenewPermit

    def approve(
        self, action: PendingAction, ask: RenewPermit, *, by: User, note: str, edits: dict[str, Any]
    ) -> None:
        claim(action, PendingAction.Status.APPROVED, by, note)
        record_result(action, {"renewed": ask.permit})


class RenewPermitCard(CardKind[RenewPermit]):
    payload_class = RenewPermit
    template: ClassVar[str] = "cases/cards/renew_permit.html"
    form_class: ClassVar[type[DecisionForm]] = DecisionForm


RENEW_PERMIT_HTML = """{% load partials %}
{% partialdef title %}Renew permit {{ card.ask.permit }} of {{ card.employee_id }}
{% endpartialdef %}
{% partialdef body %}<form method="post" action="{% url 'action-decide' action.pk %}">
<button name="decision" value="approve">Renew</button></form>{% endpartialdef %}
"""


@pytest.fixture
def renew_permit(monkeypatch, tmp_path):
    """The new kind registered in each layer, its template in a templates folder."""
    (tmp_path / "cases" / "cards").mkdir(parents=True)
    (tmp_path / "cases" / "cards" / "renew_permit.html").write_text(RENEW_PERMIT_HTML)
    monkeypatch.setattr(payload_registry, "PAYLOADS", (*PAYLOADS, RenewPermit))
    monkeypatch.setattr(payload_registry, "_BY_KIND", {p.kind: p for p in (*PAYLOADS, RenewPermit)})
    monkeypatch.setitem(decision_registry.DECISIONS, RenewPermit, RenewPermitDecision())
    monkeypatch.setitem(card_registry.CARDS, RenewPermit, RenewPermitCard())
    engines = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], tmp_path]}]
    with override_settings(TEMPLATES=engines):
        yield


@pytest.mark.django_db
def test_a_new_kind_is_asked_shown_and_decided_with_nothing_else_changed(
    renew_permit, client, coordinator
):
    case = CaseFactory()
    action, _ = request_review(case, RenewPermit.sample("EMP-7"), actor="permits", note="due")
    client.force_login(coordinator)

    queue = client.get(reverse("review-queue") + "?kind=renew_permit").content.decode()
    assert "Renew permit P-100 of EMP-7" in queue and "Renew parking permit" in queue

    decided = decisions.approve(action, by=coordinator)
    assert (decided.status, decided.result) == ("approved", {"renewed": "P-100"})
