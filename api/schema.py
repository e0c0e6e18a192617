"""The OpenAPI schema says which errors each operation can answer, in the error shape.

drf-spectacular documents only the success response; clients (and schemathesis)
must also find the 4xx answers the API really gives, so every operation lists
them here with the ``Error`` body. A pending action's payload is described by
its kind's own class (``cases.kinds``), written in OpenAPI 3.0's terms here.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from rest_framework import serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable: not_found, conflict, …")
    message = serializers.CharField(help_text="For people: what went wrong.")
    # DRF's metaclass takes declared fields off the class, so this does not replace
    # Serializer.fields at run time; the stubs only see the class attribute.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        child=serializers.JSONField(),
        help_text="Validation errors only: each bad field with its problems.",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


WRITES = {"POST", "PUT", "PATCH", "DELETE"}


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    ErrorSerializer, code, direction=direction
                )
        return responses

    def _error_codes(self) -> list[str]:
        codes = ["401", "403", "405", "406", "429"]
        if self.method in WRITES:
            codes += ["400", "415"]
        elif self._is_list_view():
            codes += ["400"]  # a bad filter value or page size
        if "{" in self.path or self._is_list_view():
            codes += ["404"]  # an unknown identifier, or a page past the end
        codes += getattr(self.view, "extra_error_codes", {}).get(
            getattr(self.view, "action", ""), []
        )
        return sorted(set(codes))


class OpenApi30JsonSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema in OpenAPI 3.0's words: ``nullable`` for null, ``enum`` for const."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:  # 3.0 ignores a $ref's siblings
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        result = super().literal_schema(schema)
        if "const" in result:
            result["enum"] = [result.pop("const")]
        return result


class ReviewPayloadExtension(OpenApiSerializerExtension):
    """A review kind's payload class (cases.kinds) as its own schema component."""

    target_class = "cases.kinds.base.ReviewPayload"
    match_subclasses = True
    priority = 1  # before drf-spectacular's generic pydantic extension

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return str(self.target.__name__)

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = self.target.model_json_schema(
            ref_template="#/components/schemas/{model}",
            mode="serialization",
            schema_generator=OpenApi30JsonSchema,
        )
        for name, part in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=part
            )
            auto_schema.registry.register_on_missing(component)
        return dict(schema)
