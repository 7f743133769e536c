"""The orchestration (docs/design.md §1): stack → load → answers → per arm: run → judge + score → write.

``bench`` is one readable function over the rooms that own each stage; ``answer`` runs the answer stage alone
and ``write_run`` writes what a run hands another engine's scorer. Nothing here computes a number itself.

Layout: one results directory per arm, ``OUT/<arm>/`` — or ``OUT/<control-name>/`` for a single arm benched as a
named control (``baselines/bm25`` is ``--out baselines --control-name bm25``). Each holds metrics.json (retrieval
block, plus the answers block when an answerer ran), metrics.md, answers.md and runinfo.json. Aggregation questions
are answered once per bench and attached to every arm's results: any arm's directory is complete on its own.

What goes into the claim: the server versions (not the provider: embedded, docker and external stacks with the
same versions must produce the same bytes), the index provenance from the load, the arm's resolved configuration,
the corpus, policy and metric engine. Provider, endpoints, timings and latency quantiles go to runinfo.json.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.engines.arms import Arm
from turnbench.engines.protocol import EngineRef
from turnbench.errors import BadInput, TierRefused
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.score import EngineSide, ResultsFiles
from turnbench.paths import check_name
from turnbench.pipeline.progress import QUIET, Progress, Stages, Took
from turnbench.stack.info import StackInfo
from turnbench.vocab import Answerer, KnnEngine, ProviderName, ScopeName, Stage, parse

if TYPE_CHECKING:
    from turnbench.engines.retrieval import RunResult
    from turnbench.loading.load import LoadResult


@dataclass(frozen=True)
class BenchedArm:
    """One arm benched: its results files, the directory they were written to, and the bench's stage timings."""

    name: str  # the results directory's name: the arm, or the control name
    arm: str
    out_dir: Path
    results: ResultsFiles
    stages: Mapping[str, float] = field(default_factory=dict)  # seconds per stage of the whole bench, by its label


def result_dirs(out: Path, arms: Sequence[str], control_name: str | None) -> list[tuple[str, Path]]:
    """(arm name, results directory) per arm, refused up front when a directory already holds files."""
    if control_name is not None and len(arms) != 1:
        raise BadInput("--control-name names one arm's results; give exactly one arm (or engine) with it")
    if len(set(arms)) != len(arms):
        twice = next(a for a in arms if list(arms).count(a) > 1)
        raise BadInput(f"arm or engine {twice!r} is given more than once (each writes OUT/{twice}/)")
    names = [control_name] if control_name is not None else list(arms)
    for n in names:
        check_name(n, "--control-name" if control_name is not None else "arm name")
    dirs = [(arm, Path(out) / n) for arm, n in zip(arms, names, strict=True)]
    for _, d in dirs:
        canonical.refuse_non_empty(d, "results directory", "choose a new --out")
    return dirs


@dataclass(frozen=True)
class BenchOptions:
    """How to bench, besides which corpus, which arms and where to write: one value, written out in full. Strings
    are accepted where a vocabulary is expected (``scope="gold-meetings"``) and parsed; an unknown one is refused."""

    scope: ScopeName = ScopeName.CORPUS
    provider: ProviderName = ProviderName.AUTO
    answerer: Answerer = Answerer.REFERENCE
    tolerance: int = 0  # the answers' count tolerance for exact match (harness.answers.AnswerPolicy)
    set_credit: str = "f1"  # what a meeting-set answer is credited with: its set F1, or exact match only
    policy: RelevancePolicy = RelevancePolicy()
    control_name: str | None = None  # write the single arm's results to OUT/NAME/ (a named control)
    index: str | None = None  # the OpenSearch index to load into (default: turnbench-passages)
    shards: int = 1
    concurrency: int | None = None  # threads sending the _msearch batches (default: the measured best)
    knn_engine: KnnEngine = KnnEngine.LUCENE
    stack_options: Mapping[str, Any] = field(default_factory=dict)  # what the provider takes (images, nodes, ...)
    max_words: int = 200  # the most words in one passage (turnbench.loading.chunking)
    overlap: int = 0  # words neighbouring passages of one speaker's run share
    reload: bool = False  # load again even when the stack holds a settled load of exactly this (load.settled_load)
    graph_order: int = 0  # which reproducible HNSW graph an approximate arm searches (loading.vectors)
    measures: Sequence[str] = ()  # extra measures' names (harness.metrics.EXTRA_MEASURES): an ``extra`` block

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", parse(ScopeName, self.scope, "scope"))
        object.__setattr__(self, "provider", parse(ProviderName, self.provider, "stack provider"))
        object.__setattr__(self, "answerer", parse(Answerer, self.answerer, "answerer"))
        object.__setattr__(self, "knn_engine", parse(KnnEngine, self.knn_engine, "k-NN engine"))
        if not isinstance(self.policy, RelevancePolicy):
            raise BadInput(f"policy must be a RelevancePolicy, not {type(self.policy).__name__}")
        from turnbench.harness.answers import AnswerPolicy
        from turnbench.loading.chunking import check_cut

        AnswerPolicy(self.tolerance, self.set_credit)  # refuses a negative tolerance or an unknown credit
        from turnbench.loading.vectors import check_graph_order

        check_cut(self.max_words, self.overlap)
        check_graph_order(self.graph_order)
        from turnbench.harness.metrics import selected

        object.__setattr__(self, "measures", tuple(str(m) for m in selected(self.measures)))
        if self.knn_engine != KnnEngine.LUCENE and self.provider == ProviderName.EMBEDDED:
            raise BadInput(f"k-NN engine {self.knn_engine}: the embedded node has no native k-NN libraries; use "
                           "lucene, or a docker or external stack")


