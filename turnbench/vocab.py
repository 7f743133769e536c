"""The vocabularies turnbench speaks: each set of names in one place, used by the library and the CLI's choices.

A name is a ``StrEnum`` member, so it is its own string in JSON and in comparisons, and a choice list is never
written out twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from turnbench.errors import BadInput


@dataclass(frozen=True)
class Scope:
    """Which passages a run searched. ``gold-meetings`` is an ORACLE: it knows each answer's meetings, so its
    figures are an upper bound on ranking within meetings, never a product figure; the label travels with
    every run and result made under it."""

    name: str
    oracle: bool
    label: str  # what the run's resolved arm configuration says
    meaning: str  # what a results file says


SCOPES: Mapping[str, Scope] = MappingProxyType({s.name: s for s in (
    Scope("corpus", False, "corpus: every passage in the index is a candidate (what a product does)",
          "retrieval over the whole corpus, as a product does"),
    Scope("gold-meetings", True, "ORACLE UPPER BOUND: each query is restricted to its own gold meetings",
          "ORACLE: retrieval restricted to each query's gold meetings; an upper bound, not a system result"),
)})


def get_scope(name: str) -> Scope:
    try:
        return SCOPES[name]
    except KeyError:
        raise BadInput(f"unknown scope {name!r}; scopes: {', '.join(SCOPES)}") from None
