"""Where scoring's work runs and where its files go: forked children, the staged results directory, the page.

Scoring itself is pure (``turnbench.harness.score``: given its inputs in memory, the scored values); it says what is
computed from what through ``harness.execution.Execution``. ``Forked`` is the execution ``bench`` and ``score`` use:
the inventory's file, the second part of judging and the comparable measures with bindings.jsonl each made by a
forked child while this process orders the run and computes the measures (docs/measurements.md: the constants),
and, given the staged results directory (``into``), every child writes the files it makes straight there, the runs'
writer going on, when given ``lasting``, until the results' writing reaches its files. ``score`` runs scoring so,
with the cyclic collector paused, and hands back, beside the results, what the report page reads (``PageSource``):
the page is drawn by a child of its own (``page_drawer``, ``page_input``) while the claim files are written.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Query
from turnbench.harness import exports, judgements
from turnbench.harness.bindings import QUERY, Binding
from turnbench.harness.bindings import compute as compute_bindings
from turnbench.harness.execution import Job
from turnbench.harness.held import Span
from turnbench.harness.score import EngineSide, Kept, ResultsFiles, score_kept
from turnbench.passages import Passage
from turnbench.processes import NOT_YET, Background, collector_paused, outlive
from turnbench.rankings import RankedPassage
from turnbench.render.page import from_results, results_shown, texts_from
from turnbench.results.directory import REPORT_HTML

T = TypeVar("T")


class Forked:
    """Scoring's parts in forked children (``later``: at a lower priority, wanted last); files made written where
    the results are staged (``into``), else kept in memory (the inventory spooled to an unlinked temporary file by
    its child). ``lasting``, with ``into``: a stack the caller closes once the results are written, on which the
    runs' writer is entered, so that it may go on writing them until the results' writing reaches them; without
    it, scoring waits for it."""

    def __init__(self, into: Path | None = None, lasting: contextlib.ExitStack | None = None) -> None:
        self.into, self.lasting = into, lasting if into is not None else None

    def start(self, fn: Callable[..., T], *args: Any, later: bool = False, inbox: bool = False) -> Background[T]:
        if inbox:
            return Background(_receiving, fn, *args, inbox=True, later=later)
        return Background(fn, *args, later=later)

    @contextlib.contextmanager
    def inventory(self, passages: Sequence[Passage]) -> Iterator[Job[tuple[str, exports.Content]]]:
        spool = exports.Spool.open() if self.into is None else None
        with Background(exports.make_inventory, passages, self.into, spool, later=True) as making:
            yield _Then(making, lambda made: (made[0], exports.inventory_content(passages, self.into, spool, made[1],
                                                                           made[0])))

    def runs(self, names: Sequence[str], make: Callable[[], Mapping[str, exports.Content]],
             stack: contextlib.ExitStack) -> Callable[[], Mapping[str, exports.Content]]:
        into = self.into
        if into is None:
            made = make()
            return lambda: made
        side = (self.lasting or stack).enter_context(Background(_write_made, into, make, later=True))
        shas = functools.cache(side.result)
        if self.lasting is not None:  # still being written, maybe: taken when the results' writing gets there
            return lambda: exports.pending(into, names, shas)
        return lambda: exports.written(into, shas())

    def files(self, made: Mapping[str, exports.Content]) -> dict[str, exports.Content]:
        if self.into is None:
            return dict(made)
        return exports.written(self.into, _write_made(self.into, lambda: made))

    def keep(self, *objects: Any) -> None:
        outlive(*objects)  # held until a command ends, not freed one by one


def _write_made(into: Path, make: Callable[[], Mapping[str, exports.Content]]) -> dict[str, str]:
    """The files ``make`` gives written into ``into``: name -> sha256 (for ``exports.written``)."""
    return {name: exports.write_hashed(into, name, content) for name, content in make().items()}


def _receiving(receive: Callable[[bool], Any], fn: Callable[..., T], *args: Any) -> T:
    """``fn`` in an inbox child, its ``receive(wait=False)`` giving None (not ``NOT_YET``) before anything came."""
    def given(wait: bool = True) -> Any:
        got = receive(wait)
        return None if got is NOT_YET else got

    return fn(given, *args)


class _Then(Job[T]):
    """A job whose value is ``then`` of another's (a child's result made into what scoring holds)."""

    def __init__(self, job: Background[Any], then: Callable[[Any], T]) -> None:
        self._job, self._then = job, then

    def result(self) -> T:
        return self._then(self._job.result())

    def ready(self) -> bool:
        return self._job.ready()

    def send(self, value: Any) -> None:
        self._job.send(value)


@collector_paused()
def score(corpus: Corpus, passages: Iterable[Passage],
          run_entries: Iterable[RankedPassage] | Callable[[], Iterable[RankedPassage]] | Job[Any], *,
          policy: judgements.RelevancePolicy, engine: EngineSide, scope: str = "corpus",
          into: Path | None = None, lasting: contextlib.ExitStack | None = None, measures: Sequence[str] = ()
          ) -> tuple[ResultsFiles, PageSource]:
    """``harness.score.score_run`` with its parts forked (``Forked(into, lasting)``) and the cyclic collector paused,
    and what the report page reads of it."""
    results, kept = score_kept(corpus, passages, run_entries, policy=policy, engine=engine, scope=scope,
                               execution=Forked(into, lasting), measures=measures)
    return results, PageSource.of(kept)


# -- the report page: what it reads as scoring held it, drawn by a child of its own --------------------------------


@dataclass(frozen=True)
class PageSource:
    """What the report page reads, as scoring holds it (docs/design.md §10): the binding rows (``bindings``: a
    function giving those of some queries and passages, or every row when asked for none), the top of each query's
    scored run and the passage qrels (what the page would otherwise parse back from bindings.jsonl,
    run.passages.trec and qrels.passages.txt). No meeting is held for it: the bindings are the digests judging made
    as the corpus went by, and the page shows ten queries, whose meetings it reads again."""

    bindings: Callable[[Collection[str] | None, Collection[str] | None], Sequence[Binding]]
    run: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, int]]

    @classmethod
    def of(cls, kept: Kept) -> PageSource:
        return cls(Binder(kept.queries, kept.passages, kept.passage_digests, kept.held, kept.query_digests),
                   kept.run, kept.qrels)

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

    rows: Sequence[Binding]

    def __call__(self, queries: Collection[str] | None = None, passages: Collection[str] | None = None
                 ) -> list[Binding]:
        if queries is None and passages is None:
            return list(self.rows)
        return [r for r in self.rows if r.id in ((queries or ()) if r.target == QUERY else (passages or ()))]


class Binder:
    """The binding rows of the ranked queries and the bound passages, all of them or those of some targets (what a
    page shows), from the digests judging made as the corpus went by: the passages' (``passage_digests``) and the
    queries' (``query_digests``)."""

    def __init__(self, queries: Sequence[Query], passages: Sequence[Passage], passage_digests: Mapping[str, str],
                 held: Mapping[str, Sequence[Span]], query_digests: Mapping[str, str]) -> None:
        self.queries, self.passages, self.held = queries, passages, held
        self.passage_digests, self.query_digests = passage_digests, query_digests

    def __call__(self, queries: Collection[str] | None = None, passages: Collection[str] | None = None
                 ) -> list[Binding]:
        qs = self.queries if queries is None else [q for q in self.queries if q.id in queries]
        ps = self.passages if passages is None else [p for p in self.passages if p.id in passages]
        return compute_bindings(qs, ps, {}, self.held, self.query_digests, self.passage_digests)