def bench(corpus_dir: Path, arms: Sequence[Arm | str], out: Path, options: BenchOptions = BenchOptions(), *,
          progress: Progress | None = None, echo: Callable[[str], None] | None = None,
          stack: StackInfo | None = None, engines: Sequence[EngineRef | str | Any] = ()) -> list[BenchedArm]:
    """Bench every arm (and every Python engine: ``MODULE:FACTORY``, or the object) on one corpus; returns what was
    written. Refusals happen before the stack starts where they can (bad arm or engine, occupied results
    directory, bad corpus). ``stack``: an open stack to bench on (never torn down here); without it the bench opens
    one of ``options.provider`` and tears it down after. ``progress``: told of each stage as it goes
    (``pipeline.progress``)."""
    from turnbench.corpus.format import open_corpus

    resolved = _check(arms, engines)
    dirs = result_dirs(Path(out), [a.name for a in resolved], options.control_name)
    corpus = open_corpus(Path(corpus_dir))
    if corpus.licence.get("tier") == "C":  # refused before a stack starts, as scoring would refuse it after the run
        raise TierRefused(f"corpus {corpus.id} is licence tier C (its source's own terms): turnbench records it "
                          "(measure --against reads it) but puts no number on it")
    return _bench([(Path(corpus_dir), corpus, dirs)], resolved, options, progress=progress, echo=echo, stack=stack)


def bench_seeds(seeds: Sequence[int], arms: Sequence[Arm | str], out: Path, options: BenchOptions = BenchOptions(),
                *, corpora: Path, workers: int = 1, progress: Progress | None = None,
                echo: Callable[[str], None] | None = None, stack: StackInfo | None = None,
                engines: Sequence[EngineRef | str | Any] = ()) -> list[BenchedArm]:
    """Bench every arm on the default-configuration corpus of each seed, one stack for all: results in
    ``OUT/<arm>/seed-<S>/`` (what ``compare`` pools); corpora in ``CORPORA/seed-<S>/``, generated unless one
    already there is exactly that seed's corpus."""
    resolved = _check(arms, engines)
    if not seeds or len(set(seeds)) != len(seeds):
        raise BadInput("--seeds takes distinct seeds, e.g. 1,2,3")
    jobs = []
    for seed in seeds:
        dirs = [(arm, d / f"seed-{seed}")
                for arm, d in result_dirs(Path(out), [a.name for a in resolved], options.control_name)]
        for _, d in dirs:
            canonical.refuse_non_empty(d, "results directory", "choose a new --out")
        jobs.append((seed, dirs))
    say = echo or (lambda _line: None)
    out_jobs = []
    for seed, dirs in jobs:
        corpus_dir = Path(corpora) / f"seed-{seed}"
        out_jobs.append((corpus_dir, seed_corpus(seed, corpus_dir, workers=workers, echo=say), dirs))
    return _bench(out_jobs, resolved, options, progress=progress, echo=echo, stack=stack)


