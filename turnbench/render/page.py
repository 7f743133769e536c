"""What the HTML report reads: a results directory's numbers, its exported run and qrels read back, and — when a
corpus is at hand — the texts its bindings stand for, checked first (docs/design.md §3 rule 2).

The texts come from the corpus the caller names (``turnbench report --corpus DIR``), else from the corpus path
``bench`` and ``score`` record in runinfo.json (outside the claim, so a path there changes no claimed byte).
When neither is there, or the recorded one is gone or now holds another corpus, the report is drawn without
texts and says so; a corpus that *is* named and binds differently is refused (StaleBinding), never shown.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Meeting
from turnbench.errors import BadInput
from turnbench.harness import bindings as binding_rows
from turnbench.harness import exports
from turnbench.harness.bindings import BIND_DEPTH, BINDINGS, QUERY, Binding, PassageBinding, QueryBinding
from turnbench.harness.exports import QRELS_PASSAGES, RUN_PASSAGES
from turnbench.harness.score import ResultsFiles
from turnbench.results.record import Results


@dataclass(frozen=True)
class Texts:
    """The corpus text a report may show: query texts, gold turns, and the turns each bound passage covers."""

    source: str  # one line saying where the texts came from
    queries: Mapping[str, str] = field(default_factory=dict)  # query id -> text
    gold: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # query id -> (where, text)
    passages: Mapping[str, str] = field(default_factory=dict)  # passage id -> covered turns' text

    @property
    def available(self) -> bool:
        return bool(self.queries)


@dataclass(frozen=True)
class Page:
    """One results directory as the report reads it. Its exported files are parsed on first use: a comparison
    that needs only the numbers never pays for reading megabytes of runs."""

    results: Results
    files: Mapping[str, exports.Content]  # the exported run, qrels and bindings, as written
    texts: Texts
    corpus_dir: str | None = None  # what runinfo.json records, if anything
    # runinfo.json's query latency quantiles (ms): measured, never claimed, so only pages written on demand show it
    latency_ms: Mapping[str, float] | None = None
    claim: str = ""  # the claim.sha256 text that vouched for the directory, when read from disk
    # results just scored, as scoring holds them: the run's tops, the qrels and the bindings are set, no file is read
    scored: bool = False
    # the binding rows of some queries and passages (or all, given None), as scoring computes them from what judging
    # kept (``PageSource.bindings``): a page asks for a few dozen, never for every row
    bind: Callable[[Collection[str] | None, Collection[str] | None], Sequence[Binding]] | None = None

    @property
    def exported(self) -> bool:
        return self.scored or all(name in self.files for name in (RUN_PASSAGES, QRELS_PASSAGES, BINDINGS))

    @functools.cached_property
    def run(self) -> Mapping[str, list[str]]:
        """Rule-5 order, the top of each query (what the bindings cover)."""
        if not self.exported:
            return {}
        parsed = exports.parse_run(self.files[RUN_PASSAGES], RUN_PASSAGES, depth=BIND_DEPTH)
        return {qid: [d for d, _ in docs] for qid, docs in parsed.items()}

    def top(self, qid: str) -> list[str]:
        """``run.get(qid, [])``, without parsing the whole run when it has not been: a page's cards need the tops
        of a few queries of a run of a million lines."""
        if "run" in self.__dict__ or not self.exported:
            return list(self.run.get(qid, ()))
        data = self.files[RUN_PASSAGES]
        if "_plain" not in self.__dict__:
            self.__dict__["_plain"] = exports.plain_run(data)
        if not self.__dict__["_plain"]:
            return list(self.run.get(qid, ()))
        tops = self.__dict__.setdefault("_tops", {})
        if qid not in tops:
            tops[qid] = exports.run_tops(exports.content_bytes(data), [qid], BIND_DEPTH).get(qid, [])
        return list(tops[qid])

    @functools.cached_property
    def qrels(self) -> Mapping[str, Mapping[str, int]]:
        if not self.exported:
            return {}
        return exports.parse_qrels(exports.content_bytes(self.files[QRELS_PASSAGES]), QRELS_PASSAGES)

    @property
    def has_bindings(self) -> bool:
        """Whether anything is bound, without parsing bindings.jsonl (a line is a binding, or the file is refused
        when it is parsed)."""
        if "bindings" in self.__dict__ or not self.exported or self.bind is not None:
            return bool(self.bindings)
        return bool(exports.content_bytes(self.files[BINDINGS]).strip())

    def bindings_of(self, ids: Collection[str]) -> Sequence[Binding]:
        """The binding rows of those targets (and perhaps others), without reading every row when they have not
        been read."""
        if "bindings" in self.__dict__ or not self.exported:
            return self.bindings
        if self.bind is not None:
            return self.bind(ids, ids)
        return binding_rows.parse(exports.content_bytes(self.files[BINDINGS]), BINDINGS, ids)

    @functools.cached_property
    def bindings(self) -> Sequence[Binding]:
        if self.bind is not None:
            return self.bind(None, None)
        return binding_rows.parse(exports.content_bytes(self.files[BINDINGS]), BINDINGS) if self.exported else ()

    @property
    def label(self) -> str:
        return self.results.label

    @property
    def corpus_id(self) -> str:
        return self.results.corpus_id

    @property
    def corpus_sha256(self) -> str:
        return self.results.provenance.corpus.sha256

    def with_texts(self, texts: Texts) -> Page:
        view = Page(self.results, self.files, texts, self.corpus_dir, self.latency_ms, self.claim, self.scored,
                    self.bind)
        # what this view has parsed already, the other has too (the same files): never parsed twice
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k in _PARSED})
        return view


_PARSED = ("run", "qrels", "bindings", "_plain", "_tops")  # cached properties, and tops found without ``run``


# a side of a comparison: one results directory (seed None), or a set of seeds' directories
Side = list[tuple[int | None, "Page"]]
NO_TEXTS = Texts("no corpus given and none recorded: texts are not shown (pass --corpus DIR)")


def from_files(results: Results, files: Mapping[str, exports.Content], corpus_dir: str | None = None,
               latency_ms: Mapping[str, float] | None = None, claim: str = "") -> Page:
    view = Page(results, {n: files[n] for n in (RUN_PASSAGES, QRELS_PASSAGES, BINDINGS) if n in files},
                NO_TEXTS, corpus_dir, latency_ms, claim)
    if not view.exported:
        # written before results carried their runs: numbers only, no passages, nothing bound to text
        return view.with_texts(Texts("these results carry no exported run or bindings (written by an older "
                                     "turnbench): no texts or passages are shown"))
    return view


class Source(Protocol):
    """What scoring held that a page of its results reads (``pipeline.executor.PageSource``): the binding rows of
    some targets (or all), each query's shown top, the passage qrels."""

    @property
    def bindings(self) -> Callable[[Collection[str] | None, Collection[str] | None], Sequence[Binding]]: ...

    @property
    def run(self) -> Mapping[str, Sequence[str]]: ...

    @property
    def qrels(self) -> Mapping[str, Mapping[str, int]]: ...


