# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Each step is a file target, so a second run is quick when nothing changed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test unit lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests e2e
	$(VENV)/bin/ruff format --check src tests e2e

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest tests

test: lint typecheck unit

demo: $(STAMP)
	$(PY) -m agentskit_web.cli demo

bench: $(STAMP)
	$(PY) -m agentskit_web.bench

clean:
	rm -rf dist build .pytest_cache .mypy_cache .ruff_cache