def seed_corpus(seed: int, corpus_dir: Path, *, workers: int = 1, echo: Callable[[str], None]) -> Corpus:
    """The default-configuration corpus of ``seed`` at ``corpus_dir``: reused when it is exactly that, generated
    when the directory is empty or absent, refused otherwise (an old corpus is never overwritten)."""
    from turnbench.corpus.format import open_corpus, read_manifest
    from turnbench.generator.config import GeneratorConfig
    from turnbench.generator.generate import generate

    cfg = GeneratorConfig(seed=seed)
    if corpus_dir.is_dir() and any(corpus_dir.iterdir()):
        recorded = (read_manifest(corpus_dir).get("producer") or {}).get("config")
        if recorded != cfg.to_json():
            raise BadInput(f"{corpus_dir}: holds a corpus that is not seed {seed}'s default corpus; choose another "
                           "--corpora")
        echo(f"seed {seed}: reusing {corpus_dir}")
        return open_corpus(corpus_dir)
    echo(f"seed {seed}: generating {corpus_dir}")
    generate(cfg, corpus_dir, workers=workers)
    return open_corpus(corpus_dir)


Entrant = Arm | EngineRef  # what a bench runs: an arm file, or a Python engine behind the engine protocol


def _check(arms: Sequence[Arm | str], engines: Sequence[EngineRef | str | Any] = ()) -> list[Entrant]:
    """The arms resolved (a name is a built-in arm) and the engines (``MODULE:FACTORY``, or the object), refused
    before anything starts — a rerank stage's model is loaded here too."""
    from turnbench.engines import protocol, rerank
    from turnbench.engines.arms import builtin
    from turnbench.engines.families import OPENSEARCH, engine_ref

    if not arms and not engines:
        raise BadInput("give at least one --arm, --arm-file or --engine")
    out: list[Entrant] = [builtin(a) if isinstance(a, str) else a for a in arms]
    # an arm on another engine than OpenSearch runs through the engine protocol's path (turnbench.engines.families)
    out = [engine_ref(e) if isinstance(e, Arm) and e.engine != OPENSEARCH else e for e in out]
    out += [e if isinstance(e, EngineRef) else protocol.resolve(e) if isinstance(e, str) else protocol.from_object(e)
            for e in engines]
    for e in out:
        if e.rerank is not None:
            rerank.scorer(e.rerank, e.file_name if isinstance(e, Arm) else f"engine {e.name}")
    return out


Job = tuple[Path, Corpus, Sequence[tuple[str, Path]]]  # a corpus directory, the corpus, (arm, results dir) pairs


def _bench(jobs: Sequence[Job], arms: Sequence[Entrant], options: BenchOptions, *, progress: Progress | None,
           echo: Callable[[str], None] | None, stack: StackInfo | None = None) -> list[BenchedArm]:
    """One stack; per corpus: load (a vector field when an arm needs one) → answers → per arm: run → judge +
    score → report → write."""
    from turnbench.engines.retrieval import search_plan
    from turnbench.loading.index import check_shards

    check_shards(options.shards)
    for a in arms:  # an arm that cannot run on this many shards is refused before the stack starts
        if isinstance(a, Arm):
            search_plan(a, options.shards)
    outcomes: list[BenchedArm] = []
    answering = options.answerer != Answerer.SKIP
    (progress or QUIET).expect(1 + sum(1 + answering + 4 * len(dirs) for _, _, dirs in jobs))
    st = Stages(progress or QUIET)
    say = echo or st.log
    with _stack_stage(stack, options, st, say) as open_:
        for job in jobs:
            outcomes += _bench_corpus(open_, job, arms, options, st, tag=f" {job[1].id}" if len(jobs) > 1 else "",
                                      say=say)
    stages = st.seconds()
    return [BenchedArm(o.name, o.arm, o.out_dir, o.results, stages) for o in outcomes]


@contextlib.contextmanager
def _stack_stage(stack: StackInfo | None, options: BenchOptions, st: Stages,
                 say: Callable[[str], None]) -> Iterator[StackInfo]:
    """The stack a bench runs on (``stack`` when given, else one started for it), its start-up timed as a stage.

    The stack stays open for the whole bench, so its stage is timed by hand rather than by ``st.stage``."""
    from turnbench.stack import open_stack

    st.start(Took(Stage.STACK))
    t_stack = time.perf_counter()
    with (contextlib.nullcontext(stack) if stack is not None
          else open_stack(options.provider, echo=say, **options.stack_options)) as open_:
        st.finish(Took(Stage.STACK), time.perf_counter() - t_stack)
        yield open_


