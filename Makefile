# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Each step is a file target or an incremental command, so a second run is quick.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := web/node_modules/.package-lock.json
# Debian's chromium drives the browser tests and the benchmark (Playwright never downloads a browser).
CHROMIUM ?= chromium
DEMO_PORT ?= 8000
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)

.PHONY: demo test unit e2e lint typecheck bench site chromium clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The pinned Pyodide + PyScript runtime (web/package-lock.json), reinstalled when the lock changes.
$(NODE_STAMP): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

chromium:
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; }

# dist/: incremental (cached wheel downloads, unchanged files are not rewritten).
site: $(STAMP) $(NODE_STAMP)
	$(PY) -m agentskit_web.cli build

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests e2e
	$(VENV)/bin/ruff format --check src tests e2e

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/pytest tests

e2e: $(STAMP) chromium site
	$(VENV)/bin/pytest e2e

test: lint typecheck unit e2e

# The docs site and the Ask backend on one origin, http://127.0.0.1:$(DEMO_PORT) (Ctrl-C stops it).
demo: site
	$(PY) -m agentskit_web.cli demo --no-build --port $(DEMO_PORT)

bench: $(STAMP) chromium site
	$(PY) -m agentskit_web.bench protocol
	$(PY) -m agentskit_web.bench boot --no-build
	$(PY) -m agentskit_web.bench ask --no-build
	$(PY) -m agentskit_web.bench render --no-build
	$(PY) -m agentskit_web.bench backend
	$(PY) -m agentskit_web.bench embed --no-build

clean:
	rm -rf dist build .pytest_cache .mypy_cache .ruff_cache e2e/artifacts
