"""turnbench from Python: the verbs of the data flow, each a thin call into the room that owns the stage.

    import turnbench
    corpus = turnbench.generate("corpora/default", seed=20261130)        # or an existing corpus directory
    with turnbench.open_stack() as stack:
        bm25, title = turnbench.bench(corpus, ["bm25", "bm25-title"], "results", stack=stack)
    print(turnbench.compare(bm25, title).to_markdown())

Scoring another engine's output needs no stack:

    results = turnbench.score("corpora/default", "their/passages.jsonl", "their/run.trec")
    results.mean("nDCG@10", "lookup"); results.write("results/theirs")

Every function refuses what the command line refuses, with the same exceptions (``turnbench.errors``): the command
line only adds exit codes. A path is accepted wherever a corpus, a passage inventory, a run or a results directory
is, and so is the object itself. Every argument's type is checked before anything is done: a wrong one is BadInput
naming the argument and what it takes (``bench(corpus, "bm25", out)`` is refused: ``arms`` is a list of arms).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from turnbench.corpus.checks import CheckResult
from turnbench.corpus.format import Corpus
from turnbench.engines.arms import Arm
from turnbench.errors import BadInput
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.rows import ALL
from turnbench.harness.score import UNKNOWN, Scored
from turnbench.passages import Passage
from turnbench.pipeline.bench import BenchOptions
from turnbench.pipeline.comparing import Compared, ComparedCorpora
from turnbench.rankings import RankedPassage, Ranking
from turnbench.stack.info import StackInfo
from turnbench.vocab import ScopeName

if TYPE_CHECKING:
    from turnbench.engines.graph_recall import GraphRecall
    from turnbench.engines.retrieval import RunResult
    from turnbench.loading.load import LoadResult
    from turnbench.pipeline.planning import Plan

PathLike = str | os.PathLike[str]
CorpusLike = Corpus | PathLike

__all__ = ["generate", "validate", "graph_recall", "open_stack", "load", "run", "score", "bench", "compare", "plan",
           "report",
           "Results", "Row", "QueryValues", "Compared", "ComparedCorpora", "BenchOptions", "RelevancePolicy", "Passage",
           "RankedPassage"]


@dataclass(frozen=True)
class Row:
    """One row of a results table: a class (or ``all``) of one corpus, its query counts and its mean per measure
    (None when no query of the row has the measure, e.g. passage measures of meeting-level summaries)."""

    corpus: str
    cls: str
    queries: int
    unanswered: int
    dropped_unjudgeable: int
    means: Mapping[str, float | None]


@dataclass(frozen=True)
class QueryValues:
    """One judged query's values (6 decimals), as metrics.json holds them."""

    query_id: str
    cls: str
    surface: str
    level: str
    answered: bool
    values: Mapping[str, float]


@dataclass(frozen=True)
class Results:
    """A scored run: its rows, per-query values and provenance, as metrics.json holds them; ``out_dir`` is where
    it was written, if it was."""

    scored: Scored
    out_dir: Path | None = None

    @property
    def document(self) -> Mapping[str, Any]:
        """metrics.json, whole."""
        return self.scored.document

    @property
    def provenance(self) -> Mapping[str, Any]:
        return self.scored.document["provenance"]

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(self.scored.retrieval["measures"])

    @property
    def rows(self) -> tuple[Row, ...]:
        return tuple(Row(r["corpus"], r["class"], r["queries"], r["unanswered"], r["dropped_unjudgeable"],
                         dict(r["means"])) for r in self.scored.retrieval["rows"])

    @property
    def per_query(self) -> tuple[QueryValues, ...]:
        return tuple(QueryValues(r["query_id"], r["class"], r["surface"], r["level"], r["answered"],
                                 dict(r["values"])) for r in self.scored.retrieval["per_query"])

    def mean(self, measure: str, cls: str = ALL) -> float | None:
        """The row's mean of ``measure`` (e.g. ``nDCG@10``, ``meeting:R@10``) for class ``cls``."""
        _typed(measure, str, "measure", "a measure's name (str)")
        _typed(cls, str, "cls", "a class's name (str)")
        if measure not in self.measures:
            raise BadInput(f"unknown measure {measure!r}; measures: {', '.join(self.measures)}")
        for row in self.rows:
            if row.cls == cls:
                return row.means[measure]
        raise BadInput(f"no row for class {cls!r}; rows: {', '.join(r.cls for r in self.rows)}")

    def to_markdown(self) -> str:
        """metrics.md, as ``bench`` and ``score`` write it."""
        from turnbench.render.markdown import render_metrics_md

        return render_metrics_md(self.scored.document)

    def write(self, out: PathLike) -> Results:
        """Write a results directory at ``out`` (which must not exist or be empty); returns it, located there."""
        from turnbench.resultsdir import runinfo, write_results

        write_results(_path(out, "out"), self.scored, runinfo({}))
        return Results(self.scored, Path(out))

    @classmethod
    def read(cls, directory: PathLike) -> Results:
        """A results directory, refused unless its digest and its numbers hold."""
        from turnbench.resultsdir import read_results

        return cls(Scored(read_results(_path(directory, "directory"))), Path(directory))


