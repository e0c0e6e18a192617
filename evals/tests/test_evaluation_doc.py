"""docs/evaluation.md lists every labelled file and every source in it, with its first run.

The doc is the reference for what each file is and how each source first scored;
a file or source added to evals/data without its row there fails here.
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "evals" / "data"
DOC = ROOT / "docs" / "evaluation.md"


def _table(header_start: str) -> list[list[str]]:
    """The body rows of the one table whose header begins with `header_start`."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(header_start)]
    assert len(starts) == 1, f"one table headed {header_start!r} in {DOC.name}"
    rows = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _sources(path: Path) -> list[tuple[str, int, int]]:
    """Each run of consecutive items by one source: ("NNN–NNN", items, first_run items)."""
    runs: list[tuple[str, str, str, int, int]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        item = json.loads(line)
        number = item["id"].rsplit("-", 1)[1]
        first = int(item["first_run"])
        if runs and runs[-1][0] == item["source"]:
            source, start, _, count, firsts = runs[-1]
            runs[-1] = (source, start, number, count + 1, firsts + first)
        else:
            runs.append((item["source"], number, number, 1, first))
    return [(f"{start}–{end}", count, firsts) for _, start, end, count, firsts in runs]


def _items(path: Path) -> list[str]:
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("//")
    ]


def _files() -> list[Path]:
    return sorted(DATA.glob("*/*.jsonl"))


def test_it_lists_every_labelled_file_with_its_item_count():
    listed = {row[0].strip("`"): int(row[1]) for row in _table("| file | items | role |")}
    on_disk = {f"{path.parent.name}/{path.name}": len(_items(path)) for path in _files()}
    assert listed == on_disk


def test_it_gives_every_source_its_range_counts_and_first_run_figure():
    rows = _table("| file | items | source | count | first_run |")
    listed: dict[str, list[tuple[str, int, int]]] = {}
    for file, items, _source, count, first_run, _read_by, figure in rows:
        assert figure, f"{file} {items}: no first-run figure"
        if items != "whole file":
            listed.setdefault(file.strip("`"), []).append((items, int(count), int(first_run)))
    on_disk = {f"{path.parent.name}/{path.stem}": _sources(path) for path in _files()}
    assert listed == on_disk
