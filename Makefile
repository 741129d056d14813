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

.PHONY: demo test unit e2e lint typecheck bench site chromium redis-server haproxy postgresql hugo jekyll \
	clean fuzz fuzz-quick \
	page-modules mutate dist test-resolutions e2e-slow bench-smoke
MUTATE_STAMP := $(VENV)/.mutate-installed
FUZZ_STAMP := $(VENV)/.fuzz-installed
# Inputs per target: `make fuzz` is the campaign, `make test` runs a short seeded pass.
FUZZ_RUNS ?= 1000000
FUZZ_QUICK_RUNS ?= 2000

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The pinned Pyodide runtime (web/package-lock.json), reinstalled when the lock changes.
$(NODE_STAMP): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

chromium:
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; }
	@echo "browser tests use: $$($(CHROMIUM) --version 2>/dev/null)"

# Debian's redis-server backs the shared rate-limit tests (each test starts its own on loopback).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing Debian's redis-server for the shared rate-limit tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q redis-server; }

# Debian's haproxy is the load balancer in front of three backends in the scale tests and bench
# (each test writes its own config and runs its own haproxy on loopback).
haproxy:
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || { \
	  echo "installing Debian's haproxy for the load-balancer tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q haproxy; }

# Debian's hugo and jekyll build the sites `agentskit-web publish` is tested on
# (e2e/test_publish_generators.py writes each a site of its own and builds it).
hugo:
	@command -v hugo >/dev/null 2>&1 || { \
	  echo "installing Debian's hugo for the publish tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q hugo; }

jekyll:
	@command -v jekyll >/dev/null 2>&1 || { \
	  echo "installing Debian's jekyll for the publish tests"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q jekyll; }

# Debian's PostgreSQL server backs the shared turn-session tests: each test session runs its own
# cluster (initdb + pg_ctl in a temporary folder, loopback, a free port; bench/local_postgres.py).
# Debian keeps the binaries in /usr/lib/postgresql/<version>/bin, off PATH. The package's own
# "main" cluster is not wanted: createcluster.conf says so before the install.
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql for the shared turn-session tests"; \
	  $(SUDO) mkdir -p /etc/postgresql-common && \
	  { [ -e /etc/postgresql-common/createcluster.conf ] || \
	    echo 'create_main_cluster = false' | $(SUDO) tee /etc/postgresql-common/createcluster.conf >/dev/null; } && \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q \
	    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql; }

# dist/: incremental (cached wheel downloads, unchanged files are not rewritten).
site: $(STAMP) $(NODE_STAMP)
	$(PY) -m agentskit_web.cli build

$(FUZZ_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[fuzz]'
	touch $(FUZZ_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests e2e fuzz experiments
	$(VENV)/bin/ruff format --check src tests e2e fuzz experiments

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP) $(NODE_STAMP) redis-server postgresql haproxy
	$(VENV)/bin/pytest tests

e2e: $(STAMP) chromium site redis-server postgresql haproxy hugo jekyll
	$(VENV)/bin/pytest e2e

# Only the tests marked slow (a real Docusaurus build installed from npm; `make e2e` runs them too).
e2e-slow: $(STAMP) chromium site
	$(VENV)/bin/pytest e2e -m slow

# Every decoder and the markdown-to-view path under atheris; failing inputs land in fixtures/fuzz/.
fuzz: $(FUZZ_STAMP)
	$(PY) -m fuzz --runs $(FUZZ_RUNS)

fuzz-quick: $(FUZZ_STAMP)
	$(PY) -m fuzz --runs $(FUZZ_QUICK_RUNS)

$(MUTATE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[mutate]'
	touch $(MUTATE_STAMP)

# Mutation testing of the bounds, status codes and safety rules ([tool.mutmut] in
# pyproject.toml: the modules and the tests that guard them); prints every surviving
# mutant (`.venv/bin/mutmut show NAME` shows one's diff). Not part of `make test`: slow.
mutate: $(MUTATE_STAMP)
	$(VENV)/bin/mutmut run
	$(VENV)/bin/mutmut results


test: lint typecheck unit fuzz-quick test-resolutions e2e bench-smoke

# The release an owner installs: the sdist and a wheel whose package data holds the prebuilt
# assets, in release/ (reproducible: SOURCE_DATE_EPOCH, default the last commit's time).
dist: $(STAMP) $(NODE_STAMP)
	$(PY) -m agentskit_web.build.release

# The integration tests against the lowest and the newest supported MkDocs, Material and
# Sphinx (and every other host requirement): two venvs beside .venv, one installed with
# constraints/lowest.txt, one with the newest releases the ranges admit.
RESOLUTION_TESTS := tests/test_integrations.py tests/test_extras.py
RESOLUTION_EXTRAS := .[server,scale,postgres,build,mkdocs,sphinx,testing,insight]
RESOLUTION_SITE := mkdocs-material furo myst-parser pallets-sphinx-themes $(shell grep -o '"hypothesis==[^"]*"' pyproject.toml | tr -d '"')
test-resolutions: $(NODE_STAMP)
	test -x .venv-lowest/bin/python || $(PYTHON) -m venv .venv-lowest
	.venv-lowest/bin/python -m pip install --quiet -c constraints/lowest.txt \
	  -e '$(RESOLUTION_EXTRAS)' $(RESOLUTION_SITE)
	.venv-lowest/bin/python -m pip list --format=freeze | grep -iE '^(mkdocs|mkdocs-material|sphinx|pydantic)=='
	.venv-lowest/bin/pytest -p no:cacheprovider $(RESOLUTION_TESTS)
	test -x .venv-newest/bin/python || $(PYTHON) -m venv .venv-newest
	.venv-newest/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager \
	  -e '$(RESOLUTION_EXTRAS)' $(RESOLUTION_SITE)
	.venv-newest/bin/python -m pip list --format=freeze | grep -iE '^(mkdocs|mkdocs-material|sphinx|pydantic)=='
	.venv-newest/bin/pytest -p no:cacheprovider $(RESOLUTION_TESTS)

# Re-measure the standard-library modules the pages import (web/page-modules.txt, which
# the build trims python_stdlib.zip to): the whole browser suite, recording every import.
page-modules: $(STAMP) chromium site
	$(VENV)/bin/pytest e2e --record-modules web/page-modules.txt

# The docs site and the Ask backend on one origin, http://127.0.0.1:$(DEMO_PORT) (Ctrl-C stops it).
demo: site
	$(PY) -m agentskit_web.cli demo --no-build --port $(DEMO_PORT)

bench: $(STAMP) chromium site redis-server postgresql haproxy
	$(PY) -m agentskit_web.bench protocol
	$(PY) -m agentskit_web.bench boot --no-build
	$(PY) -m agentskit_web.bench weight --no-build
	$(PY) -m agentskit_web.bench ask --no-build
	$(PY) -m agentskit_web.bench static
	$(PY) -m agentskit_web.bench render --no-build
	$(PY) -m agentskit_web.bench turn --no-build
	$(PY) -m agentskit_web.bench backend
	$(PY) -m agentskit_web.bench question-log
	$(PY) -m agentskit_web.bench answers
	$(PY) -m agentskit_web.bench embed --no-build
	$(PY) -m agentskit_web.bench idle --no-build
	$(PY) -m agentskit_web.bench scale
	$(PY) -m agentskit_web.bench index --runs 3

# Every `make bench` section once, with its smallest inputs and one run (part of `make test`):
# a section that no longer runs fails CI instead of waiting for the next person to call it.
# The figures are printed but not judged.
bench-smoke: $(STAMP) chromium site redis-server postgresql haproxy
	$(PY) -m agentskit_web.bench protocol --smoke
	$(PY) -m agentskit_web.bench boot --smoke --no-build
	$(PY) -m agentskit_web.bench weight --smoke --no-build
	$(PY) -m agentskit_web.bench ask --smoke --no-build
	$(PY) -m agentskit_web.bench static --pages 200 --browser-runs 1
	$(PY) -m agentskit_web.bench render --smoke --no-build
	$(PY) -m agentskit_web.bench turn --smoke --no-build
	$(PY) -m agentskit_web.bench backend --smoke
	$(PY) -m agentskit_web.bench question-log --smoke
	$(PY) -m agentskit_web.bench answers
	$(PY) -m agentskit_web.bench embed --smoke --no-build
	$(PY) -m agentskit_web.bench idle --smoke --no-build
	$(PY) -m agentskit_web.bench scale --smoke
	$(PY) -m agentskit_web.bench index --smoke

clean:
	rm -rf dist build release .pytest_cache .mypy_cache .ruff_cache e2e/artifacts
