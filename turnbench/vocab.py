"""The vocabularies turnbench speaks: each set of names in one place, used by the library and by the CLI's choices.

A name is a ``StrEnum`` member, so it is its own string in JSON, in comparisons and as a dictionary key, and a
choice list is never written out twice: ``click.Choice(ProviderName)`` offers exactly these. ``parse`` turns a
string a caller gave into a member, refusing an unknown one in one line that lists the known ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TypeVar

from turnbench.errors import BadInput

E = TypeVar("E", bound=StrEnum)


def parse(kind: type[E], value: str, what: str) -> E:
    """``value`` as a member of ``kind``; BadInput naming ``what`` and the known values otherwise."""
    try:
        return kind(value)
    except ValueError:
        raise BadInput(f"unknown {what} {str(value)[:80]!r}; choose one of {', '.join(kind)}") from None


def choices(kind: type[E], *, without: Iterable[E] = ()) -> list[str]:
    """The values of ``kind`` in their declared order, less ``without`` (for a command that offers fewer)."""
    left = set(without)
    return [m.value for m in kind if m not in left]


class ProviderName(StrEnum):
    """Where the stack comes from (docs/design.md §9). ``auto`` chooses and says why."""

    AUTO = "auto"
    EMBEDDED = "embedded"
    DOCKER = "docker"
    EXTERNAL = "external"


class Answerer(StrEnum):
    """Who answers the aggregation questions: the reference engine, the floor that declines everything, or nobody
    (``skip``: bench leaves the answers block out)."""

    REFERENCE = "reference"
    NONE = "none"
    SKIP = "skip"


class ScopeName(StrEnum):
    """Which passages a run searches: the whole corpus, or (an ORACLE) each query's own gold meetings."""

    CORPUS = "corpus"
    GOLD_MEETINGS = "gold-meetings"


class KnnEngine(StrEnum):
    """The k-NN engine of a vector field; faiss and nmslib need native libraries the embedded node lacks."""

    LUCENE = "lucene"
    FAISS = "faiss"
    NMSLIB = "nmslib"


class VectorIndex(StrEnum):
    """How vectors are held: stored for an exact script to score, or in an HNSW graph for the knn query."""

    EXACT = "exact"
    HNSW = "hnsw"


class FusionMethod(StrEnum):
    """Client-side fusion of several runs: reciprocal rank, or weighted per-query min-max scores."""

    RRF = "rrf"
    MINMAX = "minmax"


class Level(StrEnum):
    """What a query is judged at: passages (keyed on its gold turns), or only whole meetings."""

    TURN = "turn"
    MEETING = "meeting"


class ExtraMeasure(StrEnum):
    """The measures ``--measure`` adds beside the headline ones (turnbench.harness.extra), in the order they are
    written whatever order they are asked in; each is also offered at meeting level as ``meeting:NAME``."""

    R1 = "R@1"
    P5 = "P@5"
    P10 = "P@10"
    MAP100 = "MAP@100"  # trec_eval's map_cut.100, ir_measures' AP@100
    SUCCESS1 = "Success@1"
    SUCCESS5 = "Success@5"
    SUCCESS10 = "Success@10"


class Stage(StrEnum):
    """A bench's stages, in the order they run; the value is the key of the stage's seconds in runinfo.json
    (``elapsed_seconds``), ``label`` the words progress shows and ``bench`` prints for it."""

    STACK = "stack"
    LOAD = "load"
    ANSWERS = "answers"
    RUN = "run"
    JUDGE_AND_SCORE = "judge_and_score"
    REPORT = "report"
    WRITE = "write"

    @property
    def label(self) -> str:
        return "judge + score" if self is Stage.JUDGE_AND_SCORE else self.value


@dataclass(frozen=True)
class Scope:
    """Which passages a run searched. ``gold-meetings`` is an ORACLE: it knows each answer's meetings, so its
    figures are an upper bound on ranking within meetings, never a product figure; the label travels with
    every run and result made under it."""

    name: ScopeName
    oracle: bool
    label: str  # what the run's resolved arm configuration says
    meaning: str  # what a results file says


SCOPES: Mapping[str, Scope] = MappingProxyType({s.name: s for s in (
    Scope(ScopeName.CORPUS, False, "corpus: every passage in the index is a candidate (what a product does)",
          "retrieval over the whole corpus, as a product does"),
    Scope(ScopeName.GOLD_MEETINGS, True, "ORACLE UPPER BOUND: each query is restricted to its own gold meetings",
          "ORACLE: retrieval restricted to each query's gold meetings; an upper bound, not a system result"),
)})


def get_scope(name: str) -> Scope:
    return SCOPES[parse(ScopeName, name, "scope")]
