"""manage.py evaluate FILE.jsonl [FILE…] [--backend rules|openai] [--json]"""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test.utils import override_settings

from agents.evaluation import TARGETS, CaseResult, EvalFileError, Report, read_cases, run_cases
from poolpatrol.scratch_db import scratch_database


class Command(BaseCommand):
    help = "Run labelled cases in a throw-away database and compare each metric with its target."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE.jsonl")
        parser.add_argument("--backend", choices=["rules", "openai"])
        parser.add_argument(
            "--json", action="store_true", help="one JSON document instead of a table"
        )

    def handle(
        self, *args: object, files: list[Path], backend: str | None, **options: object
    ) -> None:
        try:
            cases = [case for path in files for case in read_cases(path)]
        except EvalFileError as exc:
            raise CommandError(f"not an evaluation file:\n{exc}") from None
        if backend == "openai" and not settings.OPENAI_API_KEY:
            raise CommandError(
                "--backend openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)"
            )
        overrides = {"LLM_BACKEND": backend} if backend else {}
        with scratch_database(), override_settings(**overrides):
            report = run_cases(cases)
        if options["json"]:
            self.stdout.write(json.dumps(self.as_json(report), indent=2))
        else:
            self.print_table(report)
        below = report.below_target()
        if below:
            raise CommandError(f"below target: {', '.join(below)}")

    def as_json(self, report: Report) -> dict:
        return {
            "metrics": report.metrics(),
            "targets": TARGETS,
            "below_target": report.below_target(),
            "cases": [
                {
                    "id": r.id,
                    "kind": r.kind,
                    "expected": r.expected,
                    "got": r.got,
                    "correct": r.correct,
                }
                for r in report.results
            ],
        }

    def print_table(self, report: Report) -> None:
        for result in report.results:
            if not result.correct:
                self.stdout.write(f"  wrong  {result.id}: {self.describe_miss(result)}")
        metrics = report.metrics()
        self.stdout.write(f"  {'metric':<30}{'value':>10}  target")
        for name, value in metrics.items():
            target = TARGETS.get(name)
            shown = (
                f"{value:.1%}"
                if isinstance(value, float)
                and name not in ("model_calls_per_case", "tool_calls_per_case")
                else f"{value}"
            )
            if name.endswith("_per_case"):
                shown = f"{value:.2f}"
            if target is None:
                goal = ""
            elif name in ("wrong_pass_on_conflict", "injections_missed"):
                goal = f"= {target}"
            elif name == "holdout_bucket_accuracy":
                goal = f"> {target:.0%}"
            else:
                goal = f"≥ {target:.0%}"
            self.stdout.write(f"  {name:<30}{shown:>10}  {goal}")

    @staticmethod
    def describe_miss(result: CaseResult) -> str:
        expected, got = result.expected, result.got
        if result.kind == "reply":
            return (
                f"expected {expected['bucket']} (hitl {expected['hitl']}), "
                f"got {got['bucket']} {got['confidence']:.2f} (hitl {got['hitl']})"
            )
        return (
            f"expected {expected['verdict']} {expected['flagged']}, "
            f"got {got['verdict']} {got['flagged']}"
        )
