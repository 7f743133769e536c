"""The engine protocol (docs/design.md §12 rule 7, docs/engines.md): any Python object that ranks turnbench's
own passages.

``turnbench bench --engine MODULE:FACTORY`` (or ``FILE.py:FACTORY``) imports the module, calls the factory with no
arguments, and benches what it returns exactly as it benches an arm. What the object must have::

    name: str                # [a-z0-9][a-z0-9._-]*: the results directory's name and the run tag
    version: str             # the engine's own version, recorded
    config: Mapping          # JSON: everything that shapes its answers, recorded in full
    def index(self, passages: Sequence[Passage], context: EngineContext) -> None: ...
    def search(self, questions: Sequence[Question], depth: int) -> Sequence[Sequence[tuple[str, float]]]: ...

and may have ``depth`` (passages per question, 1..10000, default 100), ``batch`` (questions per ``search`` call,
default 1), ``rerank`` (a second stage, the mapping an arm's ``[rerank]`` table holds) and ``close()`` (called once
when the run is over, whatever happened: a connection to close).

``index`` is called once with every passage the load indexed, each with its ``text`` (turnbench.engines.texts), in
(meeting, index) order, and an :class:`EngineContext` (the stack's endpoints, for an engine that uses them).
``search`` gets a batch of questions — id and text only, never gold — and returns, per question in the order given,
at most ``depth`` ``(passage id, score)`` pairs; higher scores rank first, ties are broken by
docs/design.md §3 rule 5, as for any run. An empty list is a question the engine did not answer: it scores 0 and
is counted.

What is refused, each in one line: a factory that cannot be imported or called, or an object without the protocol
(BadInput, exit 2); an engine that raises anything (``SystemExit(0)`` and ``GeneratorExit`` included), forks
turnbench's process, or returns what the protocol does not allow — a score that is not a finite number or that no
float holds, a passage twice, more than ``depth`` passages, answers that do not match the questions — (EngineFailed,
a BadInput: exit 2, naming the engine: its own bug is not turnbench's InternalError; ``--debug`` shows its
traceback); a passage not in the inventory (UnjudgedPassage, exit 3); an engine whose first answers, asked again, are
other (passage, score) pairs (NondeterministicRun, exit 3; tied hits in another order are the same answer). A
turnbench error an engine raises (an unknown encoder, a stack that stopped answering) passes through as itself. Every
call into engine code goes through turnbench.engines.fence.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import numbers
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from turnbench import canonical
from turnbench.engines import fence
from turnbench.engines.stages import RerankSpec, parse_rerank
from turnbench.errors import BadInput, EngineFailed, UnjudgedPassage
from turnbench.passages import Passage
from turnbench.stack.info import StackInfo

PROTOCOL = "turnbench-engine/1"
DEFAULT_DEPTH = 100
MAX_DEPTH = 10000
MAX_BATCH = 10000
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
REQUIRED = ("name", "version", "config", "index", "search")


class Question(NamedTuple):
    """What an engine is asked: the question's id and its text. Never its gold, class or rule."""

    id: str
    text: str


@dataclass(frozen=True)
class EngineContext:
    """What ``Engine.index`` is given besides the passages: where the stack is, for an engine that uses it (the
    PostgreSQL DSN works with ``psycopg.connect``), which corpus and how deep a run goes."""

    corpus_id: str
    depth: int
    postgres_dsn: str
    opensearch_url: str
    stack: StackInfo


class Engine(Protocol):
    """The engine protocol (see the module docstring)."""

    name: str
    version: str
    config: Mapping[str, Any]

    def index(self, passages: Sequence[Passage], context: EngineContext) -> None: ...

    def search(self, questions: Sequence[Question], depth: int) -> Sequence[Sequence[tuple[str, float]]]: ...


