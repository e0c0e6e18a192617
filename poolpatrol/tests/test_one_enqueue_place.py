"""Work reaches django-q2 only through ``poolpatrol/queue.py``.

Its helpers are where on_commit, inline runs and named queues are decided; a
module that calls django-q2 itself skips all three.
"""

import ast
import tomllib
from pathlib import Path

import pytest
from django.db import transaction
from django_q.models import Task

from agents import telemetry
from poolpatrol import queue

ROOT = Path(__file__).resolve().parents[2]
# The product packages: those the import contract keeps evaluation tooling out of.
PRODUCT = next(
    contract["source_modules"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    if contract["type"] == "forbidden"
)
ENQUEUE_NAMES = {"async_task", "async_chain", "async_iter", "schedule", "AsyncTask", "Chain"}
THE_PLACE = ROOT / "poolpatrol" / "queue.py"


def product_modules() -> list[Path]:
    return [
        path
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if not {"tests", "migrations"} & set(path.relative_to(ROOT).parts)
    ]


def enqueue_imports(path: Path) -> list[str]:
    """Each way ``path`` reaches django-q2's enqueue functions, as ``line: what``."""
    return enqueue_paths(path.read_text(), str(path))


def enqueue_paths(source: str, filename: str = "<source>") -> list[str]:
    """Each way ``source`` can put work on django-q2's queue past poolpatrol.queue.

    Its enqueue functions imported (or their module), ``django_q.tasks`` reached
    as an attribute, a schedule written through the ``Schedule`` model, and a
    broker's own ``enqueue`` called.
    """
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {alias.name for alias in node.names}
            if node.module == "django_q.tasks" and names & (ENQUEUE_NAMES | {"*"}):
                found.append(f"{node.lineno}: from django_q.tasks import {sorted(names)}")
            if node.module == "django_q" and "tasks" in names:
                found.append(f"{node.lineno}: from django_q import tasks")
            if node.module == "django_q.models" and names & {"Schedule", "*"}:
                found.append(f"{node.lineno}: from django_q.models import {sorted(names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "django_q.tasks":
                    found.append(f"{node.lineno}: import django_q.tasks")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "tasks"
            and isinstance(node.value, ast.Name)
            and node.value.id == "django_q"
        ):
            found.append(f"{node.lineno}: django_q.tasks")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "enqueue"
        ):
            found.append(f"{node.lineno}: .enqueue(…)")
    return found


# Ways past the one place the check must see, and ways to read the queue it must not flag.
BYPASSES = [
    "from django_q.tasks import async_task",
    "from django_q.tasks import *",
    "from django_q.tasks import schedule",
    "from django_q import tasks",
    "import django_q.tasks",
    "import django_q.tasks as q",
    "import django_q\ndjango_q.tasks.async_task('f')",
    "from django_q.models import Schedule",
    "from django_q.brokers import get_broker\nget_broker().enqueue('signed task')",
]
READS = [
    "from django_q.tasks import result, fetch",
    "from django_q.brokers import get_broker\nget_broker().ping()",
    "from django_q.models import Task, Success",
    "from django_q.status import Stat",
    "from poolpatrol.queue import enqueue_trace_export",
]


@pytest.mark.parametrize("source", BYPASSES)
def test_the_check_sees_each_way_past_the_one_place(source):
    assert enqueue_paths(source)


@pytest.mark.parametrize("source", READS)
def test_the_check_lets_reading_the_queue_be(source):
    assert enqueue_paths(source) == []


def test_it_finds_every_product_module_and_the_one_place():
    modules = product_modules()
    assert THE_PLACE in modules and ROOT / "agents" / "telemetry.py" in modules
    assert enqueue_imports(THE_PLACE), "queue.py no longer imports async_task: update this test"


def test_it_enqueues_only_through_poolpatrol_queue():
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in product_modules()
        if path != THE_PLACE and (found := enqueue_imports(path))
    }
    assert offenders == {}, "enqueue through a poolpatrol.queue helper instead"


@pytest.mark.django_db(transaction=True)
def test_it_queues_the_trace_export_after_commit_by_its_dotted_path(settings):
    settings.OTEL_EXPORTER_OTLP_ENDPOINT = "http://127.0.0.1:9"  # export on; no tree to send
    with transaction.atomic():
        telemetry.export_on_commit(41)
        assert not Task.objects.exists()  # nothing before the commit
    task = Task.objects.get()  # django-q2 runs it in-process under the tests
    assert (task.func, task.args, task.name, task.group) == (
        "agents.telemetry.export_trace_task",
        (41,),
        "export trace 41",
        "telemetry",
    )
    assert task.success and task.result == {}


@pytest.mark.django_db
def test_it_logs_a_broker_that_refuses_the_export_and_carries_on(
    settings, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    def broker_down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("broker down")

    settings.OTEL_EXPORTER_OTLP_ENDPOINT = "http://127.0.0.1:9"
    monkeypatch.setattr(queue, "async_task", broker_down)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        telemetry.export_on_commit(42)
    assert len(callbacks) == 1
    assert "could not queue the export of agent run 42" in caplog.text
