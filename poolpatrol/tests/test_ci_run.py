""".ci/run stops the services it started, however it ends.

The script runs from a copy in a scratch checkout, with make, the fuzz run and
services.sh stubbed: only its own control flow is under test here.
"""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

# Starts .ci/run with stub services: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

ROOT = Path(__file__).resolve().parents[2]

SERVICES_STUB = """#!/usr/bin/env bash
if [ "${1:-}" = stop ]; then shift; echo "stop $*" >>"$CALLS"; exit 0; fi
echo start >>"$CALLS"
for name in $STUB_STARTS; do echo "$name" >>"$SERVICES_STARTED_FILE"; done
"""
MAKE_STUB = """#!/usr/bin/env bash
if [ -n "${DATABASE_URL:-}" ]; then exit "${POSTGRES_TESTS_EXIT:-0}"; fi
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_ci(tmp_path: Path, stub_starts: str, postgres_tests_exit: int) -> tuple[int, str]:
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    executable(tmp_path / ".ci" / "services.sh", SERVICES_STUB)
    executable(tmp_path / ".ci" / "fuzz_api.sh", "#!/usr/bin/env bash\n")
    (tmp_path / "bin").mkdir()
    executable(tmp_path / "bin" / "make", MAKE_STUB)
    calls = tmp_path / "calls"
    # The stub tells the PostgreSQL pass by DATABASE_URL: never inherit the caller's.
    inherited = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}
    env = inherited | {
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "CALLS": str(calls),
        "STUB_STARTS": stub_starts,
        "POSTGRES_TESTS_EXIT": str(postgres_tests_exit),
    }
    result = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, timeout=60
    )
    return result.returncode, calls.read_text()


@pytest.mark.parametrize("postgres_tests_exit", [0, 3])
def test_it_stops_the_services_it_started(tmp_path, postgres_tests_exit):
    returncode, calls = run_ci(tmp_path, "postgres redis", postgres_tests_exit)
    assert returncode == postgres_tests_exit
    assert calls.splitlines() == ["start", "stop postgres redis"]


def test_it_leaves_running_the_services_it_did_not_start(tmp_path):
    returncode, calls = run_ci(tmp_path, "", 0)
    assert returncode == 0
    assert calls.splitlines() == ["start"]