def from_results(results: ResultsFiles, source: Source | None = None) -> Page:
    """The view of results just scored: the run's tops, the qrels and the bindings taken as scoring holds them when
    it kept them (``source``; the same values the files are written from), not parsed back from its files."""
    if source is None:
        return from_files(results.results, results.extra_files)
    view = Page(results.results, {}, NO_TEXTS, scored=True, bind=source.bindings)
    # cached_property reads the instance's __dict__ first, so this is what the first use would have computed
    view.__dict__.update(run=source.run, qrels=source.qrels)
    return view


def texts_from(view: Page, corpus: Corpus, how: str, read: Mapping[str, Meeting] | None = None,
               memo: dict[tuple[Any, ...], str] | None = None, only: Collection[str] | None = None) -> Texts:
    """The texts ``view``'s bindings stand for in ``corpus``, after checking every binding against it (``read``:
    the corpus's meetings, when already read; ``memo``: digests computed from this corpus for another view).
    ``only``: the queries a page shows; then only their bindings (the query and its shown passages) are checked
    and given texts, and a page that shows none reads no corpus text at all."""
    if corpus.id != view.corpus_id:
        raise BadInput(f"corpus {corpus.id} is not the corpus of the {view.label} results ({view.corpus_id})")
    if only is None:
        rows = view.bindings
    elif not only:
        rows = []  # a page that shows no query parses no binding either
    else:
        shown = {pid for qid in only for pid in view.top(qid)}
        rows = [r for r in view.bindings_of({*only, *shown}) if r.id in (only if r.target == QUERY else shown)]
    queries = {q.id: q for q in corpus.queries()} if rows else {}
    meetings: dict[str, Meeting] = (binding_rows.check(rows, corpus, f"{view.label} results", read, memo, queries)
                                    if rows else {})
    note = "" if corpus.sha256 == view.corpus_sha256 else (
        f"; its sha256 differs from the results' ({view.corpus_sha256[:12]}…) but every "
        f"{'bound' if only is None else 'shown'} target's text is unchanged")
    turns = {mid: {t.index: t for t in m.turns} for mid, m in meetings.items()}
    bound_q = [r.id for r in rows if isinstance(r, QueryBinding)]
    gold: dict[str, tuple[tuple[str, str], ...]] = {}
    for qid in bound_q:
        q = queries[qid]
        items = []
        for m in sorted(q.gold_turns):
            for a, b in sorted(q.gold_turns[m]):
                for i in range(a, b + 1):
                    t = turns[m].get(i)
                    if t is not None:
                        items.append((f"{m} turn {i} · {t.speaker}", t.text))
        gold[qid] = tuple(items)
    # what each passage was judged holding: its held words, turn by turn (a window shows its window, not the turn)
    passages = {r.id: " ".join(" ".join(turns[r.meeting][i].text.split()[a:b]) for i, a, b in r.spans)
                for r in rows if isinstance(r, PassageBinding) and r.meeting in turns}
    return Texts(f"texts from corpus {corpus.id} (sha256 {corpus.sha256[:12]}…), {how}{note}",
                 {qid: queries[qid].text for qid in bound_q}, gold, passages)


