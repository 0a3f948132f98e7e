# make test: set up everything (venv, real MCP peers, Node 22) and run lint, types and tests.
# make demo: set up the venv and run examples/quickstart.py against a real MCP server.
# nox: the portable part of the suite on every supported Python found (noxfile.py).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PEERS  := tests/peers
STAMP  := $(VENV)/.installed-stamp
NODE_STAMP := $(PEERS)/node_modules/.installed-stamp
TASKS_VENV := $(PEERS)/tasks-venv
TASKS_STAMP := $(TASKS_VENV)/.installed-stamp
MCP1_VENV := $(PEERS)/mcp1-venv
MCP1_STAMP := $(MCP1_VENV)/.installed-stamp
RAY_VENV := $(PEERS)/ray-venv
RAY_STAMP := $(RAY_VENV)/.installed-stamp
# CrewAI's venv is about 1 GB and 2 to 6 minutes to install: built once per machine (per
# version of its requirements) under ~/.cache, and linked into each checkout
CREWAI_VENV := $(PEERS)/crewai-venv
CREWAI_STAMP := $(CREWAI_VENV)/.installed-stamp
CREWAI_CACHE := $(HOME)/.cache/mcp-sync/crewai-venv-$(shell cksum < $(PEERS)/crewai-requirements.txt | cut -d' ' -f1)

.PHONY: test demo bench lint typecheck venv peers services clean docs

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,dev,validation,docs,dask]'
	touch $@

$(NODE_STAMP): $(PEERS)/package.json $(PEERS)/package-lock.json
	cd $(PEERS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# fastmcp-tasks (the 2026 tasks extension, server side) pins an older fastmcp: its own venv.
$(TASKS_STAMP): $(PEERS)/tasks-requirements.txt | $(STAMP)
	test -x $(TASKS_VENV)/bin/python || $(PY) -m venv $(TASKS_VENV)
	$(TASKS_VENV)/bin/python -m pip install -q -r $(PEERS)/tasks-requirements.txt
	touch $@

# The official SDK's 1.x line (connect() to its FastMCP) cannot share .venv with mcp 2.x.
$(MCP1_STAMP): $(PEERS)/mcp1-requirements.txt pyproject.toml | $(STAMP)
	test -x $(MCP1_VENV)/bin/python || $(PY) -m venv $(MCP1_VENV)
	$(MCP1_VENV)/bin/python -m pip install -q -r $(PEERS)/mcp1-requirements.txt -e .
	touch $@

# Ray (docs/scale.md's recipe on Ray, tests/services/test_ray.py) pins its own grpcio and
# protobuf: its own venv, with mcp_sync and its redis extra.
$(RAY_STAMP): $(PEERS)/ray-requirements.txt pyproject.toml | $(STAMP)
	test -x $(RAY_VENV)/bin/python || $(PY) -m venv $(RAY_VENV)
	$(RAY_VENV)/bin/python -m pip install -q -r $(PEERS)/ray-requirements.txt -e '.[redis]'
	touch $@

# CrewAI (tests/integrations/test_crewai_tools.py) pins its own mcp 1.x and pydantic; the tests
# put this checkout's mcp_sync on PYTHONPATH, so the venv holds only CrewAI and mcp_sync's needs.
$(CREWAI_STAMP): $(PEERS)/crewai-requirements.txt | $(STAMP)
	test -f $(CREWAI_CACHE)/.installed-stamp || { rm -rf $(CREWAI_CACHE) && \
	  $(PY) -m venv $(CREWAI_CACHE) && \
	  $(CREWAI_CACHE)/bin/python -m pip install -q -r $(PEERS)/crewai-requirements.txt && \
	  touch $(CREWAI_CACHE)/.installed-stamp; }
	test -L $(CREWAI_VENV) || rm -rf $(CREWAI_VENV)
	ln -sfn $(CREWAI_CACHE) $(CREWAI_VENV)

venv: $(STAMP)
peers: $(NODE_STAMP) $(TASKS_STAMP) $(MCP1_STAMP) $(RAY_STAMP) $(CREWAI_STAMP)

# Programs the tests start themselves: redis-server (the fleet OAuth store's tests), bwrap
# (the stdio sandbox's tests).
services:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq redis-server; \
	  else echo "make test needs redis-server: sudo apt-get install redis-server" >&2; exit 1; fi; }
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "make test needs bwrap (the stdio sandbox's tests): sudo apt-get install bubblewrap" >&2; exit 1; fi; }
	@command -v tinyproxy >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq tinyproxy; \
	  else echo "make test needs tinyproxy (the authenticating proxy's tests): sudo apt-get install tinyproxy" >&2; exit 1; fi; }

lint: venv
	$(VENV)/bin/ruff check mcp_sync tests examples bench
	$(VENV)/bin/ruff format --check mcp_sync tests examples bench

typecheck: venv
	$(VENV)/bin/mypy --strict mcp_sync

# The suite in parallel: most tests wait on servers, sockets and subprocesses, so twice as many
# workers as cores keeps the CPU busy. Tests marked `alone` then run one at a time.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
PARALLEL := -n $(TEST_WORKERS) --dist loadscope
# (only the modules that have such tests are collected for that second run)
ALONE_MODULES = $(shell grep -rlE --include='test_*.py' --exclude-dir=peers 'mark\.alone' tests)

# Compiled once here: where PYTHONDONTWRITEBYTECODE is set (this machine's image sets it), every
# server and CLI process the suite starts would compile mcp_sync again (0.15 s of CPU each).
test: venv peers services lint typecheck docs
	PYTHONDONTWRITEBYTECODE= $(PY) -m compileall -q -x tests/peers mcp_sync tests >/dev/null
	$(VENV)/bin/pytest $(PARALLEL) -m 'not alone' --cov=mcp_sync --cov-report=
	$(VENV)/bin/pytest -m alone $(ALONE_MODULES) --cov=mcp_sync --cov-append --cov-report=term:skip-covered \
	  --cov-fail-under=91

docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

demo: venv
	$(PY) examples/quickstart.py

bench: venv peers
	$(PY) -c 'import matplotlib' 2>/dev/null || $(PY) -m pip install -q -e '.[bench]'
	$(PY) -m bench --json bench/last-run.json --plot bench/last-run.png

clean:
	rm -rf $(VENV) .nox $(PEERS)/node_modules $(TASKS_VENV) $(MCP1_VENV) $(RAY_VENV) $(CREWAI_VENV) site .coverage .pytest_cache .mypy_cache .ruff_cache
