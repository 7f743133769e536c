"""Runs from Python: resolve arms, run one over a loaded corpus (and write its run directory), fuse runs. Light at
import: ``turnbench run`` and ``turnbench fuse`` load no more than the rooms they call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench.api._args import PathLike, _corpus, _int, _list, _path, _paths, _stack, _typed
from turnbench.engines import DEFAULT_CONCURRENCY
from turnbench.engines.arms import Arm
from turnbench.vocab import ScopeName

if TYPE_CHECKING:
    from turnbench.engines.retrieval import RunResult
    from turnbench.stack.info import StackInfo

CorpusLike = Any  # a Corpus or its directory


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
        with recorded_stack(writes=False, ask_postgres=False) as recorded:
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
