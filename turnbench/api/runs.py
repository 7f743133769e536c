"""Runs from Python: resolve arms, run one over a loaded corpus (and write its run directory), fuse runs, score any
engine's output, bench arms (on a corpus or a set of seeds) and sweep chunkings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench.api._args import (
    PathLike,
    _corpus,
    _corpus_root,
    _int,
    _is_path,
    _list,
    _path,
    _paths,
    _stack,
    _typed,
)
from turnbench.api.results import Results
from turnbench.engines import DEFAULT_CONCURRENCY
from turnbench.engines.arms import Arm
from turnbench.errors import BadInput
from turnbench.harness.judgements import RelevancePolicy
from turnbench.passages import Passage
from turnbench.pipeline.bench import BenchOptions
from turnbench.rankings import RankedPassage, Ranking
from turnbench.vocab import ScopeName

if TYPE_CHECKING:
    from turnbench.engines.retrieval import RunResult
    from turnbench.pipeline.bench import BenchOutcome
    from turnbench.stack.info import StackInfo

CorpusLike = Any  # a Corpus or its directory
Echo = Callable[[str], None]


def arms(names: Sequence[str] = (), files: Sequence[PathLike] = ()) -> list[Arm]:
    """The built-in arms ``names`` and the arms of ``files`` (TOML, docs/arms.md), each checked: an unknown name or
    a bad file is refused before any stack starts."""
    from turnbench.engines.arms import resolve

    return resolve(_list(names, "names", "built-in arms' names", lambda n: isinstance(n, str), "a name (str)"),
                   _paths(files, "files"))


def run(stack: StackInfo, corpus: CorpusLike, arm: Arm | str, *, scope: str = ScopeName.CORPUS,
        index: str | None = None, depth: int | None = None, concurrency: int = DEFAULT_CONCURRENCY) -> RunResult:
    """Run one arm (a built-in name, or an ``Arm`` from ``arms()``) over a loaded corpus: the passages it ranked and
    the run, with the engine's raw scores. ``concurrency``: threads sending the searches (the run is the same)."""
    from turnbench.engines.retrieval import run_arm

    _stack(stack)
    _typed(arm, (Arm, str), "arm", "an Arm or a built-in arm's name (str)")
    _typed(scope, str, "scope", "a scope's name (str)")
    _typed(index, str, "index", "an index name (str)", optional=True)
    _int(depth, "depth", optional=True)
    _int(concurrency, "concurrency")
    return run_arm(stack, _corpus(corpus), arm, scope=scope, index=index, depth=depth, concurrency=concurrency)


@dataclass(frozen=True)
class WrittenRun:
    """A run written to a run directory: the run, the corpus it ran over, where it went and the names of the files
    written there."""

    result: RunResult
    corpus_id: str
    out_dir: Path
    files: tuple[str, ...]


def write_run(out: PathLike, corpus: CorpusLike, arm: Arm, *, scope: str = ScopeName.CORPUS, index: str | None = None,
              depth: int | None = None, concurrency: int = DEFAULT_CONCURRENCY,
              stack: StackInfo | None = None) -> WrittenRun:
    """Run one OpenSearch arm over a loaded corpus and write the run directory ``out`` (passages.jsonl, run.trec,
    run.jsonl, arm.json: what ``score_files`` reads back). ``out`` must be new or empty, refused before any query
    is sent. ``stack`` None: the recorded stack, held for reading (``recorded_stack``)."""
    from turnbench import canonical
    from turnbench.api.stacks import recorded_stack
    from turnbench.pipeline.runs import write_run as write

    target = _path(out, "out")
    _typed(arm, Arm, "arm", "an Arm (what arms() returns)").on_opensearch()
    _stack(stack, optional=True)
    canonical.refuse_non_empty(target, "run directory")
    opened = _corpus(corpus)
    if stack is not None:
        result = run(stack, opened, arm, scope=scope, index=index, depth=depth, concurrency=concurrency)
    else:
        with recorded_stack(writes=False) as recorded:
            result = run(recorded, opened, arm, scope=scope, index=index, depth=depth, concurrency=concurrency)
    return WrittenRun(result, opened.id, target, tuple(write(target, result)))


def fuse(runs: Sequence[PathLike], out: PathLike, *, method: str, k: int = 60, weights: Sequence[float] = (),
         depth: int = 100, passages: PathLike | None = None) -> list[str]:
    """Fuse two or more runs of the same queries (run directories, or run files with their ``passages``
    inventory) by ``method`` (rrf with rank constant ``k``; minmax with ``weights``, equal by default) into a new
    run directory ``out``, ``depth`` passages per query; returns the names written."""
    from turnbench.engines.fusion import Fusion
    from turnbench.pipeline.runs import fuse_runs

    inputs, target = _paths(runs, "runs"), _path(out, "out")
    _typed(method, str, "method", "a fusion method's name (str)")
    parsed = tuple(_list(weights, "weights", "numbers", lambda w: isinstance(w, (int, float))
                         and not isinstance(w, bool), "a number"))
    inventory = None if passages is None else _path(passages, "passages")
    return fuse_runs(inputs, target, Fusion(method, k, tuple(float(w) for w in parsed), depth), inventory)


