"""What an import reports: its errors, the exception that carries them, and its result.

Shared by every stage: reading fails with the file's first unreadable spot,
checking collects every row's errors, and the preview fills an ImportResult.
"""

from dataclasses import dataclass, field
from typing import NoReturn

OUTCOMES: tuple[str, ...] = ("created", "updated", "unchanged")
DIFFERENCES_SHOWN = 5  # per kind: a preview shows the first few, then how many more


@dataclass
class RowError:
    """One problem in the file: where (``line 7`` / ``employees[3]``), column, reason."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        if self.field:
            return f"{self.where}, {self.field}: {self.message}"
        return f"{self.where}: {self.message}"


@dataclass
class ImportResult:
    """What the import did (or, in a dry run, would do) per kind of row."""

    counts: dict[str, dict[str, int]]
    kinds: list[str] = field(default_factory=list)  # kinds the file held, in import order
    dry_run: bool = False
    source: str = ""
    refused: dict[str, int] = field(default_factory=dict)  # rows with errors, per kind
    # Per kind: "EMP-1003: home_zip 94538 → 94536", for the first rows that change.
    differences: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        if not self.kinds:
            lines = ["the file has no rows"]
        else:
            refused = self.dry_run or any(self.refused.values())
            header = f"{'':<10}{'created':>9}{'updated':>9}{'unchanged':>11}"
            lines = [header + (f"{'refused':>9}" if refused else "")]
            for kind in self.kinds:
                count = self.counts[kind]
                line = (
                    f"{kind:<10}{count['created']:>9}{count['updated']:>9}{count['unchanged']:>11}"
                )
                lines.append(line + (f"{self.refused.get(kind, 0):>9}" if refused else ""))
        if self.dry_run:
            lines += self.difference_lines()
        lines += [f"warning: {warning}" for warning in self.warnings]
        if self.dry_run:
            lines.append("dry run: nothing was saved")
        return lines

    def difference_lines(self) -> list[str]:
        lines = []
        for kind in self.kinds:
            changes = self.differences.get(kind, [])
            if not changes:
                continue
            lines.append(f"{kind}, first changes:")
            lines += [f"  {change}" for change in changes[:DIFFERENCES_SHOWN]]
            if len(changes) > DIFFERENCES_SHOWN:
                lines.append(f"  … and {len(changes) - DIFFERENCES_SHOWN} more")
        return lines


class ImportFailed(Exception):
    """The file has errors; nothing was written. ``errors`` lists every one.

    A dry run also carries its ``preview``: what the rows without errors would do.
    """

    def __init__(self, errors: list[RowError], preview: ImportResult | None = None) -> None:
        self.errors = errors
        self.preview = preview
        super().__init__(f"{plural(len(errors), 'error')}; nothing was imported.")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fail(where: str, message: str) -> NoReturn:
    """Stop the import at a problem that leaves nothing further to check."""
    raise ImportFailed([RowError(where, "", message)])