@dataclass(frozen=True)
class EngineRef:
    """An engine resolved and checked, before any stack starts: the object, what made it, what it declares."""

    engine: Any
    factory: str  # "module:factory", or "file.py:factory" (the file's name only: a path is not a claim)
    source: Mapping[str, str]  # the module or file it came from and that file's sha256
    name: str
    version: str
    config: Mapping[str, Any]
    depth: int
    batch: int
    rerank: RerankSpec | None
    # what the results say the arm is: an arm file of an engine family (turnbench.engines.families) gives its own
    description: str = "a Python engine behind the engine protocol (docs/engines.md)"

    def describe(self) -> dict[str, Any]:
        """What a results file records about the engine: enough to know what ran, and to run it again."""
        return {"protocol": PROTOCOL, "factory": self.factory, "source": dict(self.source), "version": self.version,
                "config": dict(self.config), "batch": self.batch}


def resolve(text: str) -> EngineRef:
    """The engine ``MODULE:FACTORY`` (or ``FILE.py:FACTORY``) makes, checked; BadInput in one line otherwise."""
    target, sep, attr = str(text).rpartition(":")
    if not sep or not target or not attr.isidentifier():
        raise BadInput(f"--engine {text!r}: give MODULE:FACTORY (e.g. turnbench.engines.examples.bm25:engine) or "
                       "FILE.py:FACTORY")
    # importing runs the module's code, and the factory and the attributes read are the engine's: all fenced
    module, source, shown = fence.call(f"--engine {text!r}", "importing", lambda: _import(target, text))
    factory = fence.call(f"--engine {text!r}", "reading the factory", lambda: getattr(module, attr, None))
    if factory is None or not callable(factory):
        raise BadInput(f"--engine {text!r}: {shown} has no callable {attr!r}")
    engine = fence.call(f"--engine {text!r}", "the factory", factory)
    return fence.call(f"--engine {text!r}", "reading the protocol's attributes",
                      lambda: checked(engine, f"{shown}:{attr}", source))


def from_object(engine: Any) -> EngineRef:
    """An engine object handed over in Python (``turnbench.bench(..., engines=[obj])``), checked."""
    module = sys.modules.get(type(engine).__module__)
    return fence.call("engine object", "reading the protocol's attributes", lambda: checked(
        engine, f"{type(engine).__module__}:{type(engine).__qualname__}", _source(module)))


