# turnbench — `make help` lists the targets.
.DEFAULT_GOAL := help
.PHONY: help setup test test-docker lint jars images compose-plugin docker-engine docker-engine-stop bench-docker stack stack-down bench-stack corpus regen-check bench-generator bench-answers baseline-answers-none verify-answers-none bench-load bench-harness bench gate baseline verify measure qmsum bench-qmsum
PY ?= .venv/bin/python
TURNBENCH ?= .venv/bin/turnbench
DEFAULT_CORPUS ?= corpora/default

## help: list the targets
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## setup: create .venv and install turnbench with its pinned dependencies
setup: .venv/.installed
.venv/.installed: pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[test,lint]'
	touch $@

## test: run the unit and integration tests (integration tests start a real embedded stack)
test: setup
	$(PY) -m pytest

## test-docker: the integration tests again on the docker provider (a Docker engine, the compose v2 plugin and the images: see `make images`)
test-docker: setup
	TURNBENCH_TEST_PROVIDER=docker $(PY) -m pytest -m integration

## lint: ruff (style, imports, likely bugs) and mypy (types) over the package and the tests
lint: setup
	.venv/bin/ruff check turnbench tests benchmarks
	.venv/bin/mypy

## jars: fetch the pinned OpenSearch jars into the user cache (once, via Maven) and compile the launcher
jars: setup
	$(TURNBENCH) jars

# -- Docker: images with no registry, the compose v2 plugin, a private engine where there is none --
## images: build turnbench-local/{debian,postgres,opensearch} with no registry (compose/images/build.sh; a second build reuses every layer)
images:
	compose/images/build.sh all
	@echo "use them: export TURNBENCH_OPENSEARCH_IMAGE=turnbench-local/opensearch:2.19.6 TURNBENCH_POSTGRES_IMAGE=turnbench-local/postgres:15"

## compose-plugin: build the pinned docker compose v2 from the Go module proxy into ~/.docker/cli-plugins (cached in ~/.cache/turnbench/compose)
compose-plugin:
	.ci/compose-plugin.sh

## docker-engine: install (Debian docker.io) and start a private dockerd on this machine (root, no Docker): loopback only, pulls refused; then eval "$(.ci/docker-engine.sh env)"
docker-engine:
	.ci/docker-engine.sh install
	.ci/docker-engine.sh start

## docker-engine-stop: stop the private dockerd by its recorded pid; remove its bridges, mounts and the pull guard (images kept)
docker-engine-stop:
	.ci/docker-engine.sh stop

## bench-docker: image build cold and warm, container start to healthy per service, `make bench` on docker beside embedded (stage split)
bench-docker: corpus jars
	$(PY) -m benchmarks.docker --corpus $(DEFAULT_CORPUS)

## stack: start the stack in the background and record it (PROVIDER=auto|embedded|docker; auto picks and says why)
PROVIDER ?= auto
stack: setup
	$(TURNBENCH) stack up --provider $(PROVIDER)

## stack-down: stop exactly the recorded stack
stack-down: setup
	$(TURNBENCH) stack down

## bench-stack: median of 3 `stack up` to healthy (jars cached) with the OpenSearch/PostgreSQL split, and `stack down`
bench-stack: jars
	$(PY) -m benchmarks.stack

