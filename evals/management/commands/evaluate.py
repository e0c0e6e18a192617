"""manage.py evaluate FILE.jsonl [FILE…] [--backend rules|openai] [--compare BACKEND…] [--json]

``manage.py evaluate --suite`` runs every file in evals/data against its own
target in evals/data/targets.toml and exits 1 if any file is below it.
"""

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test.utils import override_settings

from agents import llm
from evals.harness import (
    EXACT,
    STRICTLY_ABOVE,
    TARGETS,
    CaseResult,
    EvalFileError,
    Report,
    judge_model,
    read_cases,
    run_cases,
)
from evals.languages import LANGUAGE_METRICS
from evals.scratch_db import scratch_database
from evals.suite import (
    DATA_DIR,
    SuiteError,
    check_languages,
    check_metrics,
    read_reader_bounds,
    read_reader_targets,
    read_targets,
)

# Lifecycle scenarios run the whole case loop; its INFO lines would bury the report.
QUIET_LOGGERS = ("agents", "cases", "outreach", "django-q", "poolpatrol")

# Shown as plain numbers (not percentages) in the tables.
COUNTS = (
    "cases",
    "audit_cases",
    "reply_cases",
    "lifecycle_cases",
    "arrival_cases",
    "texts_checked",
    "wrong_pass_on_conflict",
    "injections_missed",
    "escalations_missed",
    "wrongful_cancellations",
    "scenario_errors",
    "model_labels",
    "ordinary_to_person",
    "replies",
)


def parse_backend(spec: str) -> dict[str, Any]:
    """ "rules", "openai" (the configured models) or "openai:MODEL" (every agent on MODEL)."""
    if spec == "rules":
        return {"LLM_BACKEND": "rules"}
    kind, _, model = spec.partition(":")
    if kind != "openai" or (spec != "openai" and not model):
        raise CommandError(f"{spec!r}: a backend is rules, openai or openai:MODEL")
    overrides: dict[str, Any] = {"LLM_BACKEND": "openai"}
    if model:
        overrides |= {
            "LLM_DEFAULT_MODEL": model,
            "LLM_MODELS": {agent: model for agent in settings.LLM_MODELS},
        }
    return overrides


def is_backend(item: str) -> bool:
    return item in ("rules", "openai") or item.startswith("openai:")


