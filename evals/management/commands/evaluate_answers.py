"""manage.py evaluate_answers — the loop with the answer page, at several shares of riders.

Runs the arrival-weighted lifecycle mix (``evals/data/lifecycle/answer-mix.toml``
names it and states the assumption) once per share of answering riders using
the page, and prints automation and cancel precision for each.
"""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evals.harness import read_cases, run_cases
from evals.harness.lifecycle import lifecycle_metrics
from evals.harness.lifecycle_answers import read_answer_mix, with_answers
from evals.scratch_db import scratch_database

MIX = Path(settings.BASE_DIR) / "evals" / "data" / "lifecycle" / "answer-mix.toml"


class Command(BaseCommand):
    help = "Automation and cancel precision on the arrival mix with riders answering on the page."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--mix", type=Path, default=MIX, help="the answer mix (TOML)")
        parser.add_argument("--shares", type=float, nargs="+", help="instead of the mix's shares")
        parser.add_argument("--limit", type=int, help="only the first N scenarios")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            mix = read_answer_mix(options["mix"])
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"cannot read the answer mix: {exc}") from None
        cases = [c for c in read_cases(mix.file) if c.get("mix", "arrival") == "arrival"]
        cases = cases[: options["limit"]] if options["limit"] else cases
        figures = []
        with scratch_database():
            for share in options["shares"] or mix.shares:
                report = run_cases(with_answers(c, share, mix.choices) for c in cases)
                metrics = lifecycle_metrics(report.results)
                figures.append(
                    {
                        "share": share,
                        "scenarios": len(report.results),
                        "answers": sum(r.got["answered"] for r in report.results),
                        "automation_rate": metrics["automation_rate_all"],
                        "cancel_precision": metrics["cancel_precision"],
                        "wrongful_cancellations": metrics["wrongful_cancellations"],
                        "human_decisions_per_case": metrics["human_decisions_per_case"],
                        "scenario_errors": metrics["scenario_errors"],
                    }
                )
        if options["json"]:
            self.stdout.write(json.dumps(figures, indent=2))
            return
        self.stdout.write(
            f"  {'on the page':>11}  {'answers':>7}  {'automation':>10}  {'cancel precision':>16}"
            f"  {'wrongful':>8}  {'people/case':>11}  {'errors':>6}"
        )
        for f in figures:
            self.stdout.write(
                f"  {f['share']:>10.0%}  {f['answers']:>7}  {f['automation_rate']:>10.1%}"
                f"  {f['cancel_precision']:>16.1%}  {f['wrongful_cancellations']:>8}"
                f"  {f['human_decisions_per_case']:>11.2f}  {f['scenario_errors']:>6}"
            )