def attach_report(results: ResultsFiles, corpus: Corpus, source: PageSource | None = None) -> ResultsFiles:
    """``results`` with report.html beside its files, drawn with the texts of the corpus it was just scored on (from
    ``source``, what scoring held, else from its files). Only the meetings of the queries the page shows are read
    again, and kept, and only their bindings checked against them (a few dozen digests: a text changed since
    judging is refused, not shown); the other bindings were just computed from this corpus, and holding their texts
    would hold the corpus (GBs at 20,000 meetings)."""
    from turnbench.render.html import results_page  # here: in the drawing child, while the claim files are written

    page = from_results(results, source)
    page = page.with_texts(texts_from(page, corpus, "the corpus these results were scored on",
                                      only=results_shown(page)))
    return results.with_files({REPORT_HTML: results_page(page)})


Drawn = tuple[ResultsFiles, PageSource | None]  # what the page's child is handed: the results and what it reads of them


def page_drawer(corpus: Corpus) -> Background[tuple[bytes, float]]:
    """A child that will draw the page of results scored on ``corpus``: started before scoring, it reads the corpus's
    queries meanwhile; ``send(page_input(results, source))`` hands it the results, ``result()`` gives the page and
    the seconds it took once they came."""
    return Background(_draw_when_handed, corpus, inbox=True)


def page_input(results: ResultsFiles, source: PageSource | None) -> Drawn:
    """``results`` reduced to what its page reads: the document, and the page source of the queries it shows."""
    if source is None:
        return ResultsFiles(results.results), None
    return ResultsFiles(results.results), source.only(results_shown(from_results(results, source)))


def _draw_when_handed(receive: Callable[[], Drawn], corpus: Corpus) -> tuple[bytes, float]:
    """In the drawing child: what needs nothing from scoring first, then the page of the results it is handed, and
    the seconds the drawing took once they came."""
    corpus.queries()
    return drawn(receive(), corpus)


def drawn(given: Drawn, corpus: Corpus) -> tuple[bytes, float]:
    """The page of ``given`` drawn with ``corpus``'s texts, and the seconds it took."""
    t0 = time.perf_counter()
    html = attach_report(given[0], corpus, given[1]).extra_files[REPORT_HTML]
    return exports.content_bytes(html), time.perf_counter() - t0
