"""Benchmark: the inbound webhook under load, against a server that is already running.

Posts Postmark inbound deliveries (raw MIME in JSON, basic auth, each with its
own Message-ID) from ``--concurrency`` threads for ``--seconds``, each thread
on one kept-alive connection, and prints requests a second, latency
percentiles and every answer that was not a 2xx. Bounded and on loopback
only: it refuses any host but this machine, more than 64 threads or more than
five minutes, so it cannot be pointed at someone else's server by mistake.

Every delivery is a reply from a new address to a reply token that matches
no thread: the webhook stores it and puts a card on the review queue, the
write-heaviest path a delivery takes. Point it at a scratch database.

    WEBHOOK_SECRET=bench:secret DEBUG=false gunicorn -w 2 poolpatrol.wsgi &
    manage.py bench_webhook --secret bench:secret --size 5k --concurrency 8 --seconds 20
"""

import base64
import http.client
import ipaddress
import json
import re
import secrets
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser

DEFAULT_URL = "http://127.0.0.1:8000/anymail/postmark/inbound/"
MAX_CONCURRENCY = 64
MAX_SECONDS = 300
MAX_SIZE = 40 * 1024 * 1024
SLOW_SECONDS = 3.0  # the shortest webhook timeout among the providers anymail supports
LINE = "2026-11-20 07:02 badge swipe Fremont Campus gate 3 OK, then the van to the pickup\n"


def parse_size(text: str) -> int:
    """'5k', '1m', '250000' → bytes."""
    match = re.fullmatch(r"\s*(\d+)\s*([km]?)b?\s*", text.lower())
    if not match:
        raise CommandError(f"--size {text!r}: give bytes, or a number with k or m (5k, 1m)")
    number, unit = int(match.group(1)), match.group(2)
    size = number * {"": 1, "k": 1024, "m": 1024 * 1024}[unit]
    if not 512 <= size <= MAX_SIZE:
        raise CommandError(f"--size {text!r}: between 512 bytes and {MAX_SIZE // 1024**2} MB")
    return size


