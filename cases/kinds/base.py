"""What every review kind's payload shares: the typed record of what a person is asked.

A PendingAction stores its payload as JSON; the class of its kind reads it
back (``PendingAction.ask``) and checks it when it is asked for
(``cases.lifecycle.request_review``). Every field has a default, so a payload
stored by an older version that lacks a newer field still reads; what an ask
must say is ``asked_with``, checked only when asking.
"""

import datetime as dt
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

# The validation context request_review passes: only an ask must say everything.
ASKING = {"asking": True}


class InvalidPayload(ValueError):
    """A payload that does not fit its kind; nothing was stored."""


class ReviewPayload(BaseModel):
    """The payload of one review kind. Subclasses set ``kind`` and ``label`` and add fields."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        # Read back, every field is there (defaults included): the API schema says so.
        json_schema_serialization_defaults_required=True,
    )

    kind: ClassVar[str]
    label: ClassVar[str]
    # Fields an ask must set; a stored payload may lack them (read with their defaults).
    asked_with: ClassVar[frozenset[str]] = frozenset()
    # A case status this kind is decided in only: a card left waiting when the
    # case moves on is superseded (``lifecycle.transition``). None: any status.
    decided_only_in: ClassVar[str | None] = None

    # Later asks with the same collapse key, counted on this card (request_review).
    repeats: int = Field(default=0, ge=0)
    repeat_messages: list[str] = Field(default_factory=list)
    last_repeat_at: dt.datetime | None = None

    @model_validator(mode="after")
    def _says_what_an_ask_must(self, info: ValidationInfo) -> Self:
        context = info.context if isinstance(info.context, dict) else {}
        missing = self.asked_with - self.model_fields_set
        if context.get("asking") and missing:
            raise ValueError(f"asking for {self.kind} needs {', '.join(sorted(missing))}")
        return self

    def about(self) -> str:
        """The employee ID of the one rider this ask is about; '' when it names none."""
        return ""

    def employee_ids(self) -> frozenset[str]:
        """Every rider this ask is about."""
        return frozenset({self.about()} - {""})

    def stored(self) -> dict[str, Any]:
        """The JSON kept on the PendingAction: what the asker said, in the keys it is read by."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def shown(self) -> dict[str, Any]:
        """Every field with its value, defaults included (the API's representation)."""
        return self.model_dump(mode="json", by_alias=True)

    def counted_repeat(self, message_id: str, *, at: dt.datetime, listed_at_most: int) -> Self:
        """This card with one more ask counted on it (its message listed up to a limit)."""
        listed = list(self.repeat_messages)
        if message_id and message_id not in listed and len(listed) < listed_at_most:
            listed.append(message_id)
        return type(self).model_validate(
            {
                **self.stored(),
                "repeats": self.repeats + 1,
                "repeat_messages": listed,
                "last_repeat_at": at.isoformat(),
            }
        )

    @classmethod
    def read(cls, stored: object) -> Self:
        """A stored payload as this kind's class: keys no version reads any more are dropped."""
        return cls.model_validate(stored if stored is not None else {}, extra="ignore")

    @classmethod
    def checked_for_asking(cls, payload: "ReviewPayload") -> Self:
        """``payload`` validated again as an ask (built with ``model_construct``, it never was)."""
        if type(payload) is not cls:
            raise InvalidPayload(f"a {type(payload).__name__} is not a {cls.__name__}")
        # Python mode, no warnings: a value of the wrong type is the validator's to name.
        given = payload.model_dump(by_alias=True, exclude_unset=True, warnings=False)
        try:
            return cls.model_validate(given, context=ASKING)
        except ValueError as exc:
            raise InvalidPayload(f"{cls.kind}: {exc}") from exc

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        """A typical ask of this kind about ``employee_id``: API examples, benches, tests."""
        raise NotImplementedError(f"{cls.__name__} gives no sample")
