"""Pointers in the product's docstrings and comments lead somewhere that exists.

A dotted path (``caseloop.decisions.approve``) must import, down to the
attribute it names; a Django label (``vanpools.Employee``), permission
(``cases.decide_pendingaction``) or system check id (``outreach.E101``) must
be one the project defines. A file path (``outreach/replies/classify.py``,
``docs/design.md#identifiers``) must exist, and so must its heading anchor.
"""

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["poolpatrol", "vanpools", "cases", "agents", "audit", "outreach", "caseloop",
            "dashboard", "api", "evals"]  # fmt: skip
DOTTED = re.compile(rf"(?<![\w./-])(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")
FILE = re.compile(
    rf"(?<![\w./-])((?:{'|'.join(PACKAGES)}|docs|templates|static|scripts|fixtures|tests)"
    r"/[\w./-]*\w)(?:#([\w-]+))?"
)
# Any Markdown file: in the repository, or in docs/ when named bare ("operating.md").
MARKDOWN = re.compile(r"(?<![\w./<>-])([\w-][\w/.-]*\.md)(?:#([\w-]+))?")
CHECK_ID = re.compile(r"[A-Za-z_]\w*\.[CEWI]\d{3}")


def product_modules() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if not {"tests", "migrations"} & set(path.relative_to(ROOT).parts)
    ]


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """Each comment and docstring of ``path`` with its line number."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield node.body[0].lineno, docstring


def imports(dotted: str) -> bool:
    """The longest importable module prefix of ``dotted`` has the attributes after it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@cache
def django_labels() -> frozenset[str]:
    models = {model._meta.label for model in apps.get_models()}
    permissions = {
        f"{model._meta.app_label}.{codename}"
        for model in apps.get_models()
        for codename in [
            *(f"{action}_{model._meta.model_name}" for action in model._meta.default_permissions),
            *(codename for codename, _ in model._meta.permissions),
        ]
    }
    return frozenset(models | permissions)


def declared_check_ids() -> set[str]:
    ids = set()
    for path in product_modules():
        ids.update(re.findall(r"""id=["']([\w.]+)["']""", path.read_text()))
    return ids


def resolves(dotted: str) -> bool:
    if dotted in django_labels():
        return True
    if CHECK_ID.fullmatch(dotted):
        return dotted in declared_check_ids()
    return imports(dotted)


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: Path) -> set[str]:
    lines = markdown.read_text().splitlines()
    return {slug(line.lstrip("#")) for line in lines if line.startswith("#")}


def broken_file_pointer(path: str, anchor: str | None) -> str:
    """Why the pointer is broken, or "" when it leads somewhere."""
    target = ROOT / path.rstrip(".")
    if target.suffix == ".md" and "/" not in path and not target.exists():
        target = ROOT / "docs" / path
    if not target.exists():
        return "no such file"
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return f"no heading #{anchor}"
    return ""


def stale_pointers() -> list[str]:
    stale = []
    for path in product_modules():
        where = path.relative_to(ROOT)
        for line, text in prose(path):
            stale += [
                f"{where}:{line}: {match}"
                for match in DOTTED.findall(text)
                if not match.endswith((".py", ".md", ".html")) and not resolves(match)
            ]
            for match in [*FILE.finditer(text), *MARKDOWN.finditer(text)]:
                if why := broken_file_pointer(match[1], match[2]):
                    stale.append(f"{where}:{line}: {match[0]} ({why})")
    return stale


def test_every_module_and_file_pointer_in_docstrings_and_comments_leads_somewhere():
    assert stale_pointers() == []


@pytest.mark.parametrize(
    "pointer",
    ["caseloop.decisions", "caseloop.decisions.approve", "cases.models.Case.Status",
     "vanpools.Employee", "cases.decide_pendingaction", "outreach.E101"],
)  # fmt: skip
def test_it_accepts_a_pointer_that_exists(pointer):
    assert resolves(pointer)


@pytest.mark.parametrize(
    "pointer",
    ["outreach.decisions", "agents.supervisor", "caseloop.decisions.no_such_function",
     "vanpools.NoSuchModel", "outreach.E999"],
)  # fmt: skip
def test_it_refuses_a_pointer_that_does_not(pointer):
    assert not resolves(pointer)


def test_it_checks_files_and_their_heading_anchors():
    assert broken_file_pointer("docs/design.md", "identifiers") == ""
    assert broken_file_pointer("docs/operating.md", "settings") == ""
    assert broken_file_pointer("outreach/replies/classify.py", None) == ""
    assert broken_file_pointer("docs/design.md", "no-such-heading") == "no heading #no-such-heading"
    assert broken_file_pointer("README.md", None) == broken_file_pointer("operating.md", None) == ""
    assert broken_file_pointer("outreach/classify.py", None) == "no such file"
    assert broken_file_pointer("DESIGN.md", None) == "no such file"  # not in the repository