def loopback_target(url: str) -> tuple[str, int, str]:
    """(host, port, path) of an http URL on this machine; CommandError otherwise."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise CommandError(f"--url {url!r}: give an http:// URL of a server on this machine")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or 80)}
    except OSError as exc:
        raise CommandError(f"--url {url!r}: {exc}") from None
    if not all(
        ipaddress.ip_address(str(address).split("%")[0]).is_loopback for address in addresses
    ):
        raise CommandError(f"--url {url!r}: load is sent to loopback addresses only")
    return parts.hostname, parts.port or 80, parts.path or "/"


def delivery(size: int, run: str, n: int) -> bytes:
    """A Postmark inbound payload of about ``size`` bytes, unique by ``run`` and ``n``."""
    sender = f"bench-{run}-{n}@bench.example"
    head = (
        f"From: Bench Rider <{sender}>\r\n"
        "To: reply+0000000000000000000000000000000000000000@replies.poolpatrol.example\r\n"
        f"Subject: Re: Your vanpool seat ({n})\r\n"
        f"Message-ID: <bench.{run}.{n}@bench.example>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        "I moved back to Fremont last month; my badge swipes are below.\r\n"
    )
    padding = LINE * max(0, (size - len(head) - 600) // len(LINE))
    payload = {
        "From": sender,
        "FromFull": {"Email": sender, "Name": "Bench Rider", "MailboxHash": ""},
        "To": "reply+0000000000000000000000000000000000000000@replies.poolpatrol.example",
        "Subject": f"Re: Your vanpool seat ({n})",
        "MessageID": f"bench-{run}-{n}",
        "TextBody": "",
        "Headers": [],
        "Attachments": [],
        "RawEmail": head + padding,
    }
    return json.dumps(payload).encode()


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, status: str) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.statuses[status] = self.statuses.get(status, 0) + 1


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Command(BaseCommand):
    help = "Post inbound deliveries to a running server on this machine and report latency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", default=DEFAULT_URL, help=f"the webhook (default {DEFAULT_URL})"
        )
        parser.add_argument("--secret", required=True, help='the webhook\'s "user:password"')
        parser.add_argument("--size", default="5k", help="each delivery's size: 5k, 1m… (5k)")
        parser.add_argument("--concurrency", type=int, default=8, help="threads (8)")
        parser.add_argument("--seconds", type=float, default=20, help="how long to post (20)")

    def handle(self, *args: object, **options: object) -> None:
        host, port, path = loopback_target(str(options["url"]))
        size = parse_size(str(options["size"]))
        concurrency = int(options["concurrency"])  # type: ignore[call-overload]
        seconds = float(options["seconds"])  # type: ignore[arg-type]
        if not 1 <= concurrency <= MAX_CONCURRENCY:
            raise CommandError(f"--concurrency {concurrency}: between 1 and {MAX_CONCURRENCY}")
        if not 1 <= seconds <= MAX_SECONDS:
            raise CommandError(f"--seconds {seconds:g}: between 1 and {MAX_SECONDS}")
        auth = "Basic " + base64.b64encode(str(options["secret"]).encode()).decode()
        results, started = self._load(host, port, path, auth, size, concurrency, seconds)
        self._report(results, size, concurrency, started)

    def _load(
        self,
        host: str,
        port: int,
        path: str,
        auth: str,
        size: int,
        concurrency: int,
        seconds: float,
    ) -> tuple[Results, float]:
        run = secrets.token_hex(4)
        results = Results()
        counter = iter(range(10**9))
        counter_lock = threading.Lock()
        started = time.perf_counter()
        deadline = started + seconds

        def post_until_the_deadline() -> None:
            connection = http.client.HTTPConnection(host, port, timeout=60)
            while time.perf_counter() < deadline:
                with counter_lock:
                    n = next(counter)
                body = delivery(size, run, n)
                sent = time.perf_counter()
                try:
                    connection.request(
                        "POST",
                        path,
                        body,
                        {"Content-Type": "application/json", "Authorization": auth},
                    )
                    response = connection.getresponse()
                    response.read()
                    status = str(response.status)
                except (OSError, http.client.HTTPException) as exc:
                    status = type(exc).__name__
                    connection.close()
                    connection = http.client.HTTPConnection(host, port, timeout=60)
                results.add(time.perf_counter() - sent, status)
            connection.close()

        threads = [threading.Thread(target=post_until_the_deadline) for _ in range(concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results, started

    def _report(self, results: Results, size: int, concurrency: int, started: float) -> None:
        elapsed = time.perf_counter() - started
        latencies = results.latencies
        if not latencies:
            raise CommandError("no request completed")
        failed = sum(
            count for status, count in results.statuses.items() if not status.startswith("2")
        )
        slow = sum(1 for seconds in latencies if seconds > SLOW_SECONDS)
        ms = {name: 1000 * value for name, value in (
            ("p50", statistics.median(latencies)),
            ("p95", percentile(latencies, 0.95)),
            ("p99", percentile(latencies, 0.99)),
            ("max", max(latencies)),
        )}  # fmt: skip
        label = f"{size / 1024:.0f} KB" if size < 1024 * 1024 else f"{size / 1024**2:.0f} MB"
        self.stdout.write(
            f"{label} × {concurrency} for {elapsed:.1f} s: {len(latencies)} requests, "
            f"{len(latencies) / elapsed:.1f} req/s, p50 {ms['p50']:.0f} ms, "
            f"p95 {ms['p95']:.0f} ms, p99 {ms['p99']:.0f} ms, max {ms['max']:.0f} ms, "
            f"over {SLOW_SECONDS:.0f} s: {slow}, non-2xx: {failed}"
        )
        if failed:
            others = ", ".join(
                f"{status} × {count}" for status, count in sorted(results.statuses.items())
            )
            self.stdout.write(f"answers: {others}")
