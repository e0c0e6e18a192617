"""manage.py audit_vanpools [IDS…] [--site S] [--all] [--async [--wait]] [--progress [RUN]]"""

import datetime as dt
import sys
import time
from collections import Counter
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet
from tqdm import tqdm

from caseloop.audits import AuditOutcome, audit_vanpools
from caseloop.fanout import retry_failed_chunks, start_audit_run
from caseloop.models import AuditChunk, AuditRun, progress
from vanpools.models import Vanpool

POLL_SECONDS = 2.0


def parse_date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--date {value!r} is not a date (YYYY-MM-DD)") from None


class Command(BaseCommand):
    help = "Audit vanpools (by ID, by work site, or all) and print a summary."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("vanpool_ids", nargs="*", metavar="VANPOOL_ID")
        parser.add_argument("--site", help="every vanpool at this work site")
        parser.add_argument("--all", action="store_true", help="every vanpool")
        parser.add_argument(
            "--async",
            dest="run_async",
            action="store_true",
            help="split the audit into chunks and queue them for the workers (any number of "
            "qcluster processes, on any hosts) instead of auditing here",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="with --async: follow the run until every chunk is done or failed",
        )
        parser.add_argument(
            "--progress",
            nargs="?",
            const="latest",
            metavar="RUN",
            help="show how far a queued audit run has got (the latest without a number)",
        )
        parser.add_argument(
            "--retry-failed",
            metavar="RUN",
            help="queue a run's failed chunks again (the vanpools they finished are kept)",
        )
        parser.add_argument("--date", help="audit date (default: today, program time)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["progress"]:
            self.show_progress(self.find_run(options["progress"]), follow=options["wait"])
            return
        if options["retry_failed"]:
            run = self.find_run(options["retry_failed"])
            self.stdout.write(
                f"audit run {run.pk}: {retry_failed_chunks(run)} failed chunks queued"
            )
            if options["wait"]:
                self.show_progress(run, follow=True)
            return
        vanpools = self.select(options["vanpool_ids"], options["site"], options["all"])
        ids = list(vanpools.values_list("vanpool_id", flat=True))
        if options["run_async"]:
            if options["date"]:
                raise CommandError("--date cannot be combined with --async (tasks audit today)")
            run = start_audit_run(ids, requested_by="command")
            self.stdout.write(
                f"audit run {run.pk}: {run.vanpools} vanpools in {progress(run)['total']} chunks "
                f"queued for the workers (`manage.py qcluster`); follow it with "
                f"`manage.py audit_vanpools --progress {run.pk} --wait`"
            )
            if options["wait"]:
                self.show_progress(run, follow=True)
            return
        audit_date = parse_date(options["date"]) if options["date"] else None
        started = time.perf_counter()
        with tqdm(
            total=len(ids), unit="vanpool", disable=not sys.stderr.isatty(), file=sys.stderr
        ) as bar:
            outcomes = audit_vanpools(ids, audit_date=audit_date, on_done=lambda _: bar.update())
        self.print_summary(outcomes, time.perf_counter() - started)
        errors = [o for o in outcomes if o.status == "error"]
        for outcome in errors:
            self.stderr.write(f"{outcome.vanpool_id}: {outcome.error}")
        if errors:
            raise CommandError(f"{len(errors)} of {len(outcomes)} audits failed")

    def find_run(self, which: str) -> AuditRun:
        if which == "latest":
            run = AuditRun.objects.first()
            if run is None:
                raise CommandError("no audit run has been queued yet")
            return run
        if not which.isdigit() or not (run := AuditRun.objects.filter(pk=int(which)).first()):
            raise CommandError(f"no audit run {which!r}; give the number `--async` printed")
        return run

    def show_progress(self, run: AuditRun, *, follow: bool) -> None:
        """A line per change: chunks done, failed, running and waiting."""
        last = None
        while True:
            counts = progress(run)
            line = (
                f"audit run {run.pk} ({run.audit_date}): {counts['done']} of {counts['total']} "
                f"chunks done, {counts['failed']} failed, {counts['running']} running, "
                f"{counts['waiting']} waiting"
            )
            if line != last:
                self.stdout.write(line)
                last = line
            if not follow or counts["waiting"] + counts["running"] == 0:
                break
            time.sleep(POLL_SECONDS)
        failed = run.chunks.filter(status=AuditChunk.Status.FAILED)
        for chunk in failed:
            self.stderr.write(f"chunk {chunk.number}: {chunk.error}")
        if failed:
            raise CommandError(
                f"{len(failed)} of {counts['total']} chunks failed; queue them again with "
                f"`manage.py audit_vanpools --retry-failed {run.pk}`"
            )

    def select(self, ids: list[str], site: str | None, everything: bool) -> QuerySet[Vanpool]:
        if not (ids or site or everything):
            raise CommandError("name vanpool IDs, or use --site SITE or --all")
        if everything and (ids or site):
            raise CommandError("--all audits every vanpool: leave out IDs and --site")
        vanpools = Vanpool.objects.order_by("vanpool_id")
        if ids:
            found = set(vanpools.filter(vanpool_id__in=ids).values_list("vanpool_id", flat=True))
            missing = [vanpool_id for vanpool_id in ids if vanpool_id not in found]
            if missing:
                raise CommandError(f"no such vanpool: {', '.join(missing)}; nothing was audited")
            vanpools = vanpools.filter(vanpool_id__in=ids)
        if site:
            vanpools = vanpools.filter(work_site__iexact=site)
            if not vanpools.exists():
                sites = sorted(set(Vanpool.objects.values_list("work_site", flat=True)))
                raise CommandError(f"no vanpools at site {site!r}; sites: {', '.join(sites)}")
        return vanpools

    def print_summary(self, outcomes: list[AuditOutcome], seconds: float) -> None:
        statuses = Counter(o.status for o in outcomes)
        reasons = Counter(o.reason for o in outcomes if o.status == "failed")
        actions = Counter(o.case_action for o in outcomes)
        rows = [
            ("audited", len(outcomes)),
            ("passed", statuses["passed"]),
            *((f"failed: {reason}", n) for reason, n in sorted(reasons.items())),
            ("unknown (to a human)", statuses["unknown"]),
            ("unchanged (already audited)", statuses["unchanged"]),
            ("skipped (not active)", statuses["skipped"]),
            ("errors", statuses["error"]),
            ("cases opened", actions["opened"]),
            ("cases updated", actions["updated"]),
            ("cases closed", actions["closed"]),
            ("model calls", sum(o.model_calls for o in outcomes)),
            ("model errors (rules used)", sum(o.model_errors for o in outcomes)),
            ("tokens", sum(o.tokens for o in outcomes)),
            ("cost (USD)", f"{sum((o.cost_usd for o in outcomes), Decimal(0)):.4f}"),
            ("wall time (s)", f"{seconds:.2f}"),
        ]
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            self.stdout.write(f"  {label:<{width}}  {value:>8}")