def score(corpus: CorpusLike, passages: PathLike | Iterable[Passage], ranking: PathLike | Iterable[RankedPassage],
          *, policy: RelevancePolicy = RelevancePolicy(), scope: str = ScopeName.CORPUS,
          arm: Mapping[str, Any] | None = None) -> Results:
    """Judge a passage inventory against the corpus's gold and score a run of it — any engine's. ``arm`` describes
    the engine (recorded verbatim; ``external/unknown`` without it)."""
    from turnbench.harness.score import UNKNOWN
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


def _score_args(policy: Any, scope: Any, arm_config: Any) -> Path | None:
    _typed(policy, RelevancePolicy, "policy", "a RelevancePolicy")
    _typed(scope, str, "scope", "a scope's name (str)")
    return None if arm_config is None else _path(arm_config, "arm_config")


def score_files(corpus: CorpusLike, passages: PathLike, ranking: PathLike, out: PathLike, *,
                policy: RelevancePolicy = RelevancePolicy(), scope: str = ScopeName.CORPUS,
                arm_config: PathLike | None = None) -> Results:
    """``score`` from files, written: judge ``passages`` (passages.jsonl), score ``ranking`` (six-column TREC or
    run.jsonl) and write the results directory ``out`` (metrics, report.html, the TREC qrels and runs, runinfo).
    ``arm_config``: a JSON file describing the engine (e.g. the arm.json ``write_run`` writes), recorded verbatim."""
    from turnbench.pipeline.scoring import score_files as scored

    root, inventory, run_file, target = (_corpus_root(corpus), _path(passages, "passages"),
                                         _path(ranking, "ranking"), _path(out, "out"))
    arm = _score_args(policy, scope, arm_config)
    return Results(scored(root, inventory, run_file, target, policy=policy, scope=scope, arm_config=arm), target)


def score_hits(corpus: CorpusLike, hits: PathLike, out: PathLike, *, policy: RelevancePolicy = RelevancePolicy(),
               scope: str = ScopeName.CORPUS, arm_config: PathLike | None = None) -> Results:
    """``score_files`` for a product's hits (JSON lines {query, meeting, start, end[, speaker][, text][, score]} in
    rank order, judged by the words their spans hold; docs/formats.md) instead of a passage inventory and a run."""
    from turnbench.pipeline.scoring import score_hits as scored

    root, hits_file, target = _corpus_root(corpus), _path(hits, "hits"), _path(out, "out")
    arm = _score_args(policy, scope, arm_config)
    return Results(scored(root, hits_file, target, policy=policy, scope=scope, arm_config=arm), target)


def _bench_args(arm_list: Any, out: Any, options: Any, stack: Any, engines: Any) -> tuple[list[Any], Path, list[Any]]:
    names = _list(arm_list, "arms", "arms (an Arm or a built-in arm's name)", lambda a: isinstance(a, (Arm, str)),
                  "an Arm or a built-in arm's name (str)")
    target = _path(out, "out")
    _typed(options, BenchOptions, "options", "a BenchOptions")
    _stack(stack, optional=True)
    return names, target, _list(engines, "engines", "engines (an engine object or a \"module:factory\" string)")


def bench_outcomes(corpus: CorpusLike, arms: Sequence[Arm | str], out: PathLike,
                   options: BenchOptions = BenchOptions(), *, stack: StackInfo | None = None,
                   engines: Sequence[Any] = (), show_progress: bool = False,
                   echo: Echo | None = None) -> list[BenchOutcome]:
    """``bench``, each arm's outcome whole: its name, the arm, where it was written, the scored run and the seconds
    each stage of the bench took. ``show_progress``: draw progress bars on stderr; ``echo``: progress notes."""
    from turnbench.pipeline.bench import bench as run_bench

    root = _corpus_root(corpus)
    names, target, python_engines = _bench_args(arms, out, options, stack, engines)
    return run_bench(root, names, target, options, stack=stack, engines=python_engines, show_progress=show_progress,
                     echo=echo)


