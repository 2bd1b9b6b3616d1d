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

DEMO_STORE ?= var/demo.sqlite
PORT ?= 8501

.PHONY: install browser test run demo-store clean

$(STAMP): requirements.txt requirements-dev.txt requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements-dev.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m memory_core.cli prepare-embedder >/dev/null || echo "warning: no ONNX embedder; searches use sentence-transformers"
	touch $(STAMP)

install: $(STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: install browser
	$(PY) -m pytest -q

demo-store: install
	$(VENV)/bin/agent-memory seed-demo --path $(DEMO_STORE) --force

run: install
	$(VENV)/bin/agent-memory serve --path $(DEMO_STORE) --demo --port $(PORT)

clean:
	rm -rf $(VENV) var
