"""The response_format a structured call asks for: a pydantic schema as strict JSON schema.

Built once per schema; optionally with upper bounds on free strings and lists,
so a grammar-constrained local model has to finish its answer.
"""

import functools
from typing import Any

from openai.lib import type_to_response_format_param
from pydantic import BaseModel


@functools.cache
def response_format_for(schema: type[BaseModel]) -> Any:
    """The strict json_schema response_format for a pydantic model, built once per schema.

    The SDK's converter makes every property required and forbids extra keys,
    which strict structured outputs demand.
    """
    return type_to_response_format_param(schema)


# Keywords that already bound a string: an enum, a constant, a pattern or a format.
_SHAPED_STRING = ("enum", "const", "pattern", "format")


def bounded_schema(schema: Any, *, max_chars: int, max_items: int) -> Any:
    """A copy of a JSON schema whose free strings and lists have an upper bound.

    A grammar-constrained local model can keep writing one reason or repeating
    one list entry until the token limit cuts it, which leaves nothing usable.
    ``maxLength`` and ``maxItems`` become part of the server's grammar, so the
    answer has to end. Existing tighter bounds are kept.
    """
    if isinstance(schema, list):
        return [bounded_schema(item, max_chars=max_chars, max_items=max_items) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {
        key: bounded_schema(value, max_chars=max_chars, max_items=max_items)
        for key, value in schema.items()
    }
    if bounded.get("type") == "string" and not any(key in bounded for key in _SHAPED_STRING):
        bounded["maxLength"] = min(bounded.get("maxLength", max_chars), max_chars)
    if bounded.get("type") == "array":
        bounded["maxItems"] = min(bounded.get("maxItems", max_items), max_items)
    return bounded


@functools.cache
def bounded_response_format_for(schema: type[BaseModel], max_chars: int, max_items: int) -> Any:
    strict = response_format_for(schema)
    return {
        **strict,
        "json_schema": {
            **strict["json_schema"],
            "schema": bounded_schema(
                strict["json_schema"]["schema"], max_chars=max_chars, max_items=max_items
            ),
        },
    }
