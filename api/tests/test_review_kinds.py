"""The API describes and serves each pending action's payload with its kind's own class."""

from typing import Annotated, Any, ClassVar, Self

import jsonschema
import pytest
from django.contrib.auth.models import User
from drf_spectacular.generators import SchemaGenerator
from pydantic import StringConstraints
from rest_framework.test import APIClient

import cases.kinds as payload_registry
from caseloop.kinds import DECISIONS, KindDecision
from caseloop.kinds.base import KindEdits, claim, record_result
from cases.kinds import PAYLOADS, ReviewEmail, ReviewPayload
from cases.lifecycle import request_review
from cases.models import PendingAction
from tests.factories import CaseFactory, PendingActionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_schema_shows_every_payload_class_as_the_payload_of_a_pending_action(schema):
    components = schema["components"]["schemas"]
    payload = components["PendingAction"]["properties"]["payload"]
    assert payload["allOf"] == [{"$ref": "#/components/schemas/ReviewPayload"}]
    one_of = [ref["$ref"].rsplit("/", 1)[1] for ref in components["ReviewPayload"]["oneOf"]]
    assert one_of == [p.__name__ for p in PAYLOADS]
    for kind in PAYLOADS:
        shown = components[kind.__name__]
        fields = {field.serialization_alias or name for name, field in kind.model_fields.items()}
        assert set(shown["properties"]) == fields == set(shown["required"])
        assert shown["additionalProperties"] is False
    assert components["MatchInbound"]["properties"]["from"]["type"] == "string"


def as_json_schema(part):
    """OpenAPI 3.0's ``nullable`` in JSON Schema's words, to validate a body with jsonschema."""
    if isinstance(part, list):
        return [as_json_schema(item) for item in part]
    if not isinstance(part, dict):
        return part
    converted = {key: as_json_schema(value) for key, value in part.items() if key != "nullable"}
    return {"anyOf": [converted, {"type": "null"}]} if part.get("nullable") else converted


@pytest.fixture
def api(coordinator):
    client = APIClient()
    client.force_authenticate(coordinator)
    return client


@pytest.mark.parametrize("kind", PAYLOADS, ids=[p.kind for p in PAYLOADS])
def test_a_pending_actions_payload_matches_its_kinds_schema_and_no_other(kind, api, schema):
    action, _ = request_review(CaseFactory(), kind.sample("EMP-7"), actor="outreach", note="n")
    body = api.get(f"/api/pending-actions/{action.pk}").json()

    assert body["kind"] == kind.kind and body["payload"] == kind.sample("EMP-7").shown()
    components = as_json_schema(schema["components"])
    own = {"$ref": f"#/components/schemas/{kind.__name__}", "components": components}
    jsonschema.validate(body["payload"], own)
    # ... and exactly one of the kinds' schemas, as the payload's oneOf says.
    any_kind = {"$ref": "#/components/schemas/ReviewPayload", "components": components}
    jsonschema.validate(body["payload"], any_kind)


def test_a_legacy_payload_is_served_whole(api):
    action = PendingActionFactory(kind="label_reply", payload={"suggested_bucket": "question"})
    payload = api.get(f"/api/pending-actions/{action.pk}").json()["payload"]
    assert payload["suggested_bucket"] == "question"
    assert (payload["confidence"], payload["holding_reply"], payload["repeats"]) == (None, None, 0)


# --- An approval's edits: each kind's own class ----------------------------------------------


def test_the_schema_shows_each_kinds_edits_class_as_the_edits_of_an_approval(schema):
    components = schema["components"]["schemas"]
    edits = components["ApproveRequest"]["properties"]["edits"]
    named = [ref["$ref"].rsplit("/", 1)[1] for ref in edits["anyOf"]]
    # A kind approved as asked (its edits class has no field) adds no alternative.
    taking = [d for d in DECISIONS.values() if d.edits_class.model_fields]
    assert [d.payload_class.kind for d in DECISIONS.values() if d not in taking] == [
        "review_vanpool"
    ]
    assert named == [f"{d.edits_class.__name__}Request" for d in taking]
    for decision in taking:
        shown = components[f"{decision.edits_class.__name__}Request"]
        # Each field optional, none null, none defaulted in the schema.
        assert set(shown["properties"]) == set(decision.edits_class.model_fields)
        assert "required" not in shown
        assert not any("default" in part for part in shown["properties"].values())


class StampEdits(KindEdits):
    stamp: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=5)] = ""


class Stamp(ReviewPayload):
    """A kind that takes an edit of its own: the stamp a person puts on a form."""

    kind: ClassVar[str] = "stamp"
    label: ClassVar[str] = "stamp a form"
    asked_with: ClassVar[frozenset[str]] = frozenset({"employee_id"})

    employee_id: str = ""

    def about(self) -> str:
        return self.employee_id

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(employee_id=employee_id)


class StampDecision(KindDecision[Stamp]):
    payload_class = Stamp
    edits_class: ClassVar[type[KindEdits]] = StampEdits

    def approve(
        self, action: PendingAction, ask: Stamp, *, by: User, note: str, edits: dict[str, Any]
    ) -> None:
        claim(action, PendingAction.Status.APPROVED, by, note)
        record_result(action, {"stamp": edits["stamp"]})


@pytest.fixture
def stamp_kind(monkeypatch):
    """The new kind in the payloads' and the decisions' registries."""
    monkeypatch.setattr(payload_registry, "PAYLOADS", (*PAYLOADS, Stamp))
    monkeypatch.setattr(payload_registry, "_BY_KIND", {p.kind: p for p in (*PAYLOADS, Stamp)})
    monkeypatch.setitem(DECISIONS, Stamp, StampDecision())


def test_a_new_kinds_edits_class_is_its_api_schema_and_checks_its_approvals(stamp_kind, api):
    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    edits = components["ApproveRequest"]["properties"]["edits"]
    assert {"$ref": "#/components/schemas/StampEditsRequest"} in edits["anyOf"]
    assert set(components["StampEditsRequest"]["properties"]) == {"stamp"}

    action, _ = request_review(CaseFactory(), Stamp.sample("EMP-7"), actor="forms", note="n")
    url = f"/api/pending-actions/{action.pk}/approve"
    refused = api.post(url, {"edits": {"stamp": "too long"}}, format="json")
    assert refused.status_code == 400
    assert list(refused.json()["error"]["fields"]["edits"]) == ["stamp"]
    action.refresh_from_db()
    assert action.status == "pending"

    # Another kind's edit is not this kind's: dropped, as the kind reads only its own.
    approved = api.post(url, {"edits": {"stamp": " OK ", "bucket": "question"}}, format="json")
    assert approved.status_code == 200, approved.content[:300]
    assert approved.json()["result"] == {"stamp": "OK"}


@pytest.mark.parametrize(
    ("edits", "field"),
    [
        ({"subject": "Line one\nline two"}, "subject"),
        ({"subject": None}, "subject"),
        ({"text": "   "}, "text"),
    ],
)
def test_a_drafted_replys_edits_are_checked_by_its_kinds_class(api, edits, field):
    action, _ = request_review(
        CaseFactory(), ReviewEmail.sample("EMP-7"), actor="outreach", note="n"
    )
    response = api.post(
        f"/api/pending-actions/{action.pk}/approve", {"edits": edits}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]["edits"]) == [field]
    action.refresh_from_db()
    assert action.status == "pending"