class Meetings:
    """Each corpus's meetings read once, and each bound target's digest computed once, however many results
    directories bind to it."""

    def __init__(self) -> None:
        self._read: dict[str, dict[str, Meeting]] = {}
        self._memo: dict[str, dict[tuple[Any, ...], str]] = {}

    def of(self, corpus: Corpus) -> dict[str, Meeting]:
        key = f"{corpus.id}/{corpus.sha256}"
        if key not in self._read:
            self._read[key] = {m.id: m for m in corpus.iter_meetings()}
        return self._read[key]

    def memo(self, corpus: Corpus) -> dict[tuple[Any, ...], str]:
        return self._memo.setdefault(f"{corpus.id}/{corpus.sha256}", {})


PRIMARY = ("nDCG@10", "meeting:nDCG@10")  # the measure a class is shown by: passage level where it has one
WORST = 10  # the cards a page shows: the weakest queries of one results directory, the worst regressions of two


def primary(values: Mapping[str, float]) -> tuple[str, float] | None:
    """The measure a query is shown by, and its value; None when it has none of them."""
    for m in PRIMARY:
        if m in values:
            return m, values[m]
    return None


def per_query_values(view: Page) -> dict[str, tuple[str, Mapping[str, float]]]:
    """Each judged query's class and values."""
    block = view.results.retrieval
    return {r.query_id: (r.cls, r.values) for r in (block.per_query if block else ())}


def primary_values(view: Page) -> tuple[dict[str, list[float]], list[tuple[float, str, str]]]:
    """Each class's primary values in query-id order, and (value, query, class) of every query that has one."""
    panels: dict[str, list[float]] = {}
    scores: list[tuple[float, str, str]] = []
    for qid, (cls, values) in sorted(per_query_values(view).items()):
        p = primary(values)
        if p is not None:
            panels.setdefault(cls, []).append(p[1])
            scores.append((p[1], qid, cls))
    return panels, scores


def results_shown(view: Page) -> list[str]:
    """The queries the page of one results directory shows a card for (the weakest), so only their texts need
    reading."""
    return [qid for _, qid, _ in sorted(primary_values(view)[1])[:WORST]]
