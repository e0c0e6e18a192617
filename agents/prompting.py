"""Prompts and the data given with them: versioned prompt files, record data as a fenced block."""

import dataclasses
import datetime as dt
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_VERSION = re.compile(r"v[0-9]+\Z")


@dataclass(frozen=True)
class Prompt:
    text: str
    version: str  # "location.v1": what AgentRun.prompt_version records


@functools.cache
def load_prompt(name: str, version: str) -> Prompt:
    """agents/prompts/<name>.<version>.md; a changed prompt is a new file, never an edit."""
    if not _NAME.match(name) or not _VERSION.match(version):
        raise ValueError(f"bad prompt name or version: {name!r} {version!r}")
    path = PROMPTS_DIR / f"{name}.{version}.md"
    if not path.is_file():
        raise LookupError(f"no prompt {name}.{version} in {PROMPTS_DIR}")
    return Prompt(text=path.read_text(encoding="utf-8").strip(), version=f"{name}.{version}")


def data_block(tag: str, payload: object) -> str:
    """Record data as one JSON document between <tag> markers (principle 5).

    Every "<" is written as \\u003c, which is the same JSON, so text copied from
    an email cannot close the block early and pose as instructions.
    """
    if not _NAME.match(tag):
        raise ValueError(f"bad block tag: {tag!r}")
    body = json.dumps(payload, default=_jsonable, ensure_ascii=False, indent=2, sort_keys=True)
    body = body.replace("<", "\\u003c")
    return f"<{tag}>\n{body}\n</{tag}>"


def _jsonable(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)  # Decimal and friends
