# Pool Patrol — make run (the demo on the embedded default) and make test.
# Needs Python 3.11+ and git. uv is installed into .tools/ if it is not on PATH.

SHELL := /bin/bash
.DEFAULT_GOAL := help
UV ?= $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
PY := $(UV) run --frozen python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: help setup setup-dev browser redis demo run test lint format clean

help:
	@echo "make run    set up, load the demo program and serve it on http://$(HOST):$(PORT)/ (dashboard) and /admin/"
	@echo "make test   install test dependencies, lint, run the whole suite"

.tools/bin/uv:
	python3 -m venv .tools
	.tools/bin/pip install -q 'uv>=0.5,<1'

setup: $(if $(findstring .tools/,$(UV)),.tools/bin/uv)
	$(UV) sync --frozen --no-dev

setup-dev: $(if $(findstring .tools/,$(UV)),.tools/bin/uv)
	$(UV) sync --frozen

# The main job on the embedded default: migrate, load the demo program and
# create the demo logins (fresh passwords each time, printed below).
demo: setup
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo --reset-passwords

# A django-q2 worker runs beside the web server (sends, replies, the deadline sweep).
run: demo
	$(PY) manage.py qcluster & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	DEBUG=$${DEBUG:-true} $(PY) manage.py runserver $(HOST):$(PORT)

# The browser tests drive Debian's Chromium (Playwright cannot download one here).
browser:
	@command -v chromium >/dev/null || [ -x "$${CHROMIUM_PATH:-/usr/bin/chromium}" ] || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "make test needs Chromium for the browser tests: sudo apt-get install chromium, or set CHROMIUM_PATH" >&2; exit 1; fi; }

redis:
	@command -v redis-server >/dev/null || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; \
	  else echo "make test needs redis-server for the Redis broker test: sudo apt-get install redis-server" >&2; exit 1; fi; }

test: setup-dev browser redis
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen lint-imports
	$(UV) run --frozen mypy
	$(UV) run --frozen pytest

format: setup-dev
	$(UV) run --frozen ruff check --fix .
	$(UV) run --frozen ruff format .

clean:
	rm -rf .venv .tools var staticfiles