class Command(BaseCommand):
    help = "Run labelled cases in a throw-away database and compare each metric with its target."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="*", type=Path, metavar="FILE.jsonl")
        parser.add_argument("--backend", choices=["rules", "openai"])
        parser.add_argument(
            "--compare",
            nargs="+",
            metavar="BACKEND",
            help="run the sets on each of rules, openai, openai:MODEL and print one table",
        )
        parser.add_argument(
            "--json", action="store_true", help="one JSON document instead of a table"
        )
        parser.add_argument(
            "--suite",
            nargs="?",
            const=DATA_DIR,
            type=Path,
            metavar="DIR",
            help="every file in DIR (default evals/data) against its target in targets.toml",
        )

    def handle(
        self,
        *args: object,
        files: list[Path],
        backend: str | None,
        compare: list[str] | None,
        **options: object,
    ) -> None:
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger(name).level))
        if options.get("suite"):
            self.run_suite(Path(str(options["suite"])), backend)
            return
        backends, files = self.split_arguments(compare, files)
        if not files:
            raise CommandError("name at least one evaluation file (FILE.jsonl)")
        try:
            cases = [case for path in files for case in read_cases(path)]
        except EvalFileError as exc:
            raise CommandError(f"not an evaluation file:\n{exc}") from None
        if backends:
            self.compare(backends, cases, as_json=bool(options["json"]))
            return
        if backend == "openai" and not settings.OPENAI_API_KEY:
            raise CommandError(
                "--backend openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)"
            )
        self.refuse_judge_without_key()
        overrides = {"LLM_BACKEND": backend} if backend else {}
        report = self.run(cases, overrides)
        if options["json"]:
            self.stdout.write(json.dumps(self.as_json(report), indent=2))
        else:
            self.print_table(report)
        below = report.below_target()
        if below:
            raise CommandError(f"below target: {', '.join(below)}")

    @staticmethod
    def split_arguments(
        compare: list[str] | None, files: list[Path]
    ) -> tuple[list[str], list[Path]]:
        # `--compare rules openai:x FILE…`: argparse gives the files to --compare too.
        if not compare:
            return [], files
        backends = [item for item in compare if is_backend(item)]
        files = [Path(item) for item in compare if not is_backend(item)] + files
        if not backends:
            raise CommandError("--compare needs backends: rules, openai or openai:MODEL")
        return backends, files

    def refuse_judge_without_key(self) -> None:
        if judge_model() and not settings.OPENAI_API_KEY:
            raise CommandError("EVAL_JUDGE_MODEL needs OPENAI_API_KEY (and OPENAI_BASE_URL)")

    def run(
        self, cases: list[dict], overrides: dict[str, Any], on_done: Callable | None = None
    ) -> Report:
        with scratch_database(), override_settings(**overrides):
            # A fresh breaker per backend: one model's outage must not count against the next.
            llm.reset_breakers()
            return run_cases(cases, on_done=on_done)

    # --- the suite: every file against its own target ------------------------------------------

    def run_suite(self, data_dir: Path, backend: str | None) -> None:
        try:
            targets = read_targets(data_dir)
        except SuiteError as exc:
            raise CommandError(str(exc)) from None
        overrides = {"LLM_BACKEND": backend} if backend else {}
        failed: list[str] = []
        self.stdout.write(f"  {'file':<30}{'metric':<28}{'value':>10}  target")
        for target in targets:
            try:
                cases = read_cases(target.path)
            except EvalFileError as exc:
                raise CommandError(f"{target.path}: not an evaluation file:\n{exc}") from None
            report = self.run(cases, overrides)
            checks = check_metrics(target, report.metrics())
            checks += check_languages(target, report.metrics_by_language())
            for check in checks:
                mark = "" if check.met else "  BELOW"
                value = self.shown(check.metric, check.value)
                # check.target: the file, or the file and a language ("….languages-holdout[zh]").
                name = check.target.name
                self.stdout.write(f"  {name:<30}{check.metric:<28}{value:>10}  {check.bound}{mark}")
                if not check.met:
                    failed.append(f"{name} {check.metric}")
        failed += self.reader_held_out()
        if failed:
            raise CommandError(f"below target: {', '.join(failed)}")
        self.stdout.write(f"every file at its target ({len(targets)} files)")

    def reader_held_out(self) -> list[str]:
        """The learned readers on replies they never saw: one source held out at a time.

        Each reply is read by the reader the route gives it (``reply_routes``).
        The reply files above are their training data, so their figures are fit,
        not accuracy; this is the estimate of a first run on new wording.
        """
        # scikit-learn and the encoder: loaded only when the suite runs.
        from evals import reply_model, reply_routes

        training = reply_routes.train(settings.REPLY_CONFIDENCE_THRESHOLD)
        examples = training.examples
        result = reply_model.score_routes(examples, training.routed)
        self.stdout.write(
            f"reply reader, grouped held-out over {len(examples)} replies from "
            f"{len({e.source for e in examples})} sources (the reply files above are its "
            "training data: their figures are fit, not accuracy):"
        )
        floors, ceilings = read_reader_bounds()
        figures = {
            "bucket_accuracy": result["bucket_accuracy"],
            "escalation_recall": result["escalation_recall"],
            "escalations_acted_on_alone": result["escalations_acted_on_without_a_person"],
        }
        failed = self.bounds("reader.held-out", floors, ceilings, figures)
        self.stdout.write(
            f"  {'reader.held-out':<30}{'automation':<28}{result['automation']:>10.1%}"
        )
        for reply_id in result["acted_alone_ids"]:
            self.stdout.write(f"  {'reader.held-out':<30}acted on alone: {reply_id}")
        by_language = reply_model.routes_by_language(examples, training.routed)
        for language, (floors, ceilings) in read_reader_targets().items():
            figures = by_language.get(language, {})
            # The per-language bounds name acted-on-alone as the reply files do.
            figures = {
                **figures,
                "escalations_missed": figures.get("escalations_acted_on_without_a_person"),
            }
            failed += self.bounds(f"reader.held-out[{language}]", floors, ceilings, figures)
        return failed

    def bounds(
        self,
        name: str,
        floors: dict[str, float],
        ceilings: dict[str, float],
        figures: dict[str, Any],
    ) -> list[str]:
        """One line per bound of ``name`` against ``figures``; the names of those not met."""
        failed = []
        for metric, bound, sign in [(m, b, "≥") for m, b in floors.items()] + [
            (m, b, "≤") for m, b in ceilings.items()
        ]:
            value = figures.get(metric)
            met = value is not None and (value >= bound if sign == "≥" else value <= bound)
            shown = "-" if value is None else self.shown(metric, value)
            mark = "" if met else "  BELOW"
            self.stdout.write(f"  {name:<30}{metric:<28}{shown:>10}  {sign} {bound}{mark}")
            if not met:
                failed.append(f"{name} {metric}")
        return failed

    # --- compare -----------------------------------------------------------------------------

    def compare(self, backends: list[str], cases: list[dict], *, as_json: bool) -> None:
        settings_for = {spec: parse_backend(spec) for spec in backends}
        if any(o["LLM_BACKEND"] == "openai" for o in settings_for.values()) and not (
            settings.OPENAI_API_KEY
        ):
            raise CommandError("openai backends need OPENAI_API_KEY (and OPENAI_BASE_URL)")
        self.refuse_judge_without_key()
        reports = {}
        for spec, overrides in settings_for.items():
            if not as_json:
                self.stderr.write(f"running {len(cases)} cases on {spec}…")
            reports[spec] = self.run(cases, overrides)
        if as_json:
            document = {"backends": {spec: self.as_json(r) for spec, r in reports.items()}}
            self.stdout.write(json.dumps(document, indent=2))
        else:
            self.print_comparison(reports)
        errors = {
            spec: report.metrics()["model_errors"]
            for spec, report in reports.items()
            if settings_for[spec]["LLM_BACKEND"] == "openai"
        }
        fell_back = {spec: n for spec, n in errors.items() if n}
        if fell_back:
            counts = ", ".join(f"{spec}: {n} failed model calls" for spec, n in fell_back.items())
            raise CommandError(
                f"the comparison is not of the models: {counts}; the rules or a person stood "
                "in for those, so their figures are not the model's (see model_errors)"
            )

    def print_comparison(self, reports: dict[str, Report]) -> None:
        metrics = {spec: report.metrics() for spec, report in reports.items()}
        names: list[str] = []
        for values in metrics.values():
            names += [name for name in values if name not in names]
        width = max(14, *(len(spec) + 2 for spec in reports))
        header = f"  {'metric':<30}" + "".join(f"{spec:>{width}}" for spec in reports)
        self.stdout.write(header + "  target")
        for name in names:
            cells = "".join(
                f"{self.shown(name, metrics[spec].get(name)):>{width}}" for spec in reports
            )
            self.stdout.write(f"  {name:<30}{cells}  {self.goal(name)}")
        below = {spec: report.below_target() for spec, report in reports.items()}
        cells = "".join(f"{', '.join(b) or '-':>{width}}" for b in below.values())
        self.stdout.write(f"  {'below target':<30}{cells}")
        for spec, report in reports.items():
            for result in report.results:
                for item in result.checked:
                    if not item.faithful:
                        missing = ", ".join(item.unsupported)
                        self.stdout.write(
                            f"  unfaithful  {spec}  {result.id} ({item.what}): {missing}"
                        )

    # --- one backend -------------------------------------------------------------------------

    def as_json(self, report: Report) -> dict:
        return {
            "metrics": report.metrics(),
            "by_language": report.metrics_by_language(),
            "targets": TARGETS,
            "below_target": report.below_target(),
            "cases": [self.case_json(r) for r in report.results],
        }

    @staticmethod
    def case_json(result: CaseResult) -> dict:
        document = {
            "id": result.id,
            "kind": result.kind,
            "expected": result.expected,
            "got": result.got,
            "correct": result.correct,
        }
        if result.kind == "lifecycle":
            document["mix"] = result.mix
        if result.usage.model_calls:
            document["usage"] = {
                "model_calls": result.usage.model_calls,
                "tokens_in": result.usage.tokens_in,
                "tokens_out": result.usage.tokens_out,
                "cost_usd": str(result.usage.cost_usd),
                "latency_ms": result.usage.latency_ms,
            }
        unfaithful = [
            {"what": c.what, "unsupported": c.unsupported} for c in result.checked if not c.faithful
        ]
        if unfaithful:
            document["unfaithful"] = unfaithful
        return document

    def print_table(self, report: Report) -> None:
        for result in report.results:
            if not result.correct:
                self.stdout.write(f"  wrong  {result.id}: {self.describe_miss(result)}")
        metrics = report.metrics()
        self.stdout.write(f"  {'metric':<30}{'value':>10}  target")
        for name, value in metrics.items():
            self.stdout.write(f"  {name:<30}{self.shown(name, value):>10}  {self.goal(name)}")
        self.print_languages(report.metrics_by_language())

    def print_languages(self, by_language: dict[str, dict[str, float | int]]) -> None:
        """One line per language: the reply figures that must hold in each."""
        if not by_language:
            return
        self.stdout.write(f"  {'language':<10}" + "".join(f"{m:>26}" for m in LANGUAGE_METRICS))
        for language, figures in by_language.items():
            cells = "".join(f"{self.shown(m, figures[m]):>26}" for m in LANGUAGE_METRICS)
            self.stdout.write(f"  {language:<10}{cells}")

    @staticmethod
    def shown(name: str, value: object) -> str:
        if value is None:
            return "-"
        if name in COUNTS or not isinstance(value, float):
            return f"{value}"
        if name == "cost_usd_per_case":
            return f"{value:.6f}"
        if name.endswith("_per_case") or name == "clarity_mean":
            return f"{value:.2f}"
        return f"{value:.1%}"

    @staticmethod
    def goal(name: str) -> str:
        target = TARGETS.get(name)
        if target is None:
            return ""
        if name in EXACT:
            return f"= {target}"
        if name in STRICTLY_ABOVE:
            return f"> {target:.0%}"
        return f"≥ {target:.0%}"

    @staticmethod
    def describe_miss(result: CaseResult) -> str:
        expected, got = result.expected, result.got
        if result.kind == "reply":
            return (
                f"expected {expected['bucket']} (hitl {expected['hitl']}), "
                f"got {got['bucket']} {got['confidence']:.2f} (hitl {got['hitl']})"
            )
        if result.kind == "lifecycle":
            differences = [
                f"{key} {expected[key]!r} → {got[key]!r}"
                for key in expected
                if expected[key] != got[key]
            ]
            differences += [f"error: {error}" for error in got["errors"]]
            return "; ".join(differences)
        for key in ("riders", "rules"):  # ridership and parking; the vanpool rules
            if key in expected:
                wrong = [
                    f"{name} {verdict} → {got[key].get(name, 'missing')}"
                    for name, verdict in expected[key].items()
                    if got[key].get(name) != verdict
                ]
                return f"expected {expected['verdict']}, got {got['verdict']}: " + "; ".join(wrong)
        return (
            f"expected {expected['verdict']} {expected['flagged']}, "
            f"got {got['verdict']} {got['flagged']}"
        )
