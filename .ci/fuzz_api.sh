#!/usr/bin/env bash
# Fuzz the live JSON API from its own OpenAPI schema with schemathesis.
#
# Self-contained: a scratch VAR_DIR (SQLite, never DATABASE_URL), migrate,
# load the demo program, a token for the demo auditor (who may read and write
# everything the API offers), gunicorn on a free port, then schemathesis with
# the token. Fails on any 5xx or any response that breaks the schema. Needs
# only what `uv sync --frozen` installs (schemathesis is a dev dependency).
#
#   .ci/fuzz_api.sh                 # defaults below
#   FUZZ_MAX_EXAMPLES=200 .ci/fuzz_api.sh
#
# The scratch directory goes when it ends; the JUnit report stays in
# FUZZ_REPORT_DIR (var/ci/fuzz by default), the path schemathesis prints.
set -euo pipefail
cd "$(dirname "$0")/.."

UV="${UV:-$(command -v uv 2>/dev/null || echo .tools/bin/uv)}"
MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-30}"
SEED="${FUZZ_SEED:-20261123}"
REPORT_DIR="${FUZZ_REPORT_DIR:-$PWD/var/ci/fuzz}"
CHECKS="not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,unsupported_method,ignored_auth"

scratch="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT INT TERM

unset DATABASE_URL REDIS_URL PRODUCTION
export VAR_DIR="$scratch/var" DEBUG=false LOG_LEVEL="${LOG_LEVEL:-warning}"
# The fuzzer sends thousands of requests: the throttles must not answer for the API.
export API_THROTTLE_USER=1000000/hour API_THROTTLE_ANON=1000000/hour
py() { "$UV" run --frozen python "$@"; }

echo "== fuzz: demo data in a scratch VAR_DIR (removed on exit)"
py manage.py migrate --no-input >"$scratch/setup.log" 2>&1
py manage.py load_demo --reset-passwords >>"$scratch/setup.log" 2>&1
token="$(py manage.py drf_create_token auditor 2>>"$scratch/setup.log" | awk '/^Generated token/ {print $3}')"
[ -n "$token" ] || { echo "no API token made"; cat "$scratch/setup.log"; exit 1; }

port="$(py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
echo "== fuzz: gunicorn on $base"
"$UV" run --frozen gunicorn poolpatrol.wsgi --bind "127.0.0.1:$port" --workers 2 \
  --timeout 60 --log-level warning >"$scratch/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  if py -c "import urllib.request; urllib.request.urlopen('$base/health', timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || { echo "server died"; cat "$scratch/server.log"; exit 1; }
  sleep 0.2
done

echo "== fuzz: schemathesis against $base/api/schema/ ($MAX_EXAMPLES examples per operation)"
status=0
"$UV" run --frozen schemathesis run "$base/api/schema/" \
  --header "Authorization: Token $token" \
  --checks "$CHECKS" \
  --max-examples "$MAX_EXAMPLES" \
  --seed "$SEED" \
  --workers 1 \
  --request-timeout 30 \
  --max-redirects 0 \
  --no-color \
  --report junit --report-dir "$REPORT_DIR" || status=$?

if [ "$status" -ne 0 ]; then
  echo "== fuzz failed; server log tail:"
  tail -n 80 "$scratch/server.log"
fi
exit "$status"
