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

.PHONY: help setup test
