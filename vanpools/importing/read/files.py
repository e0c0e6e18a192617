"""The export's bytes as text, and JSON text as data; what cannot be read stops the import."""

import json
from pathlib import Path
from typing import Any

from vanpools.importing.result import fail


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        fail(str(path), "no such file")
    except OSError as exc:
        fail(str(path), f"cannot read the file: {exc.strerror or exc}")
    try:
        text = raw.decode("utf-8-sig")  # Excel's "CSV UTF-8" starts with a BOM
    except UnicodeDecodeError as exc:
        fail(str(path), f"not UTF-8 text (byte {exc.start + 1}); save it as CSV UTF-8")
    if not text.strip():
        fail(str(path), "the file is empty")
    return text


def decode_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"line {exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})")
