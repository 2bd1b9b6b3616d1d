# Two entry points: `make run` (admin app on a demo store) and `make test` (every test).
# Both create .venv and install everything on first use. Torch is installed alone first, pinned to
# the CPU build this machine's pip serves (anything else would pull a multi-GB CUDA build).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Agent frameworks: no telemetry, tracing or usage reporting from tests or examples.
export CREWAI_TRACING_ENABLED := false
export CREWAI_DISABLE_TELEMETRY := true
export CREWAI_DISABLE_TRACKING := true
export OTEL_SDK_DISABLED := true
export LANGSMITH_TRACING := false
export LANGCHAIN_TRACING_V2 := false
export ANONYMIZED_TELEMETRY := false

# CrewAI pins pydantic 2.12 (the main stack is on 2.14), so it gets its own venv with the project
# installed --no-deps over memory_core's light runtime deps; Deep Agents shares .venv.
CREWAI_VENV := .venv-crewai
CREWAI_PY := $(CREWAI_VENV)/bin/python
CREWAI_STAMP := $(CREWAI_VENV)/.installed

DEMO_STORE ?= var/demo.sqlite
PORT ?= 8501

.PHONY: install browser claude-code test test-crewai crewai-venv run demo-store screenshots clean

$(STAMP): requirements.txt requirements-dev.txt requirements.lock pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements-dev.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m memory_core.cli prepare-embedder >/dev/null || echo "warning: no ONNX embedder; searches use sentence-transformers"
	touch $(STAMP)

install: $(STAMP)

$(CREWAI_STAMP): requirements-crewai.txt requirements-crewai.lock pyproject.toml setup.py
	test -x $(CREWAI_PY) || $(PYTHON) -m venv $(CREWAI_VENV)
	$(CREWAI_PY) -m pip install --quiet --upgrade pip
	$(CREWAI_PY) -m pip install --quiet -r requirements-crewai.txt -c requirements-crewai.lock
	$(CREWAI_PY) -m pip install --quiet --no-deps -e .
	touch $(CREWAI_STAMP)

crewai-venv: $(CREWAI_STAMP)

# The adapter contract suite and the Deep Agents/CrewAI equivalence test, in the CrewAI venv.
test-crewai: crewai-venv
	$(CREWAI_PY) -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning tests/adapters

browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The real Claude Code for tests/mcp/test_claude_code.py (pinned: docs/dependencies.md). A native
# binary from npm, kept out of the repo in .tools/; installed when missing or another version.
CLAUDE_CODE_VERSION := 2.1.332
CLAUDE_CODE := .tools/claude-code/node_modules/.bin/claude

claude-code:
	@$(CLAUDE_CODE) --version 2>/dev/null | grep -q '^$(CLAUDE_CODE_VERSION) ' || npm install --prefix .tools/claude-code --no-audit --no-fund @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)

# The second run repeats the service-level suites on PostgreSQL (a real server the run starts and
# stops, tests/pg_server.py); tests/contract runs on both backends in the first.
PG_SUITES := tests/unit/ingest tests/unit/policy tests/unit/retrieve tests/unit/tools tests/unit/extract \
	tests/unit/admin_ui tests/unit/ambient tests/unit/hostmem tests/unit/mcp tests/unit/test_maintenance.py

test: install browser claude-code crewai-venv
	$(PY) -m pytest -q
	$(PY) -m pytest -q -p no:cacheprovider --store-backend postgresql $(PG_SUITES)
	$(MAKE) --no-print-directory test-crewai

# Refresh docs/screenshots/ from a freshly built demo store (not part of `make test`).
screenshots: install browser
	UPDATE_SCREENSHOTS=1 $(PY) -m pytest -q tests/e2e/test_screenshots.py

demo-store: install
	$(VENV)/bin/agent-memory seed-demo --path $(DEMO_STORE) --force

run: install
	$(VENV)/bin/agent-memory serve --path $(DEMO_STORE) --demo --port $(PORT)

clean:
	rm -rf $(VENV) $(CREWAI_VENV) var .tools
