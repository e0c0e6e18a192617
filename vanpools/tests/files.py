"""Roster files written for the import tests."""

import csv
import json
from pathlib import Path


def write_csv(tmp_path: Path, rows: list[dict[str, str]], name: str = "roster.csv") -> Path:
    """A CSV whose header is every column the rows use, in first-seen order."""
    header = list(dict.fromkeys(column for row in rows for column in row))
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=header, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_json(tmp_path: Path, data: object, name: str = "roster.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
