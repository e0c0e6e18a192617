"""What one evaluated item produced, whatever its kind: the result every metric reads."""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


class EvalFileError(ValueError):
    """The file is not in the evaluation format; the message says which line and why."""


@dataclass
class Usage:
    """What the model client was asked during one case (0 everywhere on the rules backend)."""

    model_calls: int = 0
    model_errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0
    call_latencies_ms: list[int] = field(default_factory=list)  # one a call, for percentiles

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


@dataclass
class Checked:
    """One text an agent wrote from records, and whether its claims are in the evidence."""

    what: str  # "shift reasoning", "answer to EMP-1003", …
    text: str
    faithful: bool
    unsupported: list[str] = field(default_factory=list)
    clarity: int | None = None  # 1-5 from the judge model, when one is configured


@dataclass
class CaseResult:
    id: str
    kind: str
    expected: dict[str, Any]
    got: dict[str, Any]
    correct: bool
    split: str = "dev"
    mix: str = "arrival"
    injection: bool = False
    # Provenance, carried from the item (docs/evaluation.md): who wrote it, and
    # whether its label was scored once on a first run before any rule met it.
    source: str = ""
    first_run: bool | None = None
    legacy_id: str = ""
    # A reply's language (ISO 639-1; "und" when too short to tell): figures per language.
    language: str = ""
    usage: Usage = field(default_factory=Usage)
    wall_ms: int = 0
    checked: list[Checked] = field(default_factory=list)
