"""Engine families: an arm file declares the engine it runs on (``engine = "opensearch" | "qdrant" |
"sqlite-fts5"``), and each engine other than OpenSearch is one module behind one small interface.

OpenSearch arms run as before (turnbench.engines.retrieval). An arm of another family is benched through the engine
protocol's path (turnbench.engines.inprocess): :func:`engine_ref` wraps the arm in an engine whose every call is
fenced, whose answers are checked and asked twice, and whose run comes back as a ``RunResult`` like an arm's — so
judging, scoring, the gate and the report never learn which engine ranked the passages (docs/design.md §12 rule 7).

A family (a module named in :data:`FAMILIES`) has:

    TABLE: str                                  # the arm file's table holding the family's settings, e.g. "fts5"
    PLACEHOLDERS: tuple[str, ...]               # the placeholders its body may hold
    def parse(raw, body, where) -> dict         # the family's settings from the arm file, every one checked
    def versions() -> dict[str, str]            # what ran: the engine's own versions, for provenance
    def check(arm) -> None                      # optional: the engine's own objects built from sample values
    def build_record(settings) -> dict          # optional: what the engine builds under, defaults written out
    def open(arm) -> Store                      # a store for one run

and a store:

    batch: int                                  # questions per query call
    def load(passages) -> None                  # load the inventory (every passage with its text)
    def verify() -> dict                        # read back what the engine stored and compare it with what the arm
                                                # declares: a dropped or changed setting is SettingIgnored
    def query(questions, depth) -> list         # the arm's query template run per question: (passage id, score)
    def close() -> None
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from turnbench.errors import BadInput

if TYPE_CHECKING:
    from turnbench.engines.protocol import EngineContext, EngineRef, Question
    from turnbench.engines.stages import RerankSpec
    from turnbench.passages import Passage

OPENSEARCH = "opensearch"
# engine name -> the module of its family; OpenSearch is turnbench.engines.retrieval's, not a family module
FAMILIES = {"qdrant": "turnbench.engines.families.qdrant", "sqlite-fts5": "turnbench.engines.families.fts5"}
ENGINES = (OPENSEARCH, *sorted(FAMILIES))
# the keys every family's arm file may hold besides its own table
COMMON_KEYS = frozenset({"name", "description", "depth", "engine", "body", "rerank"})


class Arm(Protocol):
    """What a family reads of an arm (turnbench.engines.arms.Arm; named here, not imported: arms imports this)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def depth(self) -> int: ...
    @property
    def body(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def settings(self) -> Mapping[str, Any]: ...
    @property
    def rerank(self) -> RerankSpec | None: ...

    def config(self) -> dict[str, Any]: ...


class Store(Protocol):
    """One arm's engine for one run (see the module docstring)."""

    batch: int

    def load(self, passages: Sequence[Passage]) -> None: ...

    def verify(self) -> dict[str, Any]: ...

    def query(self, questions: Sequence[Question], depth: int) -> list[list[tuple[str, float]]]: ...

    def close(self) -> None: ...


def check_engine(value: Any, where: str) -> str:
    """The engine an arm file names (``opensearch`` when it names none); BadInput in one line otherwise."""
    if not isinstance(value, str) or value not in ENGINES:
        raise BadInput(f"{where}: engine {value!r} is not one of {', '.join(ENGINES)}")
    return value


def family(engine: str) -> ModuleType:
    """The module of ``engine``'s family (imported when first asked for: ``--help`` imports none)."""
    return importlib.import_module(FAMILIES[engine])


def parse_settings(engine: str, raw: Mapping[str, Any], body: str, where: str) -> dict[str, Any]:
    """The family's settings from the arm file's table, checked; keys no family arm takes refused."""
    fam = family(engine)
    allowed = COMMON_KEYS | {fam.TABLE} | set(getattr(fam, "EXTRA_KEYS", ()))
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise BadInput(f"{where}: unknown key(s) {', '.join(unknown)}; an arm on {engine} has "
                       f"{', '.join(sorted(allowed))}")
    table = raw.get(fam.TABLE)
    if not isinstance(table, dict):
        raise BadInput(f"{where}: an arm on {engine} declares its settings in a [{fam.TABLE}] table")
    settings: dict[str, Any] = fam.parse(raw, body, where)
    return settings


class ArmEngine:
    """An arm of a family, as the engine protocol sees it: its name, its depth, the engine's versions and the arm in
    full as the configuration; ``index`` loads the passages and verifies what was stored before any question."""

    def __init__(self, arm: Arm) -> None:
        self.arm = arm
        self.family = family(arm.engine)
        versions = self.family.versions()
        if hasattr(self.family, "check"):  # what the engine itself would refuse, refused before any stack starts
            self.family.check(arm)
        self.name = arm.name
        self.depth = arm.depth
        self.version = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
        self.batch = int(self.family.BATCH)
        self.config = {"engine": arm.engine, "arm": arm.config(), "versions": versions,
                       "verified": self.family.VERIFIED,
                       # what the engine builds under, every default written out, where the family says
                       **({"build": self.family.build_record(arm.settings)}
                          if hasattr(self.family, "build_record") else {})}
        self.store: Store | None = None
        self.read_back: dict[str, Any] = {}

    def index(self, passages: Sequence[Passage], context: EngineContext) -> None:
        self.close()
        self.store = self.family.open(self.arm)
        self.store.load(passages)
        self.read_back = self.store.verify()

    def search(self, questions: Sequence[Question], depth: int) -> list[list[tuple[str, float]]]:
        if self.store is None:
            raise BadInput(f"arm {self.name}: searched before its passages were loaded")
        return self.store.query(questions, depth)

    def close(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            store.close()


def engine_ref(arm: Arm) -> EngineRef:
    """``arm`` (of a family other than OpenSearch) as an engine the engine protocol's path benches."""
    from turnbench.engines import fence
    from turnbench.engines.protocol import EngineRef, _source

    where = f"arm {arm.name} ({arm.engine})"
    engine = fence.call(where, "opening the engine", lambda: ArmEngine(arm))
    return EngineRef(engine, f"{FAMILIES[arm.engine]}:{arm.engine}", _source(engine.family), arm.name,
                     engine.version, engine.config, arm.depth, engine.batch, arm.rerank,
                     description=arm.description or f"an arm on {arm.engine}")
