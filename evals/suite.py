"""Every labelled file in evals/data against its own target (``evaluate --suite``).

``targets.toml`` names each file with a floor (``min``) or a ceiling (``max``)
per metric. A file in the data folder without an entry, or an entry whose file
is missing, is an error: every labelled file runs in CI.
"""

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
TARGETS_FILE = "targets.toml"
# The learned reader's grouped held-out figures (no file: read by cross-validation).
READER_TABLE = "reader"


class SuiteError(ValueError):
    """The targets file and the data folder do not agree; the message says how."""


@dataclass(frozen=True)
class FileTarget:
    name: str  # "shift.hr-text"
    path: Path
    floors: dict[str, float]
    ceilings: dict[str, float]
    why_lower: str = ""
    # Bounds per language of the file's replies: {"zh": ({floors}, {ceilings})}.
    languages: dict[str, tuple[dict[str, float], dict[str, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    target: FileTarget
    metric: str
    value: float | None
    bound: str  # "≥ 0.98" or "≤ 0"
    met: bool


def read_targets(data_dir: Path = DATA_DIR) -> list[FileTarget]:
    path = data_dir / TARGETS_FILE
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(f"{path}: {exc}") from None
    targets = [
        _file_target(f"{kind}.{name}", entry, data_dir)
        for kind, entries in document.items()
        if kind != READER_TABLE
        for name, entry in entries.items()
    ]
    _check_every_file_has_a_target(targets, data_dir)
    return targets


def read_reader_targets(data_dir: Path = DATA_DIR) -> dict[str, tuple[dict, dict]]:
    """Per-language bounds on the reader's grouped held-out figures ([reader.held-out])."""
    table = _held_out_table(data_dir).get("language", {})
    return {
        language: (dict(bounds.get("min", {})), dict(bounds.get("max", {})))
        for language, bounds in table.items()
    }


def read_reader_bounds(data_dir: Path = DATA_DIR) -> tuple[dict, dict]:
    """Bounds on the reader's grouped held-out figures over every language ([reader.held-out])."""
    table = _held_out_table(data_dir)
    floors, ceilings = dict(table.get("min", {})), dict(table.get("max", {}))
    if not floors or not ceilings:
        raise SuiteError(f"{TARGETS_FILE} [{READER_TABLE}.held-out]: give its min and max")
    return floors, ceilings


def _held_out_table(data_dir: Path) -> dict[str, Any]:
    path = data_dir / TARGETS_FILE
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    table: dict[str, Any] = document.get(READER_TABLE, {}).get("held-out", {})
    return table


def _file_target(name: str, entry: dict[str, Any], data_dir: Path) -> FileTarget:
    if "file" not in entry:
        raise SuiteError(f'{TARGETS_FILE} [{name}]: needs file = "<kind>/<name>.jsonl"')
    path = data_dir / entry["file"]
    if not path.is_file():
        raise SuiteError(f"{TARGETS_FILE} [{name}]: no file {entry['file']}")
    floors, ceilings = entry.get("min", {}), entry.get("max", {})
    if not floors and not ceilings:
        raise SuiteError(f"{TARGETS_FILE} [{name}]: give at least one min or max")
    languages = {}
    for language, bounds in entry.get("language", {}).items():
        if not isinstance(bounds, dict) or not (bounds.get("min") or bounds.get("max")):
            raise SuiteError(f"{TARGETS_FILE} [{name}.language.{language}]: give a min or max")
        languages[language] = (dict(bounds.get("min", {})), dict(bounds.get("max", {})))
    return FileTarget(
        name, path, dict(floors), dict(ceilings), entry.get("below", "").strip(), languages
    )


def _check_every_file_has_a_target(targets: list[FileTarget], data_dir: Path) -> None:
    named = {target.path.resolve() for target in targets}
    missing = sorted(
        str(path.relative_to(data_dir))
        for path in data_dir.glob("*/*.jsonl")
        if path.resolve() not in named
    )
    if missing:
        raise SuiteError(f"no target in {TARGETS_FILE} for: {', '.join(missing)}")


def check_metrics(target: FileTarget, metrics: dict[str, Any]) -> list[Check]:
    """Each of the file's bounds against what its run measured (a missing metric fails)."""
    checks = [
        Check(target, metric, metrics.get(metric), f"≥ {floor}", _at_least(metrics, metric, floor))
        for metric, floor in target.floors.items()
    ]
    checks += [
        Check(
            target, metric, metrics.get(metric), f"≤ {ceiling}", _at_most(metrics, metric, ceiling)
        )
        for metric, ceiling in target.ceilings.items()
    ]
    return checks


def check_languages(
    target: FileTarget, by_language: dict[str, dict[str, float | int]]
) -> list[Check]:
    """Each language's bounds against its figures (a language with no replies fails)."""
    checks = []
    for language, (floors, ceilings) in target.languages.items():
        scoped = FileTarget(f"{target.name}[{language}]", target.path, floors, ceilings)
        checks += check_metrics(scoped, dict(by_language.get(language, {})))
    return checks


def _at_least(metrics: dict[str, Any], metric: str, floor: float) -> bool:
    value = metrics.get(metric)
    return value is not None and value >= floor


def _at_most(metrics: dict[str, Any], metric: str, ceiling: float) -> bool:
    value = metrics.get(metric)
    return value is not None and value <= ceiling
