# Pool Patrol — make run (the demo on the embedded default) and make test.
# Needs Python 3.11+ and git. uv is installed into .tools/ if it is not on PATH.

SHELL := /bin/bash
.DEFAULT_GOAL := help
UV ?= $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
# `uv run` would sync again (adding the dev group and its ~29 packages back, or
# checking it): every target syncs first through setup/setup-dev, so run as is.
RUN := $(UV) run --no-sync
PY := $(RUN) python
# Python caches compiled bytecode unless told not to; some machines set
# PYTHONDONTWRITEBYTECODE, which recompiles Django and every test module in
# every process (about 10 s a test run, 1–2 s each manage.py start).
unexport PYTHONDONTWRITEBYTECODE
HOST ?= 127.0.0.1
PORT ?= 8000
# pytest-xdist processes for the unit suite (one per core); the browser tests
# drive one Chromium and run on their own afterwards.
TEST_WORKERS ?= auto
# The unit suite (make evaluate and make model-check run the rest). `make test` runs it
# in two steps: the fast tests, then those that start real processes and servers
# (marked slow_process: gunicorn, qcluster, nginx, redis, manage.py, live_server).
UNIT := not evaluation and not model_server

.PHONY: evaluate faults model model-stop model-check help setup setup-dev browser redis proxy demo run serve test lint format clean

help:
	@echo "make run    set up, load the demo program and serve it on http://$(HOST):$(PORT)/ (dashboard) and /admin/"
	@echo "            (demo passwords are kept; make run RESET_PASSWORDS=1 sets new ones)"
	@echo "make test   install test dependencies, lint, run the whole suite"
	@echo "make serve  the demo in production mode: gunicorn, workers and the scheduler (Procfile, honcho)"
	@echo "make model  start a local model server (llama.cpp, a packaged model) and print its settings"

.tools/bin/uv:
	python3 -m venv .tools
	.tools/bin/pip install -q 'uv>=0.5,<1'

# --inexact: the runtime packages without removing the dev group a `make test`
# installed, so `make run` after `make test` installs and uninstalls nothing.
setup: $(filter .tools/bin/uv,$(UV))
	$(UV) sync --frozen --no-dev --inexact

setup-dev: $(filter .tools/bin/uv,$(UV))
	$(UV) sync --frozen

# The main job on the embedded default: migrate, load the demo program and
# create the demo logins. Their passwords are printed when set and kept in
# var/demo-logins.txt; a re-run keeps them (and everyone's sessions) unless
# RESET_PASSWORDS=1.
demo: setup
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo $(if $(filter 1 true yes,$(RESET_PASSWORDS)),--reset-passwords)

# A django-q2 worker runs beside the web server (sends, replies, the deadline sweep).
run: demo
	$(PY) manage.py qcluster & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	DEBUG=$${DEBUG:-true} $(PY) manage.py runserver $(HOST):$(PORT)

# Production mode on the embedded default, every process of the Procfile under honcho:
# gunicorn, a worker cluster and the scheduler. A secret key and a webhook secret are
# made once and kept in var/; plain HTTP on this machine, so no HTTPS redirect.
serve: demo
	@mkdir -p var && [ -s var/secret-key ] || $(PY) -c "import secrets; print(secrets.token_urlsafe(64))" > var/secret-key
	@[ -s var/webhook-secret ] || $(PY) -c "import secrets; print('provider:' + secrets.token_urlsafe(24))" > var/webhook-secret
	PRODUCTION=true SECRET_KEY="$$(cat var/secret-key)" WEBHOOK_SECRET="$$(cat var/webhook-secret)" \
	  ALLOWED_HOSTS=127.0.0.1,localhost SECURE_SSL_REDIRECT=false $(PY) manage.py collectstatic --no-input -v0
	PRODUCTION=true SECRET_KEY="$$(cat var/secret-key)" WEBHOOK_SECRET="$$(cat var/webhook-secret)" \
	  ALLOWED_HOSTS=127.0.0.1,localhost SECURE_SSL_REDIRECT=false HOST=$(HOST) PORT=$(PORT) \
	  $(RUN) honcho start -f Procfile

# The browser tests drive Debian's Chromium (Playwright cannot download one here) and run
# axe-core in each page: the npm package pinned in package-lock.json, installed into
# node_modules/ (npm ci; the tests read it from there, offline).
browser:
	@command -v chromium >/dev/null || [ -x "$${CHROMIUM_PATH:-/usr/bin/chromium}" ] || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "make test needs Chromium for the browser tests: sudo apt-get install chromium, or set CHROMIUM_PATH" >&2; exit 1; fi; }
	@[ -f node_modules/axe-core/axe.min.js ] || command -v npm >/dev/null || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm; \
	  else echo "make test needs npm for axe-core in the browser tests: sudo apt-get install npm" >&2; exit 1; fi; }
	@[ -f node_modules/axe-core/axe.min.js ] || npm ci --no-audit --no-fund

redis:
	@command -v redis-server >/dev/null || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; \
	  else echo "make test needs redis-server for the Redis broker test: sudo apt-get install redis-server" >&2; exit 1; fi; }

# The login-lockout test puts Debian's nginx in front of gunicorn, as a deployment's proxy.
proxy:
	@command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light; \
	  else echo "make test needs nginx for the proxy test: sudo apt-get install nginx-light" >&2; exit 1; fi; }

test: setup-dev browser redis proxy
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) lint-imports
	$(RUN) mypy
	$(RUN) pytest -n $(TEST_WORKERS) --dist load -m "$(UNIT) and not slow_process" --ignore=dashboard/tests/browser
	$(RUN) pytest -n $(TEST_WORKERS) --dist load -m "$(UNIT) and slow_process" --ignore=dashboard/tests/browser
	$(RUN) pytest dashboard/tests/browser

# A local OpenAI-compatible model server (llama.cpp's llama-server and a packaged model,
# docs/operating.md#a-local-model-server); prints the settings that point the app at it.
model:
	@bash scripts/model_server.sh start $(MODEL)

model-stop:
	@bash scripts/model_server.sh stop

# The model path against that server: wiring, not quality (tests/model_server).
model-check: setup-dev
	bash scripts/model_server.sh start $(MODEL) >/dev/null
	MODEL_SERVER_URL=http://127.0.0.1:$${MODEL_PORT:-8088}/v1 $(RUN) pytest -p no:xdist -m model_server tests/model_server; \
	  status=$$?; bash scripts/model_server.sh stop; exit $$status

# The fault suite alone (tests/faults, docs/reliability.md); `make test` runs it too.
faults: setup-dev proxy
	$(RUN) pytest -n $(TEST_WORKERS) --dist load -m faults tests/faults

# Every labelled file in evals/data against its own target (evals/data/targets.toml),
# then the tests that run evaluate and the bench_* commands end to end.
evaluate: setup-dev
	LOG_LEVEL=warning $(RUN) python manage.py evaluate --suite
	$(RUN) pytest -n $(TEST_WORKERS) --dist load -m evaluation

format: setup-dev
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

clean:
	rm -rf .venv .tools var staticfiles
