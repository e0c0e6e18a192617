"""bench_webhook: bounded load on loopback only, with the figures a person reads."""

import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evals.management.commands.bench_webhook import loopback_target, parse_size
from outreach.models import Message


@pytest.mark.parametrize(
    ("text", "size"), [("5k", 5120), ("1m", 1_048_576), ("250000", 250_000), ("5KB", 5120)]
)
def test_sizes_read_as_people_write_them(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["five", "1g", "10", "100m"])
def test_a_size_it_cannot_send_is_refused_with_the_range(text):
    with pytest.raises(CommandError, match="--size"):
        parse_size(text)


@pytest.mark.parametrize(
    "url",
    ["http://10.1.2.3:8000/anymail/postmark/inbound/", "https://127.0.0.1/x", "ftp://localhost/"],
)
def test_load_goes_to_this_machine_over_http_only(url):
    with pytest.raises(CommandError, match="--url"):
        loopback_target(url)


def test_localhost_is_loopback():
    assert loopback_target("http://localhost:8765/anymail/postmark/inbound/")[1:] == (
        8765,
        "/anymail/postmark/inbound/",
    )


@pytest.mark.parametrize(
    ("option", "value"), [("--concurrency", "0"), ("--concurrency", "65"), ("--seconds", "301")]
)
def test_unbounded_load_is_refused(option, value):
    with pytest.raises(CommandError, match=option):
        call_command("bench_webhook", "--secret", "a:b", option, value)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow_process
def test_it_posts_to_a_running_server_and_reports_every_figure(live_server, settings, capsys):
    settings.DEBUG = False
    settings.ANYMAIL = {"WEBHOOK_SECRET": ["bench:secret"]}
    url = f"{live_server.url}/anymail/postmark/inbound/"

    call_command(
        "bench_webhook", "--url", url, "--secret", "bench:secret", "--concurrency", "2",
        "--seconds", "1",
    )  # fmt: skip

    line = capsys.readouterr().out.strip()
    figures = re.fullmatch(
        r"5 KB × 2 for [\d.]+ s: (\d+) requests, [\d.]+ req/s, p50 \d+ ms, p95 \d+ ms, "
        r"p99 \d+ ms, max \d+ ms, over 3 s: \d+, non-2xx: 0",
        line,
    )
    assert figures, line
    assert Message.objects.filter(direction="inbound").count() == int(figures.group(1))
