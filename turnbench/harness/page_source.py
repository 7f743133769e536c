"""The page source: what the report page of results just scored reads, as scoring holds it (docs/design.md §10).

The page shows ten queries; these hand it their binding rows, tops and qrels without parsing the files back, and
small enough to cross to the process that draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turnbench.corpus.records import Query
from turnbench.harness import bindings as B
from turnbench.harness.held import Span
from turnbench.passages import Passage


@dataclass(frozen=True)
class PageSource:
    """What the report page reads, as scoring holds it: the binding rows (``bindings``: a function giving those of
    some queries and passages, or every row when asked for none), the top of each query's scored run and the passage
    qrels (what the page would otherwise parse back from bindings.jsonl, run.passages.trec and qrels.passages.txt).
    No meeting is held for it: the bindings are the digests judging made as the corpus went by, and the page shows
    ten queries, whose meetings it reads again."""

    bindings: Callable[[Collection[str] | None, Collection[str] | None], Sequence[Mapping[str, Any]]]
    run: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, int]]

    def only(self, queries: Collection[str]) -> PageSource:
        """What the page reads of ``queries`` alone — their bindings (each query's and its shown passages'), tops
        and qrels: all a page that shows only those queries reads, small enough to hand to another process."""
        run = {q: self.run[q] for q in queries if q in self.run}
        shown = {pid for pids in run.values() for pid in pids}
        return PageSource(Rows(self.bindings(queries, shown)), run, {q: self.qrels[q] for q in queries
                                                                      if q in self.qrels})


@dataclass(frozen=True)
class Rows:
    """Binding rows held, given as ``PageSource.bindings`` gives them: those of some targets, or all."""

    rows: Sequence[Mapping[str, Any]]

    def __call__(self, queries: Collection[str] | None = None, passages: Collection[str] | None = None
                 ) -> list[Mapping[str, Any]]:
        if queries is None and passages is None:
            return list(self.rows)
        return [r for r in self.rows
                if r["id"] in ((queries or ()) if r["target"] == B.QUERY else (passages or ()))]


class Binder:
    """The binding rows of the ranked queries and the bound passages, all of them or those of some targets (what a
    page shows), from the digests judging made as the corpus went by: the passages' (``passage_digests``) and the
    queries' (``query_digests``)."""

    def __init__(self, queries: Sequence[Query], passages: Sequence[Passage], passage_digests: Mapping[str, str],
                 held: Mapping[str, Sequence[Span]], query_digests: Mapping[str, str]) -> None:
        self.queries, self.passages, self.held = queries, passages, held
        self.passage_digests, self.query_digests = passage_digests, query_digests

    def __call__(self, queries: Collection[str] | None = None, passages: Collection[str] | None = None
                 ) -> list[dict[str, Any]]:
        qs = self.queries if queries is None else [q for q in self.queries if q.id in queries]
        ps = self.passages if passages is None else [p for p in self.passages if p.id in passages]
        return B.compute(qs, ps, {}, self.held, self.query_digests, self.passage_digests)
