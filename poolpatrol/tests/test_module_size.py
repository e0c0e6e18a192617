"""No product module grows past ~600 lines without saying why at its top (issue 30's bar).

A module that long is usually two things; the few that are one on purpose (a
script with its tables beside it) say so in a comment on one of their first lines.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["poolpatrol", "vanpools", "cases", "agents", "audit", "outreach", "caseloop",
            "dashboard", "api", "evals", "fixtures", "scripts"]  # fmt: skip
LIMIT = 600
REASON = "# Over 600 lines"


def product_modules() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if not {"tests", "migrations"} & set(path.relative_to(ROOT).parts)
    ]


def oversized(path: Path) -> bool:
    """Over the limit with no stated reason among its first five lines."""
    lines = path.read_text().splitlines()
    return len(lines) > LIMIT and not any(line.startswith(REASON) for line in lines[:5])


def test_no_product_module_is_over_600_lines_without_a_reason_at_its_top():
    too_long = [
        f"{path.relative_to(ROOT)}: {len(path.read_text().splitlines())} lines"
        for path in product_modules()
        if oversized(path)
    ]
    assert too_long == [], f"split these at their seams, or say why at the top ({REASON} …)"


def test_it_finds_a_long_module_without_a_reason_and_accepts_one_with(tmp_path):
    body = "x = 1\n" * (LIMIT + 1)
    bare = tmp_path / "bare.py"
    bare.write_text('"""A module."""\n' + body)
    explained = tmp_path / "explained.py"
    explained.write_text(f"{REASON} on purpose: one script, its tables beside it.\n" + body)
    short = tmp_path / "short.py"
    short.write_text("x = 1\n" * LIMIT)
    assert [oversized(p) for p in (bare, explained, short)] == [True, False, False]