def _bench_corpus(stack: StackInfo, job: Job, arms: Sequence[Entrant], options: BenchOptions, st: Stages, *,
                  tag: str, say: Callable[[str], None] | None = None) -> list[BenchedArm]:
    """One corpus on an open stack: load (kept when the stack holds a settled load of exactly this corpus, cut and
    index, unless ``options.reload``) → answers → per arm: run → judge + score → report → write."""
    from turnbench.engines.embeddings import spec_for_arms
    from turnbench.engines.rerank import TRACE_FILE
    from turnbench.engines.retrieval import DEFAULT_CONCURRENCY
    from turnbench.loading.index import DEFAULT_INDEX
    from turnbench.loading.reuse import load_or_reuse
    from turnbench.loading.spec import LoadSpec
    from turnbench.pipeline.answering import answer, attach
    from turnbench.pipeline.executor import page_drawer, page_input, score
    from turnbench.results.directory import REPORT_HTML, write_results

    corpus_dir, corpus, dirs = job
    by_name = {a.name: a for a in arms}
    concurrency = DEFAULT_CONCURRENCY if options.concurrency is None else options.concurrency
    vectors = spec_for_arms([a for a in arms if isinstance(a, Arm)], engine=options.knn_engine,
                            graph_order=options.graph_order)
    with st.stage(Stage.LOAD, tag):
        spec = LoadSpec(max_words=options.max_words, overlap=options.overlap, index=options.index or DEFAULT_INDEX,
                        shards=options.shards, vectors=vectors)
        loaded = load_or_reuse(stack, corpus, spec, progress=st.counter(Stage.LOAD, f"index passages{tag}"),
                               embed_progress=st.counter(Stage.LOAD, f"embed passages{tag}") if vectors else None,
                               reload=options.reload)
    if loaded.reused:
        (say or st.log)(loaded.reuse_line(corpus.id))
    elif options.reload or loaded.not_reused:
        # a stack that held a load (or a reload asked for) says why it was loaded again; a fresh stack says nothing,
        # so a refusal after the load is still one line
        (say or st.log)(f"load: loaded {corpus.id} into {loaded.index!r}"
                        + (" (--reload)" if options.reload else f" ({loaded.not_reused})"))
    answer_results = None
    if options.answerer != Answerer.SKIP:
        with st.stage(Stage.ANSWERS, tag):
            answer_results, _ = answer(stack, corpus, answerer=options.answerer, index=loaded.index,
                                       tolerance=options.tolerance, set_credit=options.set_credit)
    outcomes = []
    texts = _texts(corpus, loaded, arms)
    for arm, out_dir in dirs:
        with st.stage(Stage.RUN, f" {arm}{tag}"):
            with _index_unchanged(stack, loaded, arm):
                rr = _run(stack, corpus, by_name[arm], loaded, options, texts, concurrency,
                          st.counter(Stage.RUN, f"queries {arm}{tag}"))
        for note in rr.notes:  # a Python engine's threads left running, say: a warning, never hidden
            st.log(f"note: {note}", always=True)
        # the page's child is forked before scoring, and draws while this process writes the claim files
        with page_drawer(corpus) as drawing:
            with st.stage(Stage.JUDGE_AND_SCORE, f" {arm}{tag}"):
                # the raw entries, so the results record the engine's own scores and their ties
                engine = EngineSide(stack.versions(), dict(loaded.provenance), rr.arm_config)
                results, source = score(corpus, rr.passages, rr.entries, policy=options.policy,
                                        scope=options.scope, engine=engine, measures=options.measures)
                if answer_results is not None:
                    results = attach(results, [answer_results])
                if rr.rerank is not None:  # both stages' own scores, beside the run as scored
                    results = results.with_files({TRACE_FILE: rr.rerank.trace({p.id: p for p in rr.passages})})
            with st.stage(Stage.REPORT, f" {arm}{tag}"):
                drawing.send(page_input(results, source))
                results = results.with_files({REPORT_HTML: drawing.result()[0]})
        info = _runinfo(stack, corpus_dir, loaded, rr, st, arm=arm, tag=tag, concurrency=concurrency,
                        answered=answer_results is not None)
        with st.stage(Stage.WRITE, f" {arm}{tag}"):
            write_results(out_dir, results, info)
        outcomes.append(BenchedArm(out_dir.name, arm, out_dir, results))
    return outcomes


