"""Benchmark: reading a reply, and what loading the reader costs a process.

``manage.py bench_reader [FILE.jsonl …] [--limit N] [--runs R]`` reads the
labelled replies of the files (by default the sealed holdouts, English and the
seven other languages) through ``classify_reply``, as a worker does, and prints
the median and 95th percentile per reply (wall clock and this process's CPU
time, which a busy machine inflates less), and how much the process grew
(resident memory) from before the reader was first used to after every reply.
A benchmark, not a test: figures depend on the machine and on what else runs.
"""

import json
import math
import statistics
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evals.suite import DATA_DIR

DEFAULT_FILES = (
    DATA_DIR / "replies" / "holdout.jsonl",
    DATA_DIR / "replies" / "languages-holdout.jsonl",
)


def resident_mib() -> float:
    """This process's resident memory now (Linux /proc), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise CommandError("no /proc/self/status: resident memory is read on Linux only")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


class Command(BaseCommand):
    help = "Time classify_reply over labelled replies and measure the reader's memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="*", type=Path, metavar="FILE.jsonl")
        parser.add_argument("--limit", type=int, default=0, help="read at most N replies")
        parser.add_argument("--runs", type=int, default=1, help="read them R times")

    def handle(self, *args: object, files: list[Path], limit: int, runs: int, **_: object) -> None:
        texts = self.replies(files or list(DEFAULT_FILES), limit)
        if not texts or runs < 1:
            raise CommandError("no replies to read (check the files, --limit and --runs)")
        before = resident_mib()
        from outreach.replies.classify import classify_reply  # the reader loads on first use

        started = time.perf_counter()
        classify_reply(*texts[0])
        first_ms = (time.perf_counter() - started) * 1000
        wall, cpu = [], []
        for _run in range(runs):
            for text, subject in texts:
                wall_start, cpu_start = time.perf_counter(), time.thread_time()
                classify_reply(text, subject)
                wall.append((time.perf_counter() - wall_start) * 1000)
                cpu.append((time.thread_time() - cpu_start) * 1000)
        grown = resident_mib() - before
        self.stdout.write(
            f"{len(wall)} readings of {len(texts)} replies; first reading (loads the reader) "
            f"{first_ms:.0f} ms"
        )
        for name, values in (("wall", wall), ("cpu", cpu)):
            self.stdout.write(
                f"  {name}: median {statistics.median(values):.1f} ms, "
                f"p95 {percentile(values, 0.95):.1f} ms, max {max(values):.1f} ms"
            )
        self.stdout.write(f"  process grew {grown:.0f} MiB with the reader loaded")

    @staticmethod
    def replies(files: list[Path], limit: int) -> list[tuple[str, str]]:
        texts = []
        for path in files:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("//"):
                    item = json.loads(line)
                    if item.get("kind") == "reply":
                        texts.append((item["text"], item.get("subject", "")))
        return texts[:limit] if limit else texts