## corpus: regenerate the default corpus into $(DEFAULT_CORPUS) from fixtures/default.manifest.json (skipped when it already validates its hashes)
corpus: setup
	@if [ -f $(DEFAULT_CORPUS)/manifest.json ] && cmp -s $(DEFAULT_CORPUS)/manifest.json fixtures/default.manifest.json && $(PY) -c "import sys; from turnbench.corpus.format import open_corpus; open_corpus(sys.argv[1])" $(DEFAULT_CORPUS) 2>/dev/null; then \
		echo "$(DEFAULT_CORPUS): matches fixtures/default.manifest.json; hashes verified"; \
	else \
		rm -rf $(DEFAULT_CORPUS) && $(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out $(DEFAULT_CORPUS) --workers 2; \
	fi

## regen-check: regenerate fixtures/small and the default corpus from their manifests and require identical bytes
regen-check: setup
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/small/manifest.json --out "$$tmp/small" && \
	diff -r -x stats.json fixtures/small "$$tmp/small" && echo "fixtures/small: byte-identical" && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/default" --workers 2 && \
	cmp fixtures/default.manifest.json "$$tmp/default/manifest.json" && echo "default corpus: manifest byte-identical"

## bench-generator: wall time, words/s and peak RSS for 200 and 2,000 meetings, and the 2-worker/1-worker ratio
bench-generator: setup
	$(PY) -m benchmarks.generator

# -- answer engine --
## bench-answers: every aggregation query of the default corpus answered on the embedded stack (target <= 5 s)
bench-answers: corpus jars
	$(PY) -m benchmarks.answers --corpus $(DEFAULT_CORPUS)

## baseline-answers-none: rewrite baselines/answers-none: the none answerer (the floor) on the regenerated default corpus; no stack
baseline-answers-none: setup
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	rm -rf baselines/answers-none && \
	$(TURNBENCH) answer --corpus "$$tmp/corpus" --answerer none --out baselines/answers-none

## verify-answers-none: the none answerer on the regenerated default corpus, byte-identical to baselines/answers-none
verify-answers-none: setup
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	$(TURNBENCH) answer --corpus "$$tmp/corpus" --answerer none --out "$$tmp/none" >/dev/null && \
	status=0 && for f in answers.md answers.json answers.jsonl claim.sha256; do \
	  if cmp -s baselines/answers-none/$$f "$$tmp/none/$$f"; then echo "verify: $$f byte-identical to baselines/answers-none"; \
	  else echo "verify: $$f DIFFERS from baselines/answers-none/$$f"; diff -u baselines/answers-none/$$f "$$tmp/none/$$f" | head -20; status=1; fi; \
	done; exit $$status

# -- load and retrieval arms --
## bench-load: load the default corpus into a fresh embedded stack; time split, passages/s, queries/s at depth 100, peak RSS
bench-load: corpus jars
	$(PY) -m benchmarks.load --corpus $(DEFAULT_CORPUS)

## bench-harness: judge and score 10,000 queries x 100 ranked passages (target <= 5 s); prints the stage split
bench-harness: setup
	$(PY) -m benchmarks.harness

# -- bench, baselines and the CI check --
ARM ?= bm25
CONTROL ?= bm25
RESULTS ?= results/latest
# `make verify PROVIDER=docker` means VERIFY_PROVIDER=docker; otherwise verify runs on the embedded stack
VERIFY_PROVIDER ?= $(if $(filter command line,$(origin PROVIDER)),$(PROVIDER),embedded)
# the embedded provider needs the pinned jars; a docker or external stack does not
needs = $(if $(filter docker external,$(1)),setup,jars)
STACK_NEEDS = $(call needs,$(PROVIDER))

## bench: the default corpus end to end (PROVIDER=auto|embedded|docker|external, ARM=bm25); results in $(RESULTS)/$(ARM), tables printed
bench: corpus $(STACK_NEEDS)
	rm -rf $(RESULTS)/$(ARM)
	$(TURNBENCH) bench --corpus $(DEFAULT_CORPUS) --arm $(ARM) --out $(RESULTS) --provider $(PROVIDER)

## gate: compare $(RESULTS)/$(ARM) with baselines/$(CONTROL) (paired bootstrap); writes $(RESULTS)/compare.md; exit 4 on a regression
gate: setup
	$(TURNBENCH) compare baselines/$(CONTROL) $(RESULTS)/$(ARM) --gate --out $(RESULTS)/compare.md

## baseline: rewrite baselines/$(CONTROL) from a freshly regenerated default corpus, bm25 on the embedded stack (then commit it)
baseline: $(call needs,$(VERIFY_PROVIDER))
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	rm -rf baselines/$(CONTROL) && \
	$(TURNBENCH) bench --corpus "$$tmp/corpus" --arm bm25 --out baselines --control-name $(CONTROL) --provider $(VERIFY_PROVIDER)

## verify: regenerate the default corpus, bench bm25 (VERIFY_PROVIDER=embedded, or docker; PROVIDER=docker says the same), require byte-identical claim files vs baselines/$(CONTROL)
verify: $(call needs,$(VERIFY_PROVIDER))
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	$(TURNBENCH) bench --corpus "$$tmp/corpus" --arm bm25 --out "$$tmp/results" --control-name $(CONTROL) \
	  --provider $(VERIFY_PROVIDER) >/dev/null && \
	status=0 && for f in metrics.json metrics.md answers.md claim.sha256; do \
	  if cmp -s baselines/$(CONTROL)/$$f "$$tmp/results/$(CONTROL)/$$f"; then echo "verify: $$f byte-identical to baselines/$(CONTROL)"; \
	  else echo "verify: $$f DIFFERS from baselines/$(CONTROL)/$$f"; \
	    diff -u baselines/$(CONTROL)/$$f "$$tmp/results/$(CONTROL)/$$f" | head -40; status=1; fi; \
	done; \
	if [ $$status -ne 0 ]; then \
	  $(TURNBENCH) compare baselines/$(CONTROL) "$$tmp/results/$(CONTROL)" | head -40 || true; \
	  echo "verify: FAILED (if the change is intended, run 'make baseline' and commit baselines/$(CONTROL))"; fi; \
	exit $$status

# -- self-measure and the QMSum adapter --
QMSUM ?=
QMSUM_CORPUS ?= corpora/qmsum

## measure: self-measure the default corpus (BM25, meetings as documents); writes $(DEFAULT_CORPUS)/stats.json, prints the table
measure: corpus
	$(TURNBENCH) measure $(DEFAULT_CORPUS)

## qmsum: import QMSum (QMSUM=its data/ALL directory or JSONL files) into $(QMSUM_CORPUS), then validate and self-measure it
qmsum: setup
	@test -n "$(QMSUM)" || { echo "set QMSUM to QMSum's data/ALL directory (or its JSONL files)"; exit 2; }
	rm -rf $(QMSUM_CORPUS)
	$(TURNBENCH) import qmsum $(QMSUM) --out $(QMSUM_CORPUS)
	$(TURNBENCH) validate $(QMSUM_CORPUS)
	$(TURNBENCH) measure $(QMSUM_CORPUS)

## bench-qmsum: bench the imported QMSum corpus end to end (after `make qmsum`; PROVIDER, ARM as for bench); results in $(RESULTS)/qmsum/$(ARM)
bench-qmsum: $(STACK_NEEDS)
	rm -rf $(RESULTS)/qmsum/$(ARM)
	$(TURNBENCH) bench --corpus $(QMSUM_CORPUS) --arm $(ARM) --out $(RESULTS)/qmsum --provider $(PROVIDER)

