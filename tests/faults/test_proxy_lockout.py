"""Scenarios 65–66: failed logins behind a real reverse proxy lock out the client, not the user.

gunicorn serves the app in production mode (``PRODUCTION=true``, the manifest
static files, ``TRUSTED_PROXIES`` naming the proxy) and Debian's nginx sits in
front of it, appending each connection's address to ``X-Forwarded-For`` as a
deployment's proxy does. Clients connect to nginx from different loopback
addresses (127.0.0.2, 127.0.0.3, …) by binding their source address, so the app
sees them only through the proxy.
"""

import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.qcluster_support import manage, process_env

# Starts gunicorn behind nginx: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
USERNAME, PASSWORD = "coordinator", "proxy-lockout-right-password"
FAILURE_LIMIT = 5  # AXES_FAILURE_LIMIT's default, set explicitly below
PROXY_CONFIG = """
worker_processes 1;
{user}
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{app_port};
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_answering(port: int, process: subprocess.Popen, name: str) -> None:
    """Until ``/health`` on ``port`` gets any HTTP answer: a gunicorn worker answers
    once it has loaded Django, which takes a while on a busy machine."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            connection.request("GET", "/health")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.5)
        finally:
            connection.close()
    raise RuntimeError(f"{name} did not answer on {port} within 180 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Stack:
    port: int  # nginx's

    def login(self, source: str, password: str, forwarded_for: str = "") -> int:
        """A whole login from ``source``: the form (for its CSRF token), then the post."""
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        form = self._request(source, "GET", "/login/", headers=headers)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', form.body)
        cookie = re.search(r"csrftoken=([^;]+)", form.headers.get("Set-Cookie", ""))
        assert form.status == 200 and token and cookie, form.status
        body = (
            f"csrfmiddlewaretoken={token.group(1).decode()}&username={USERNAME}&password={password}"
        )
        answer = self._request(
            source,
            "POST",
            "/login/",
            body=body.encode(),
            headers=headers
            | {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={cookie.group(1)}",
            },
        )
        return answer.status

    def _request(
        self, source: str, method: str, path: str, *, body: bytes = b"", headers: dict[str, str]
    ) -> "Answer":
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=120, source_address=(source, 0)
        )
        try:
            connection.request(method, path, body=body or None, headers=headers)
            response = connection.getresponse()
            return Answer(response.status, dict(response.getheaders()), response.read())
        finally:
            connection.close()


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, _migrated_database_file: Path
) -> Iterator[Stack]:
    """The app under gunicorn in production mode, behind nginx; torn down after the module."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `make test` installs it (apt-get install nginx-light)")
    folder = tmp_path_factory.mktemp("proxy")
    shutil.copy(_migrated_database_file, folder / "db.sqlite3")
    plain = process_env(folder)
    manage(
        plain,
        "shell",
        "--no-imports",
        "-c",
        "from django.contrib.auth.models import User; "
        f"User.objects.create_user({USERNAME!r}, password={PASSWORD!r}, is_staff=True)",
    )
    app_port, proxy_port = free_port(), free_port()
    production = plain | {
        "PRODUCTION": "true",
        "DEBUG": "false",
        "SECRET_KEY": "proxy-lockout-" + "s3cr3t-" * 8,
        "ALLOWED_HOSTS": "127.0.0.1",
        "WEBHOOK_SECRET": "esp:" + "w" * 32,
        "SECURE_SSL_REDIRECT": "false",  # plain HTTP on this machine, as `make serve`
        "STATIC_ROOT": str(folder / "static"),
        "TRUSTED_PROXIES": "127.0.0.1",
        "AXES_FAILURE_LIMIT": str(FAILURE_LIMIT),
    }
    # The login page's styles and scripts only: the API docs' bundles are not needed.
    manage(production, "collectstatic", "--no-input", "-v0", "-i", "drf_spectacular_sidecar")
    app = subprocess.Popen(
        [
            *(sys.executable, "-m", "gunicorn", "poolpatrol.wsgi", "--workers", "2"),
            *("--bind", f"127.0.0.1:{app_port}", "--no-control-socket"),
        ],
        cwd=ROOT,
        env=production,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "gunicorn.log").open("wb"),
    )
    nginx_dir = folder / "nginx"
    nginx_dir.mkdir()
    config = nginx_dir / "nginx.conf"
    # As root, nginx's workers would run as `nobody`, who cannot enter pytest's folders.
    user = "user root;" if os.geteuid() == 0 else ""
    config.write_text(
        PROXY_CONFIG.format(user=user, dir=nginx_dir, port=proxy_port, app_port=app_port)
    )
    proxy = subprocess.Popen(
        [
            *(NGINX, "-c", str(config), "-p", str(nginx_dir)),
            *("-e", str(nginx_dir / "error.log"), "-g", "daemon off;"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=(nginx_dir / "stderr.log").open("wb"),
    )
    try:
        wait_until_answering(app_port, app, "gunicorn")
        wait_until_answering(proxy_port, proxy, "nginx")
        yield Stack(proxy_port)
    finally:
        stop(proxy)
        stop(app)


def test_fault_65_wrong_passwords_through_the_proxy_lock_out_that_client_only(stack):
    attacker, user = "127.0.0.2", "127.0.0.3"

    tries = [stack.login(attacker, "wrong") for _ in range(FAILURE_LIMIT)]
    attacker_right = stack.login(attacker, PASSWORD)
    user_right = stack.login(user, PASSWORD)

    assert tries == [200] * (FAILURE_LIMIT - 1) + [429]
    assert attacker_right == 429  # the client who guessed is locked out…
    assert user_right == 302  # …and the real user, elsewhere behind the same proxy, is not


def test_fault_66_a_forged_forwarded_for_neither_dodges_the_lockout_nor_frames_another(stack):
    attacker, victim = "127.0.0.4", "127.0.0.5"

    # Each try claims another origin: new addresses, and the victim's own.
    tries = [
        stack.login(attacker, "wrong", forwarded_for=victim if n % 2 else f"192.0.2.{n}")
        for n in range(FAILURE_LIMIT)
    ]
    dodge = stack.login(attacker, PASSWORD, forwarded_for="192.0.2.200")
    victim_right = stack.login(victim, PASSWORD)

    assert tries[-1] == 429
    assert dodge == 429
    assert victim_right == 302