# -- argument checks: a wrong type is BadInput naming the argument, never a TypeError from deep inside -------------

def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:40] + '…'}"


def _refuse(name: str, what: str, value: Any) -> BadInput:
    return BadInput(f"{name} must be {what}, not {_shown(value)}")


def _is_path(value: object) -> TypeGuard[str | os.PathLike[str]]:
    return isinstance(value, (str, os.PathLike)) and not isinstance(os.fspath(value), bytes)


def _path(value: Any, name: str) -> Path:
    if not _is_path(value):
        raise _refuse(name, "a path (str or os.PathLike)", value)
    return Path(value)


def _int(value: Any, name: str, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _refuse(name, "a whole number" + (" or None" if optional else ""), value)


def _typed(value: Any, types: type | tuple[type, ...], name: str, what: str, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, types) and not (types is int and isinstance(value, bool))):
        return value
    raise _refuse(name, what + (" or None" if optional else ""), value)


def _list(value: Any, name: str, what: str, item: Callable[[Any], bool] | None = None, one: str = "") -> list[Any]:
    """``value`` as a list, refused when it is no list (a string is one value, not a list of its characters) or an
    item is not ``one`` of ``what``."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(name, f"a list of {what}", value)
    items = list(value)
    for i, x in enumerate(items):
        if item is not None and not item(x):
            raise _refuse(f"{name}[{i}]", one, x)
    return items


def _stack(value: Any, *, optional: bool = False) -> Any:
    return _typed(value, StackInfo, "stack", "a StackInfo (what open_stack() yields)", optional=optional)


def _corpus(corpus: Any, name: str = "corpus") -> Corpus:
    from turnbench.corpus.format import open_corpus

    if isinstance(corpus, Corpus):
        return corpus
    return open_corpus(_path(corpus, f"{name} (a Corpus or its directory)"))


def _corpora(corpora: Any) -> list[Corpus]:
    items = _list(corpora, "corpora", "corpora (a Corpus or its directory)", lambda c: isinstance(c, Corpus)
                  or _is_path(c), "a Corpus or its directory")
    return [_corpus(c, f"corpora[{i}]") for i, c in enumerate(items)]


def generate(out: PathLike, *, seed: int = 20261130, meetings: int = 200, workers: int = 1,
             **config: Any) -> Corpus:
    """Generate a synthetic corpus into ``out`` (which must not exist or be empty) and open it. ``config`` takes
    the rest of ``GeneratorConfig`` (words_per_meeting, near_duplicate_rate, register, ...)."""
    import dataclasses

    from turnbench.generator.config import GeneratorConfig
    from turnbench.generator.generate import generate as write_corpus

    target = _path(out, "out")
    known = {f.name for f in dataclasses.fields(GeneratorConfig)} - {"seed", "meetings"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise BadInput(f"generate() takes no setting {', '.join(unknown)}; GeneratorConfig's: "
                       f"{', '.join(sorted(known))}")
    write_corpus(GeneratorConfig(seed=seed, meetings=meetings, **config), target, workers=workers)
    return _corpus(out)


def validate(corpus: CorpusLike) -> list[CheckResult]:
    """Every check of a corpus (hashes first, then the checks that re-derive every gold item from its text); a
    check whose ``ok`` is False failed."""
    from turnbench.generator.validate import validate_corpus

    return validate_corpus(corpus.root if isinstance(corpus, Corpus) else _path(corpus, "corpus (a Corpus or its "
                                                                                      "directory)"))


def graph_recall(corpora: Sequence[CorpusLike], *, orders: int = 3, efs: Sequence[int] = (16, 40, 100),
                 max_words: int = 200, provider: str = "auto", stack: StackInfo | None = None,
                 say: Callable[[str], None] = lambda _: None) -> list[GraphRecall]:
    """Per corpus, recall@10 of HNSW graphs of its passages (MiniLM vectors, the load's mapping) against exact
    search at each ef_search of ``efs``: the load's insertion order first, then ``orders - 1`` others
    (turnbench.engines.graph_recall). On ``stack``, or one ``provider`` starts and stops."""
    from turnbench.engines.graph_recall import check, probe
    from turnbench.stack import open_stack as opened

    opened_corpora = _corpora(corpora)
    check(list(efs), orders)
    _int(max_words, "max_words")
    if stack is not None:
        return [probe(_stack(stack), c, max_words=max_words, efs=efs, orders=orders, say=say) for c in opened_corpora]
    _typed(provider, str, "provider", "a provider's name (str)")
    with opened(provider) as running:
        return [probe(running, c, max_words=max_words, efs=efs, orders=orders, say=say) for c in opened_corpora]


def open_stack(provider: str = "auto", **options: Any) -> Any:
    """A context manager yielding a ``StackInfo``: an OpenSearch + PostgreSQL stack started (or found), torn down
    whatever happens (``turnbench.stack.open_stack``)."""
    from turnbench.stack import open_stack as opened

    _typed(provider, str, "provider", "a provider's name (str)")
    return opened(provider, **options)


def load(stack: StackInfo, corpus: CorpusLike, *, max_words: int = 200, overlap: int = 0, encoder: str | None = None,
         graph: bool = False, shards: int = 1, index: str | None = None, reload: bool = False,
         graph_order: int = 0) -> LoadResult:
    """Load a corpus into the stack: PostgreSQL rows, OpenSearch passages (with a vector field when ``encoder`` is
    given; ``graph`` builds its HNSW graph), settled, with the provenance every result records. ``overlap``: words
    neighbouring passages of one speaker's run share. A settled load of exactly this corpus, cut and index already
    in the stack is kept (``LoadResult.reused``) unless ``reload``. ``graph_order``: which reproducible HNSW graph
    (vectors inserted by sha256 of the passage id, or of str(n) and the id)."""
    from turnbench.engines.embeddings import vector_spec
    from turnbench.loading.index import DEFAULT_INDEX
    from turnbench.loading.reuse import load_or_reuse
    from turnbench.loading.spec import LoadSpec

    _stack(stack)
    _int(max_words, "max_words")
    _int(overlap, "overlap")
    _int(shards, "shards")
    _typed(encoder, str, "encoder", "an encoder's name (str)", optional=True)
    _typed(index, str, "index", "an index name (str)", optional=True)
    _typed(graph, bool, "graph", "True or False")
    _typed(reload, bool, "reload", "True or False")
    _int(graph_order, "graph_order")
    vectors = vector_spec(encoder, graph=graph, graph_order=graph_order) if encoder else None
    spec = LoadSpec(max_words=max_words, overlap=overlap, index=index or DEFAULT_INDEX, shards=shards, vectors=vectors)
    return load_or_reuse(stack, _corpus(corpus), spec, reload=reload)


def run(stack: StackInfo, corpus: CorpusLike, arm: Arm | str, *, scope: str = ScopeName.CORPUS,
        index: str | None = None, depth: int | None = None) -> RunResult:
    """Run one arm (a built-in name, or an ``Arm`` from ``turnbench.engines.arms.from_file``) over a loaded
    corpus: the passages it ranked and the run, with the engine's raw scores."""
    from turnbench.engines.retrieval import run_arm

    _stack(stack)
    _typed(arm, (Arm, str), "arm", "an Arm or a built-in arm's name (str)")
    _typed(scope, str, "scope", "a scope's name (str)")
    _typed(index, str, "index", "an index name (str)", optional=True)
    _int(depth, "depth", optional=True)
    return run_arm(stack, _corpus(corpus), arm, scope=scope, index=index, depth=depth)


def score(corpus: CorpusLike, passages: PathLike | Iterable[Passage], ranking: PathLike | Iterable[RankedPassage],
          *, policy: RelevancePolicy = RelevancePolicy(), scope: str = ScopeName.CORPUS,
          arm: Mapping[str, Any] | None = None) -> Results:
    """Judge a passage inventory against the corpus's gold and score a run of it — any engine's. ``arm`` describes
    the engine (recorded verbatim; ``external/unknown`` without it)."""
    from turnbench.passages import read_passages
    from turnbench.pipeline.scoring import score_passages
    from turnbench.runfiles import read_run

    the_corpus = _corpus(corpus)
    _typed(policy, RelevancePolicy, "policy", "a RelevancePolicy")
    _typed(scope, str, "scope", "a scope's name (str)")
    _typed(arm, Mapping, "arm", "a mapping describing the engine", optional=True)
    inventory = read_passages(Path(passages)) if _is_path(passages) else _list(
        passages, "passages", "Passage records (or a passages.jsonl path)", lambda p: isinstance(p, Passage),
        "a Passage")
    entries: Iterable[RankedPassage] = (
        read_run(Path(ranking)) if _is_path(ranking) else ranking if isinstance(ranking, Ranking) else _list(
            ranking, "ranking", "RankedPassage records (or a run file's path)",
            lambda r: isinstance(r, RankedPassage), "a RankedPassage"))
    scored = score_passages(the_corpus, inventory, entries, policy=policy, scope=scope,
                            arm=dict(arm) if arm is not None else UNKNOWN)
    return Results(scored)


def bench(corpus: CorpusLike, arms: Sequence[Arm | str], out: PathLike, options: BenchOptions = BenchOptions(), *,
          stack: StackInfo | None = None, engines: Sequence[Any] = ()) -> list[Results]:
    """Bench every arm on a corpus — load, run, judge, score, write ``OUT/<arm>/`` — on ``stack`` when given (never
    torn down here), else on a stack of ``options.provider`` opened for the bench. ``engines``: Python engines
    benched beside the arms on the same passages (docs/engines.md), each an object with the engine protocol or a
    ``"module:factory"`` string; their results go to ``OUT/<engine name>/``."""
    from turnbench.pipeline.bench import bench as run_bench

    root = corpus.root if isinstance(corpus, Corpus) else _path(corpus, "corpus (a Corpus or its directory)")
    names = _list(arms, "arms", "arms (an Arm or a built-in arm's name)", lambda a: isinstance(a, (Arm, str)),
                  "an Arm or a built-in arm's name (str)")
    target = _path(out, "out")
    _typed(options, BenchOptions, "options", "a BenchOptions")
    _stack(stack, optional=True)
    python_engines = _list(engines, "engines", "engines (an engine object or a \"module:factory\" string)")
    return [Results(o.results, o.out_dir)
            for o in run_bench(root, names, target, options, stack=stack, engines=python_engines)]


def _results_dir(side: Results | PathLike, name: str) -> Path:
    if isinstance(side, Results):
        if side.out_dir is None:
            raise BadInput("these results were never written: write() them, then compare the directory")
        return side.out_dir
    return _path(side, f"{name} (Results or a results directory)")


def compare(baseline: Results | PathLike, candidate: Results | PathLike, *,
            corpora: Sequence[CorpusLike] = (), resamples: int = 10_000, seed: int | None = None,
            also: Sequence[tuple[Results | PathLike, Results | PathLike]] = ()) -> Compared | ComparedCorpora:
    """Compare two results directories (or two sets of seeds): per class × measure, the paired bootstrap interval,
    the randomisation p-value, the Holm-adjusted verdict and the detectable effect; ``.gate_failures()`` is what
    ``--gate`` fails on, ``.warnings()`` the lookup losses within noise. ``also``: the same two arms on other
    corpora, judged together (``compare --also``; docs/gate.md)."""
    from turnbench.harness.compare import SEED
    from turnbench.pipeline.comparing import compare_corpora, compare_dirs

    base, cand = _results_dir(baseline, "baseline"), _results_dir(candidate, "candidate")
    _int(resamples, "resamples")
    _int(seed, "seed", optional=True)
    if not 100 <= resamples <= 1_000_000 or not (seed is None or 0 <= seed < 2**32):
        raise BadInput(f"resamples must be from 100 to 1000000 and seed from 0 to 2^32-1, not {resamples}, {seed}")
    pairs = _list(also, "also", "(baseline, candidate) pairs", lambda p: isinstance(p, (tuple, list)) and len(p) == 2,
                  "a (baseline, candidate) pair")
    if pairs:
        return compare_corpora([(base, cand), *((_results_dir(b, "also baseline"), _results_dir(c, "also candidate"))
                                                for b, c in pairs)],
                               corpora=_corpora(corpora), resamples=resamples, seed=SEED if seed is None else seed)
    return compare_dirs(base, cand, corpora=_corpora(corpora), resamples=resamples, seed=SEED if seed is None else seed)


def plan(pilot: Results | PathLike, candidate: Results | PathLike | None = None, *, delta: float,
         cls: str = "lookup", measure: str = "nDCG@10", power: float = 0.8) -> Plan:
    """How many questions, meetings or seeds a comparison needs to find a loss of ``delta`` (``turnbench plan``)."""
    from turnbench.pipeline.planning import plan as make_plan

    _typed(delta, (int, float), "delta", "a number")
    _typed(power, (int, float), "power", "a number")
    _typed(cls, str, "cls", "a class name")
    _typed(measure, str, "measure", "a measure name")
    return make_plan(_results_dir(pilot, "pilot"), None if candidate is None else _results_dir(candidate, "candidate"),
                     delta=float(delta), cls=cls, measure=measure, power=float(power))


def report(results: Results | PathLike, baseline: Results | PathLike | None = None, *,
           corpora: Sequence[CorpusLike] = ()) -> bytes:
    """report.html of ``results`` alone, or against ``baseline``: one self-contained page."""
    from turnbench.pipeline.comparing import report_page

    return report_page(_results_dir(results, "results"),
                       None if baseline is None else _results_dir(baseline, "baseline"), corpora=_corpora(corpora))