def bench(corpus: CorpusLike, arms: Sequence[Arm | str], out: PathLike, options: BenchOptions = BenchOptions(), *,
          stack: StackInfo | None = None, engines: Sequence[Any] = ()) -> list[Results]:
    """Bench every arm on a corpus — load, run, judge, score, write ``OUT/<arm>/`` — on ``stack`` when given (never
    torn down here), else on a stack of ``options.provider`` opened for the bench. ``engines``: Python engines
    benched beside the arms on the same passages (docs/engines.md), each an object with the engine protocol or a
    ``"module:factory"`` string; their results go to ``OUT/<engine name>/``."""
    return [Results(o.results, o.out_dir) for o in bench_outcomes(corpus, arms, out, options, stack=stack,
                                                                  engines=engines)]


def bench_seeds(seeds: Sequence[int], arms: Sequence[Arm | str], out: PathLike,
                options: BenchOptions = BenchOptions(), *, corpora: PathLike = "corpora", workers: int = 1,
                stack: StackInfo | None = None, engines: Sequence[Any] = (), show_progress: bool = False,
                echo: Echo | None = None) -> list[BenchOutcome]:
    """Bench every arm on the default corpus of each seed, one stack for all: results in ``OUT/<arm>/seed-<S>/``
    (what ``compare`` pools), corpora in ``CORPORA/seed-<S>/`` (generated by ``workers`` processes unless one
    already there is exactly that seed's corpus)."""
    from turnbench.pipeline.bench import bench_seeds as run_seeds

    seed_list = _list(seeds, "seeds", "seeds (whole numbers)", lambda s: isinstance(s, int) and not isinstance(s, bool),
                      "a whole number")
    names, target, python_engines = _bench_args(arms, out, options, stack, engines)
    where = _path(corpora, "corpora")
    _int(workers, "workers")
    return run_seeds(seed_list, names, target, options, corpora=where, workers=workers, stack=stack,
                     engines=python_engines, show_progress=show_progress, echo=echo)


@dataclass(frozen=True)
class Swept:
    """A sweep's summary (what OUT/sweep.json holds) and the names of the summary's files in OUT."""

    document: Mapping[str, Any]
    files: tuple[str, ...]

    def to_markdown(self) -> str:
        """sweep.md: the table of every cell and arm, and the rule's verdicts."""
        from turnbench.render.sweep import sweep_md

        return sweep_md(self.document)


def sweep(corpus: CorpusLike, arms: Sequence[Arm | str], out: PathLike, *, max_words: Sequence[int] | str = (200,),
          overlaps: Sequence[int] | str = (0,), arm_files: Sequence[PathLike] = (), rule: str | None = None,
          options: BenchOptions = BenchOptions(), show_progress: bool = False, echo: Echo | None = None) -> Swept:
    """Load each chunking of the grid ``max_words`` × ``overlaps`` (lists, or comma-separated text), run and score
    every arm (and the arm of every file of ``arm_files``) on it against the same turn gold, and write
    OUT/w<W>-o<O>/<arm>/ per cell with sweep.json, sweep.md and sweep.html. ``rule``: a decision rule fixed before
    the numbers (several arms: each against the first in every cell; one arm: each cell against the first)."""
    from turnbench.engines.arms import resolve
    from turnbench.harness import sweep as rules
    from turnbench.pipeline import sweep as sw

    root, target = _corpus_root(corpus), _path(out, "out")
    sizes = sw.parse_ints(max_words, "--max-words") if isinstance(max_words, str) else _list(
        max_words, "max_words", "whole numbers", lambda v: isinstance(v, int), "a whole number")
    shares = sw.parse_ints(overlaps, "--overlap") if isinstance(overlaps, str) else _list(
        overlaps, "overlaps", "whole numbers", lambda v: isinstance(v, int), "a whole number")
    cells = sw.grid(sizes, shares)
    items = _list(arms, "arms", "arms (an Arm or a built-in arm's name)", lambda a: isinstance(a, (Arm, str)),
                  "an Arm or a built-in arm's name (str)")
    resolved = [*(a for a in items if isinstance(a, Arm)),
                *resolve([a for a in items if isinstance(a, str)], _paths(arm_files, "arm_files"))]
    if not resolved:
        raise BadInput("give at least one --arm or --arm-file")
    _typed(rule, str, "rule", "a decision rule (str)", optional=True)
    _typed(options, BenchOptions, "options", "a BenchOptions")
    if rule:
        rules.parse_rule(rule, sw.measures(), across_cells=len(resolved) == 1)  # refused before any stack starts
    if rule and len(resolved) == 1 and len(cells) == 1:
        raise BadInput("a rule over one arm compares cells with the first: give at least two chunkings")
    document = sw.sweep(root, resolved, target, cells, options, rule=rule, show_progress=show_progress, echo=echo)
    return Swept(document, (sw.SWEEP_MD, sw.SWEEP_HTML, sw.SWEEP_JSON))