def _import(target: str, text: str) -> tuple[Any, dict[str, str], str]:
    """The module ``target`` names (a dotted name, or a ``.py`` file), its source and its shown name."""
    if target.endswith(".py") or "/" in target:
        path = Path(target).expanduser()
        if not path.is_file():
            raise BadInput(f"--engine {text!r}: {target}: no such file")
        name = "turnbench_engine_" + re.sub(r"\W", "_", path.stem)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise BadInput(f"--engine {text!r}: {target} cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise BadInput(f"--engine {text!r}: importing {path.name} raised {_what(exc)}") from exc
        return module, _source(module), path.name
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (target == exc.name or target.startswith(exc.name + ".")):
            raise BadInput(f"--engine {text!r}: no module named {exc.name!r} (on PYTHONPATH?); a file is given as "
                           "FILE.py:FACTORY") from None
        raise BadInput(f"--engine {text!r}: importing {target} raised {_what(exc)}") from exc
    except Exception as exc:
        raise BadInput(f"--engine {text!r}: importing {target} raised {_what(exc)}") from exc
    return module, _source(module), target


def _source(module: Any) -> dict[str, str]:
    path = getattr(module, "__file__", None)
    out = {"module": getattr(module, "__name__", "?")}
    if isinstance(path, str) and Path(path).is_file():
        out.update({"file": Path(path).name, "sha256": canonical.sha256_file(Path(path))})
    return out


def _what(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


def _whole(engine: Any, key: str, default: int, top: int, where: str) -> int:
    value = getattr(engine, key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise EngineFailed(f"{where}: {key} must be a whole number from 1 to {top}, not {value!r}")
    return value


def checked(engine: Any, factory: str, source: Mapping[str, str]) -> EngineRef:
    """``engine`` when it has the protocol's attributes of the right types; EngineFailed naming what is wrong."""
    where = f"engine {factory}"
    missing = [k for k in REQUIRED if not hasattr(engine, k)]
    if missing:
        raise EngineFailed(f"{where}: the object lacks {', '.join(missing)} (docs/engines.md: name, version, config, "
                           "index, search)")
    name, version, config = engine.name, engine.version, engine.config
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise EngineFailed(f"{where}: name {name!r} must be lowercase letters, digits, '.', '_' or '-'")
    where = f"engine {name} ({factory})"
    if not isinstance(version, str) or not version.strip():
        raise EngineFailed(f"{where}: version must be a non-empty string, not {version!r}")
    if not isinstance(config, Mapping):
        raise EngineFailed(f"{where}: config must be a mapping (recorded as JSON), not {type(config).__name__}")
    try:
        config = canonical.parse_json(canonical.dumps(dict(config)))
    except (TypeError, ValueError) as exc:
        raise EngineFailed(f"{where}: config is not JSON turnbench can record ({exc})") from None
    for method in ("index", "search"):
        if not callable(getattr(engine, method)):
            raise EngineFailed(f"{where}: {method} is not a method")
    depth = _whole(engine, "depth", DEFAULT_DEPTH, MAX_DEPTH, where)
    batch = _whole(engine, "batch", 1, MAX_BATCH, where)
    declared = getattr(engine, "rerank", None)
    base = Path(str(getattr(sys.modules.get(type(engine).__module__), "__file__", "") or ".")).parent
    rerank = None if declared is None else parse_rerank(declared, where, depth=depth, base=base)
    return EngineRef(engine, factory, dict(source), name, version, config, depth, batch, rerank)


def read_answers(ref: EngineRef, questions: Sequence[Question], answer: Any,
                 known: Mapping[str, str]) -> list[tuple[str, list[str], list[float]]]:
    """``(question id, passage ids, scores)`` per question from what ``search`` returned for ``questions``, every
    pair checked; ``known`` maps the inventory's passage ids to themselves."""
    where = f"engine {ref.name}"
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Sequence):
        raise EngineFailed(f"{where}: search returned a {type(answer).__name__}; it returns one list of (passage id, "
                           "score) pairs per question, in the order given")
    if len(answer) != len(questions):
        raise EngineFailed(f"{where}: search was given {len(questions)} question(s) and returned {len(answer)} "
                           "answer(s)")
    out = []
    for q, hits in zip(questions, answer, strict=True):
        if isinstance(hits, (str, bytes, Mapping)) or not isinstance(hits, Sequence):
            raise EngineFailed(f"{where}: question {q.id}: the answer is a {type(hits).__name__}, not a list of "
                               "(passage id, score) pairs")
        if len(hits) > ref.depth:
            raise EngineFailed(f"{where}: question {q.id}: {len(hits)} passages returned, more than the depth "
                               f"{ref.depth}")
        pids, scores = [], []
        for rank, pair in enumerate(hits, 1):
            pid, score = _pair(where, q.id, rank, pair)
            if pid not in known:
                raise UnjudgedPassage(f"{where}: question {q.id}: passage {pid[:80]!r} (rank {rank}) is not in the "
                                      "passage inventory")
            pids.append(known[pid])
            scores.append(score)
        if len(set(pids)) != len(pids):
            twice = next(p for p in pids if pids.count(p) > 1)
            raise EngineFailed(f"{where}: question {q.id}: passage {twice!r} is returned more than once")
        out.append((q.id, pids, scores))
    return out


def _pair(where: str, qid: str, rank: int, pair: Any) -> tuple[str, float]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise EngineFailed(f"{where}: question {qid}: hit {rank} is not a (passage id, score) pair")
    pid, score = pair
    if not isinstance(pid, str):
        raise EngineFailed(f"{where}: question {qid}: hit {rank}'s passage id is a {type(pid).__name__}, not a string")
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise EngineFailed(f"{where}: question {qid}: hit {rank} ({pid[:80]}) has score {fence.shown(score)}, not a "
                           "finite number")
    try:
        value = float(score)  # an int (or a Fraction) beyond ±1.8e308 has no float: said, never an OverflowError
    except OverflowError:
        raise EngineFailed(f"{where}: question {qid}: hit {rank} ({pid[:80]}) has score {fence.shown(score)}, "
                           "beyond a float's range (±1.8e308)") from None
    if not math.isfinite(value):
        raise EngineFailed(f"{where}: question {qid}: hit {rank} ({pid[:80]}) has score {fence.shown(score)}, not a "
                           "finite number")
    return pid, value
