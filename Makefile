# turnbench — `make help` lists the targets.
.DEFAULT_GOAL := help
PY ?= .venv/bin/python
TURNBENCH ?= .venv/bin/turnbench
DEFAULT_CORPUS ?= corpora/default
SEED ?= 20261130

## help: list the targets
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## setup: create .venv and install turnbench with its pinned dependencies
setup: .venv/.installed
.venv/.installed: pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[test]'
	touch $@

## test: run the unit and integration tests (integration tests start a real embedded stack)
test: setup
	$(PY) -m pytest

## jars: fetch the pinned OpenSearch jars into the user cache (once, via Maven) and compile the launcher
jars: setup
	$(PY) -m turnbench.stack.jars

## stack: start the stack in the background and record it (PROVIDER=auto|embedded|docker; auto picks and says why)
PROVIDER ?= auto
stack: setup
	$(TURNBENCH) stack up --provider $(PROVIDER)

## stack-down: stop exactly the recorded stack
stack-down: setup
	$(TURNBENCH) stack down

## bench-stack: median of 3 `stack up` to healthy (jars cached) with the OpenSearch/PostgreSQL split, and `stack down`
bench-stack: jars
	$(PY) -m turnbench.stack.bench

.PHONY: jars stack stack-down bench-stack

.PHONY: help setup test
