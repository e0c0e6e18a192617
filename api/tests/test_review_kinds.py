"""The API describes and serves each pending action's payload with its kind's own class."""

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from cases.kinds import PAYLOADS
from cases.lifecycle import request_review
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