@contextlib.contextmanager
def _index_unchanged(stack: StackInfo, loaded: LoadResult, arm: str) -> Iterator[None]:
    """The index's counts and indexing totals read before and again after ``arm``'s run: a document another client
    indexed or deleted since the load, or while the run searched (an external stack is anyone's to write), refuses
    the claim (IndexChanged) before anything of it is written — the claim records the load's totals."""
    from turnbench.loading.index import check_unchanged
    from turnbench.stack.clients import opensearch_client

    client = opensearch_client(stack)
    before = check_unchanged(client, loaded.index, loaded.provenance, when=f"between its load and {arm}'s run")
    yield
    check_unchanged(client, loaded.index, before, when=f"while {arm} ran")


def _texts(corpus: Corpus, loaded: LoadResult, entrants: Sequence[Entrant]) -> tuple[Any, ...] | None:
    """The loaded passages with their texts, cut once per corpus when a Python engine is benched on it."""
    from turnbench.engines.texts import passages_with_texts

    return passages_with_texts(corpus, loaded.provenance) if any(isinstance(e, EngineRef) for e in entrants) else None


def _run(stack: StackInfo, corpus: Corpus, entrant: Entrant, loaded: LoadResult, options: BenchOptions,
         texts: Sequence[Any] | None, concurrency: int, progress: Callable[[int, int], None] | None) -> RunResult:
    """The run stage: an arm's queries sent to OpenSearch, or a Python engine asked in-process — the one place a
    bench knows which; what comes back is a RunResult either way."""
    from turnbench.engines.inprocess import run_engine
    from turnbench.engines.retrieval import run_arm

    inventory = (loaded.passages, loaded.passages_sha256)
    if isinstance(entrant, Arm):
        return run_arm(stack, corpus, entrant, scope=options.scope, index=loaded.index, progress=progress,
                       concurrency=concurrency, inventory=inventory)
    return run_engine(stack, corpus, entrant, scope=options.scope, index=loaded.index, progress=progress,
                      inventory=inventory, texts=texts)


def _runinfo(stack: StackInfo, corpus_dir: Path, loaded: LoadResult, rr: RunResult, st: Stages, *, arm: str,
             tag: str, concurrency: int, answered: bool) -> dict[str, Any]:
    """runinfo.json of one arm's results: what legitimately differs between runs, never inside the claim."""
    from turnbench.engines.retrieval import MSEARCH_BATCH
    from turnbench.results.directory import runinfo

    # each stage's seconds under its own name (the arm's stages of this arm, the corpus's of this corpus)
    mine = [(Stage.STACK, ""), (Stage.LOAD, tag), *([(Stage.ANSWERS, tag)] if answered else []),
            *((s, f" {arm}{tag}") for s in (Stage.RUN, Stage.JUDGE_AND_SCORE, Stage.REPORT))]
    return runinfo(
        {stage.value: st.elapsed[Took(stage, of)] for stage, of in mine},
        [1000.0 * x for x in rr.latencies],
        concurrency=concurrency,
        search={**(dict(rr.client) if rr.client is not None else {
            "client": f"{concurrency} thread(s)", "msearch_batch": MSEARCH_BATCH, **rr.plan.runinfo()}),
            **dict(rr.timings)},
        **_stage_latencies(rr),
        load_steps={k: round(v, 3) for k, v in sorted(loaded.timings.items())},
        # topology is where the index lived: compare notes a difference, the claim never holds it
        stack={**stack.runinfo(), "topology": dict(loaded.topology)},
        # where `turnbench report` finds the texts again; a path, so never inside the claim
        corpus_dir=str(Path(corpus_dir).resolve()),
    )


def _stage_latencies(rr: RunResult) -> dict[str, Any]:
    """A rerank stage's cost beside the first stage's (runinfo.json): per query by nearest rank, for each stage and
    for both together (a query the first stage left empty has no second stage); nothing for a one-stage run."""
    if rr.rerank is None:
        return {}
    from turnbench.harness.stats import nearest_rank

    def quantiles(seconds: Sequence[float]) -> dict[str, float] | None:
        ms = sorted(1000.0 * x for x in seconds)
        return {f"p{p}": round(nearest_rank(ms, p), 3) for p in (50, 95, 99)} if ms else None

    first = dict(zip(rr.rerank.first.query_ids, rr.latencies, strict=True))
    second = rr.rerank.latencies
    return {"stages": {
        "first": {"latency_ms": quantiles(list(first.values())), "queries_timed": len(first)},
        "rerank": {"latency_ms": quantiles(list(second.values())), "queries_timed": len(second),
                   "pairs": int(rr.rerank.timings.get("rerank_pairs", 0))},
        "both": {"latency_ms": quantiles([t + second.get(q, 0.0) for q, t in first.items()])}}}
