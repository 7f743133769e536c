"""Score one run of one corpus: judge, normalise, evaluate, aggregate (docs/design.md §3, §6, §7).

``score_run`` is what ``turnbench score`` and ``turnbench bench`` both call (through the executor,
``turnbench.pipeline.executor``, which decides where its parts run and where its files are staged: scoring
here only says what is computed from what, ``harness.execution``). It returns ``ResultsFiles``, the results
directory in memory: the metrics.json document and the files beside it, so the markdown is rendered from exactly
what the JSON claims and ``compare`` can recompute everything from files alone.

Counting (``trec_eval -c``): every ranked query of the corpus is accounted for. A judgeable query the
run did not answer scores 0 and is counted in ``unanswered``; an unjudgeable one is dropped from the
means and counted in ``dropped_unjudgeable``. Means are ``math.fsum`` over per-query values rounded to
``DECIMALS``, in sorted query-id order, then rounded again, so a mean recomputed from the per-query rows
of metrics.json is the mean the row reports.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from turnbench import canonical
from turnbench.canonical import q6
from turnbench.corpus.format import Corpus
from turnbench.corpus.records import RANKED_CLASSES, Query
from turnbench.errors import BadInput, TierRefused
from turnbench.harness import bindings, exports, judgements, metrics, spans, ties
from turnbench.harness import extra as extra_measures
from turnbench.harness.execution import INLINE, Execution, Job
from turnbench.harness.held import Span
from turnbench.harness.rows import aggregate_rows, grouped_rows
from turnbench.harness.strict import block_and_qrels
from turnbench.passages import Passage
from turnbench.rankings import Placement, RankedPassage, Ranking, normalised_order
from turnbench.results.record import ANSWERS, Answers, Results, Scope, arm_label, provenance_of
from turnbench.results.tables import Block, QueryValues
from turnbench.versions import libraries
from turnbench.vocab import get_scope

SCHEMA_VERSION = 2  # 2: span and entry-point measures, rows by surface, the strict block
UNKNOWN = "external/unknown"
GROUP_BY = ("corpus", "class")


@dataclass(frozen=True)
class EngineSide:
    """What every results file says of the engine side, as it was given (free-form facts, docs/design.md §4): the
    stack it ran on, the index it searched, the arm. ``UNKNOWN`` where it is not known: none is left out, so an
    absent value cannot pass for a default."""

    stack: object
    index: object
    arm: object

    def to_json(self) -> dict[str, object]:
        return {"stack": self.stack, "index": self.index, "arm": self.arm}


@dataclass(frozen=True)
class ResultsFiles:
    """What scoring one run gives: its results record (and blocks other stages add to it, e.g. ``answers``) and the
    files written beside metrics.json (the exported qrels and runs, bindings, answers.md)."""

    results: Results
    # e.g. answers.md, written beside; a large file (a run) may be made only as it is written
    extra_files: Mapping[str, exports.Content] = field(default_factory=dict)
    # metrics.md as it was written from this record, when it was (so that what prints it need not render it again)
    markdown: str | None = field(default=None, compare=False)

    @property
    def document(self) -> Mapping[str, Any]:
        """metrics.json's tree, as the record holds it for the writer (its bytes are the claim)."""
        return self.results.tree

    def with_answers(self, answers: Answers, files: Mapping[str, exports.Content] | None = None) -> ResultsFiles:
        """These results with the answers block (and the files written beside it, answers.md)."""
        if self.results.answers is not None:
            raise BadInput(f"metrics.json already has an {ANSWERS!r} block")
        results = replace(self.results, answers=answers, tree={**self.results.tree, ANSWERS: answers.to_json()})
        return ResultsFiles(results, {**self.extra_files, **(files or {})})

    def with_files(self, files: Mapping[str, exports.Content]) -> ResultsFiles:
        """These results with more files beside them (the page, a trace)."""
        return ResultsFiles(self.results, {**self.extra_files, **files}, self.markdown)


@dataclass(frozen=True)
class Kept:
    """What scoring read and made that the files are written from, handed back beside them so that what reads the
    results next (the report page) need not parse them back or read the corpus again: the ranked queries, the
    passages bound (shown in a top ``BIND_DEPTH``, or graded) with the digests judging made of them and of the
    queries as the corpus went by, the spans held, the top ``BIND_DEPTH`` of each query's run and the passage qrels.
    Never written."""

    queries: Sequence[Query]
    passages: Sequence[Passage]
    passage_digests: Mapping[str, str]
    held: Mapping[str, Sequence[Span]]
    query_digests: Mapping[str, str]
    run: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, int]]


def _run_sha256(run: Mapping[str, Sequence[str]]) -> str:
    """sha256 of the normalised run as lines ``query<TAB>id id id...`` in query-id order."""
    return canonical.sha256_bytes("".join(f"{qid}\t{' '.join(run[qid])}\n" for qid in sorted(run)).encode("utf-8"))


# the share of the corpus (by bytes) judged in this process: the other part is judged in another from before the run
# is ordered, so it is given more
HERE_SHARE = 0.4


@dataclass(frozen=True)
class _Setting:
    """What every step of one scoring reads and none changes: where the numbers come from, and what is scored."""

    corpus_id: str
    corpus_prov: Mapping[str, Any]
    engine_side: EngineSide
    scope: Any
    policy: judgements.RelevancePolicy
    ranked: list[Query]  # the retrieval-scored queries, in id order
    query_ids: set[str]  # every query's
    passages: list[Passage]
    pmap: dict[str, Passage]
    meeting_of: dict[str, str]  # each passage's meeting, by passage id
    tag: str  # the exported runs' tag
    execution: Execution  # where the parts run and the files made go
    extra: tuple[metrics.Measure, ...] = ()  # the extra measures asked for (``harness.extra``): none, no block


@dataclass(frozen=True)
class _Ordered:
    """The run in rule-5 order and what scoring reads of it."""

    run: dict[str, list[str]]  # every query the run answers
    ranked_run: dict[str, list[str]]  # the ranked queries', in id order
    m_order: dict[str, list[str]]  # their meetings by first occurrence
    best: dict[str, Sequence[float]]  # each passage's best raw score, in that order
    ignored: list[str]  # queries of the corpus the run answers that are not ranked
    placed: tuple[Placement, dict[str, Any]]  # the inventory in rule-5 order, each query's hits as positions in it
    shown: set[str]  # the passages of a top BIND_DEPTH: bound, for the report shows them
    tops: set[str]  # the passages of a top SPAN_DEPTH: the span measures read their words
    files: Callable[[], Mapping[str, exports.Content]]  # the three exported runs


def score_run(corpus: Corpus, passages: Iterable[Passage], run_entries: _Run, *, policy: judgements.RelevancePolicy,
              engine: EngineSide, scope: str = "corpus", execution: Execution = INLINE,
              measures: Sequence[str] = ()) -> ResultsFiles:
    """Judge ``passages`` against ``corpus``'s gold and score ``run_entries`` on every ranked query.

    ``corpus`` needs ``queries()``, ``iter_meetings()`` and ``provenance()`` (``turnbench.corpus.Corpus``).
    ``engine``: the engine side's stack, index and arm (``UNKNOWN`` when scoring another engine's output).
    ``run_entries`` may be a function that gives them, or a ``Job`` reading them: either is taken once scoring's
    parts are started, a job's as soon as it is ready, judging going on meanwhile. ``execution``: where the parts
    run and where the files made go (``harness.execution``; the default runs all here and keeps all in memory).
    ``measures``: extra measures' names (``metrics.EXTRA_MEASURES``), written to an ``extra`` block."""
    return score_kept(corpus, passages, run_entries, policy=policy, engine=engine, scope=scope,
                      execution=execution, measures=measures)[0]


def score_kept(corpus: Corpus, passages: Iterable[Passage], run_entries: _Run, *, policy: judgements.RelevancePolicy,
               engine: EngineSide, scope: str = "corpus", execution: Execution = INLINE,
               measures: Sequence[str] = ()) -> tuple[ResultsFiles, Kept]:
    """``score_run``, with what it kept for what reads the results next (``Kept``)."""
    sc = get_scope(scope)
    extra = metrics.selected(measures)
    corpus_prov = corpus.provenance()
    if (corpus_prov.get("licence") or {}).get("tier") == "C":
        raise TierRefused(f"corpus {corpus_prov['id']} is licence tier C (its source's own terms): turnbench records "
                          "it (measure --against reads it) but puts no number on it")
    passages = list(passages)
    # what reads every passage is made before the first part is started: a forked process's memory is shared with
    # its parent until either writes to it, and counting a reference is a write, so each passage touched after the
    # fork would cost a copy of the page it is on
    pmap, ranked = _inventory(passages, corpus.queries())
    setting = _Setting(corpus_prov["id"], corpus_prov, engine, sc, policy, ranked,
                       {q.id for q in corpus.queries()}, passages, pmap, {p.id: p.meeting for p in passages},
                       exports.run_tag(arm_label(engine.arm)), execution, extra)
    placed = Placement.of(passages)
    placed.meetings  # noqa: B018  # made now: the meeting run and the tie report read it
    query_digests = bindings.QueryDigests(setting.ranked)
    halves = corpus.halves(HERE_SHARE) if hasattr(corpus, "halves") else None
    judging = judgements.Judging(setting.ranked, judgements.Parts(*halves) if halves else corpus.iter_meetings(),
                                 setting.passages, setting.policy, keep=True, visit=query_digests,
                                 start=execution.start)
    # the parts that need only the inventory and the corpus start together: passages.jsonl's bytes and sha256, made
    # while the run is ordered here; and judging, whose other part is judged here once the run is ordered
    with execution.inventory(passages) as inventory_side, judging:
        return _scored(setting, run_entries, placed, judging, query_digests, inventory_side)


_InventorySide = Job[tuple[str, exports.Content]]
# a run: its entries, a function that gives them, or a job reading them
_Run = Iterable[RankedPassage] | Callable[[], Iterable[RankedPassage]] | Job[list[RankedPassage] | Ranking]


def _scored(setting: _Setting, given: _Run, placed: Placement, judging: judgements.Judging,
            query_digests: bindings.QueryDigests, inventory_side: _InventorySide) -> tuple[ResultsFiles, Kept]:
    """``score_run`` once its parts are started: the run read and normalised while judging goes on, judging
    finished with what the run ranks; then the two sides of scoring."""
    with contextlib.ExitStack() as stack:
        # what needs only the queries, made while the run may still be being read
        query_digests.begin()
        made: list[_Ordered] = []

        # what judging keeps depends on the run's top passages: the run is ordered (and its three runs' writer
        # forked) between two meetings judged here, as soon as it has been read; judging goes on meanwhile
        def filters(wait: bool) -> judgements.Filters | None:
            if not made:
                if not wait and isinstance(given, Job) and not given.ready():
                    return None
                entries = given.result() if isinstance(given, Job) else given() if callable(given) else given
                made.append(_ordered(setting, entries if isinstance(entries, Ranking) else list(entries), placed,
                                     stack))
            return made[0].tops, made[0].shown

        digests: dict[str, str] = {}
        judged = judging.finish(filters=filters, digests_out=digests)
        return _judged(setting, made[0], judged, digests, query_digests, inventory_side)


def _ordered(setting: _Setting, run_entries: Ranking | list[RankedPassage], placed: Placement,
             stack: contextlib.ExitStack) -> _Ordered:
    """The run in rule-5 order (a query id the corpus does not have is refused), and its three exported runs, as the
    execution makes them (a forked writer where the results are staged; else made as they are written)."""
    best: dict[str, Sequence[float]] = {}
    firsts: dict[str, list[str]] = {}
    positions: dict[str, Any] = {}
    run = normalised_order(run_entries, setting.pmap, best, firsts, placed=placed, positions_out=positions)
    foreign = sorted(set(run) - setting.query_ids)
    if foreign:
        raise BadInput(f"the run answers {len(foreign)} query id(s) that are not in corpus {setting.corpus_id}, "
                       f"e.g. {', '.join(foreign[:3])}")
    ranked_ids = {q.id for q in setting.ranked}
    m_order = {qid: firsts[qid] for qid in sorted(run) if qid in ranked_ids}
    ranked_run = {qid: run[qid] for qid in sorted(run) if qid in ranked_ids}
    raw = (run_entries.only(ranked_ids) if isinstance(run_entries, Ranking)
           else [e for e in run_entries if e.query_id in ranked_ids])
    files = setting.execution.runs((exports.RUN_PASSAGES, exports.RUN_MEETINGS, exports.RUN_RAW),
                                   functools.partial(exports.run_files, ranked_run, m_order, raw, setting.tag), stack)
    return _Ordered(run, ranked_run, m_order, best, sorted(set(run) - ranked_ids), (placed, positions),
                    {pid for pids in ranked_run.values() for pid in pids[:bindings.BIND_DEPTH]},
                    {pid for pids in ranked_run.values() for pid in pids[:spans.SPAN_DEPTH]}, files)


def _judged(setting: _Setting, ordered: _Ordered, judged: judgements.Judged, digests: Mapping[str, str],
            query_digests: bindings.QueryDigests, inventory_side: _InventorySide) -> tuple[ResultsFiles, Kept]:
    """``_scored`` once judging is done: the comparable measures, then bindings.jsonl, are made by one part (wanted
    last: where it is a child, this process's work is the longer path) while the measures, the tie report and
    spans.jsonl are made here. One part, not two: a forked child copies the pages it touches."""
    corpus_id, ranked, run = setting.corpus_id, setting.ranked, ordered.run
    ok = {qid: j for qid, j in judged.queries.items() if j.judgeable}
    p_qrels = {qid: j.passages for qid, j in ok.items() if j.level == "turn"}
    m_qrels = {qid: j.meetings for qid, j in ok.items()}
    scored = metrics.Scorer(max((len(v) for v in run.values()), default=0))
    meeting_of = setting.meeting_of
    heads = [_row_head(corpus_id, q, ok, run) for q in ranked if q.id in ok]
    comparable = functools.partial(spans.comparable_values,
                                   timed=spans.times_are_truth(setting.corpus_prov.get("producer"), judged.timings))
    setting.execution.keep(setting, judged, digests, meeting_of, ordered)  # not freed one by one
    bound = [setting.pmap[pid] for pid in sorted(ordered.shown | {pid for j in ok.values() for pid in j.passages})]
    kept = Kept(ranked, bound, digests, judged.held, query_digests.digests(), {}, p_qrels)
    binder = functools.partial(bindings.compute, ranked, bound, {}, judged.held, kept.query_digests, digests)
    with setting.execution.start(_beside, functools.partial(comparable, heads, run, judged, setting.pmap, meeting_of),
                                 binder, setting.execution.files, later=True) as beside:
        p_vals = metrics.evaluate_lists(p_qrels, run, scored, metrics.PASSAGE_MEASURES)
        # the strict block: after the tie report (it reads each query's head, and the graded values)
        strict = functools.partial(block_and_qrels, corpus_id, ranked, heads, p_qrels,
                                   functools.partial(metrics.evaluate_lists, ranked=run, scored=scored,
                                                     measures=metrics.PASSAGE_MEASURES), p_vals)
        return _metrics_side(setting, ordered, judged, ok, (p_qrels, m_qrels), p_vals, scored, meeting_of,
                             kept, (beside, strict), inventory_side)


def _beside(comparable: Callable[[], spans.Comparable], binder: Callable[[], list[bindings.Binding]],
            files: Callable[[Mapping[str, exports.Content]], dict[str, exports.Content]]
            ) -> tuple[spans.Comparable, dict[str, exports.Content]]:
    return comparable(), files({bindings.BINDINGS: bindings.text(binder())})


def _metrics_side(setting: _Setting, ordered: _Ordered, judged: judgements.Judged,
                  ok: Mapping[str, judgements.QueryJudgements],
                  qrels: tuple[Mapping[str, Mapping[str, int]], Mapping[str, Mapping[str, int]]],
                  p_vals: Mapping[str, Mapping[metrics.Measure, float]], scored: metrics.Scorer,
                  meeting_of: Mapping[str, str],
                  kept: Kept, children: tuple[Job[tuple[spans.Comparable, dict[str, exports.Content]]],
                                              Callable[[], tuple[Block, bytes]]],
                  inventory_side: _InventorySide) -> tuple[ResultsFiles, Kept]:
    """The measures, the tie report and spans.jsonl, here while the other parts make theirs; then, with what they and
    the inventory's part made, the rows and the document."""
    corpus_id, ranked, run, ranked_run, m_order = (setting.corpus_id, setting.ranked, ordered.run, ordered.ranked_run,
                                                   ordered.m_order)
    jq = judged.queries
    p_qrels, m_qrels = qrels
    m_vals = metrics.evaluate_lists(m_qrels, m_order, scored, metrics.MEETING_MEASURES)
    per_query = _per_query_rows(corpus_id, ranked, ok, run, p_vals, m_vals)
    timed = spans.times_are_truth(setting.corpus_prov.get("producer"), judged.timings)

    measures = ([str(m) for m in metrics.ALL_MEASURES] + list(spans.SPAN_MEASURES)
                + (list(spans.ENTRY_MEASURES) if timed else []))
    unjudgeable = [q.id for q in ranked if not jq[q.id].judgeable]
    dropped = {c: sum(1 for q in ranked if q.cls == c and not jq[q.id].judgeable) for c in RANKED_CLASSES}
    judged_ids = [r.query_id for r in per_query]
    tie_report = ties.report(ranked_run, ordered.best, [qid for qid in judged_ids if qid in ranked_run],
                         ties.Rescorer(p_qrels, m_qrels, scored, meeting_of, m_order),
                         {r.query_id: r.values for r in per_query},
                         {r.query_id: r.cls for r in per_query}, p_qrels, meeting_of,
                         ties.Grades(p_qrels, m_qrels, *ordered.placed))
    side = exports.sidecar(setting.policy.to_json(), measures, unjudgeable,
                     [r.query_id for r in per_query if not r.answered], setting.tag,
                     comparable=spans.comparable_facts(timed, judged.by_times), extra=[str(m) for m in setting.extra])
    strict, strict_qrels = children[1]()
    run_sha = _run_sha256(run)
    files = exports.export_files(p_qrels, m_qrels, ordered.files(), side)
    files[exports.QRELS_STRICT] = strict_qrels
    files.update(setting.execution.files({exports.SPANS: exports.spans_text(judged, ordered.tops, ok, meeting_of)}))
    comparable, made = children[0].result()
    files.update(made)
    per_query = [_with_spans(r, comparable[r.query_id], timed) if r.query_id in comparable else r for r in per_query]
    by_surface, by_domain = (grouped_rows(key, corpus_id, per_query, measures, ranked, set(unjudgeable))
                             for key in ("surface", "domain"))
    counts = {**_counts(ranked, per_query, ok, jq, dropped, ordered.ignored),
              "passages_judged_by_times": judged.by_times}
    retrieval = Block("retrieval", tuple(measures), GROUP_BY,
                      tuple(aggregate_rows(corpus_id, per_query, measures, dropped)), tuple(per_query), by_surface,
                      by_domain, tuple(m for m in measures if m in spans.COMPARABLE), counts, tie_report,
                      dropped=tuple(unjudgeable))
    inventory, files[exports.PASSAGES] = inventory_side.result()
    passages = setting.passages
    provenance = _provenance(setting.corpus_prov, setting.engine_side, setting.policy, len(passages), inventory, run,
                             run_sha)
    scope = Scope(setting.scope.name, setting.scope.meaning, setting.scope.oracle)
    extra = extra_measures.block(setting.extra, qrels, (run, m_order), scored, per_query, corpus_id, dropped,
                                 GROUP_BY) if setting.extra else None
    # the record, and beside it the tree metrics.json will be: the claim is its bytes
    document = {"schema_version": SCHEMA_VERSION, "provenance": provenance,
                "scope": {"label": scope.label, "oracle": scope.oracle, "meaning": scope.meaning},
                "retrieval": retrieval.to_json(), "strict": strict.to_json(),
                **({extra_measures.BLOCK: extra.to_json()} if extra is not None else {})}
    results = Results(SCHEMA_VERSION, scope, provenance_of(provenance), retrieval, strict, None, document, extra)
    tops_shown = {qid: list(pids[:bindings.BIND_DEPTH]) for qid, pids in ranked_run.items() if pids}
    return ResultsFiles(results, files), replace(kept, run=tops_shown)


def _inventory(passages: Sequence[Passage], queries: Iterable[Query]) -> tuple[dict[str, Passage], list[Query]]:
    """The inventory by id (a passage id twice is refused) and the ranked queries."""
    pmap = {p.id: p for p in passages}
    if len(pmap) != len(passages):
        raise BadInput("the passage inventory holds a passage id more than once")
    return pmap, _ranked_queries(queries)


def _with_spans(row: QueryValues, spans_of: tuple[Mapping[str, float], float | None], timed: bool) -> QueryValues:
    """A turn-level query's row with its span measures and, where the corpus's times are truth, its entry-point
    error."""
    values, error = spans_of
    return row.with_values({**row.values, **values}, entry_error_s=error if timed else None, entry_recorded=timed,
                           domain=row.domain)


def _provenance(corpus_prov: Mapping[str, Any], engine_side: EngineSide, policy: judgements.RelevancePolicy,
                n_passages: int, inventory: str, run: Mapping[str, Sequence[str]], run_sha: str) -> dict[str, Any]:
    """Where every number of the results comes from (docs/design.md §3 rule 1): corpus, engine side, metric engine,
    policy, and the identity of the inventory and the run as scored."""
    depths = [len(v) for v in run.values()]
    return {
        "corpus": corpus_prov,
        "licence_tier": (corpus_prov.get("licence") or {}).get("tier", "unrecorded"),
        **engine_side.to_json(),
        "metric_engine": metrics.engine_provenance(),
        "libraries": libraries(),  # the versions that shape these bytes: `make verify` compares them first
        "relevance_policy": policy.to_json(),
        "inputs": {
            "passages": {"count": n_passages, "sha256": inventory},
            "run": {"queries": len(run), "entries": sum(depths), "max_depth": max(depths, default=0),
                    "sha256_normalised": run_sha,
                    "order": "best score per passage, then -score, kind, meeting, index, id"},
        },
    }


def _ranked_queries(queries: Iterable[Query]) -> list[Query]:
    """The retrieval-scored queries in id order, each of a ranked class."""
    ranked = sorted((q for q in queries if q.scored_on == "retrieval"), key=lambda q: q.id)
    for q in ranked:
        if q.cls not in RANKED_CLASSES:
            raise BadInput(f"query {q.id} is scored on retrieval but its class {q.cls!r} is not a ranked class")
    return ranked


def _per_query_rows(corpus_id: str, ranked: Sequence[Query], ok: Mapping[str, judgements.QueryJudgements],
                    run: Mapping[str, Sequence[str]], p_vals: Mapping[str, Mapping[metrics.Measure, float]],
                    m_vals: Mapping[str, Mapping[metrics.Measure, float]]) -> list[QueryValues]:
    """One row per judged query, in id order: its groups and its values (6 decimals)."""
    names = {m: str(m) for m in metrics.ALL_MEASURES}
    per_query = []
    for q in ranked:
        if q.id not in ok:
            continue
        values = {names[m]: q6(v) for m, v in p_vals.get(q.id, {}).items()}
        values.update({names[m]: q6(v) for m, v in m_vals[q.id].items()})
        # real corpora mix domains (QMSum: product, academic, committee) that differ more than arms do
        per_query.append(_row_head(corpus_id, q, ok, run, values, q.meta.get("domain")))
    return per_query


def _row_head(corpus_id: str, q: Query, ok: Mapping[str, judgements.QueryJudgements], run: Mapping[str, Sequence[str]],
              values: Mapping[str, float] | None = None, domain: str | None = None) -> QueryValues:
    """What names and groups a judged query's row (before its values, without them)."""
    return QueryValues(q.id, q.cls, q.surface, ok[q.id].level, bool(run.get(q.id)), values or {}, corpus_id, q.rule,
                       domain)


def _counts(ranked: Sequence[Query], per_query: Sequence[QueryValues],
            ok: Mapping[str, judgements.QueryJudgements],
            judged: Mapping[str, judgements.QueryJudgements], dropped: Mapping[str, int], ignored: Sequence[str]
            ) -> dict[str, Any]:
    grades: dict[str, int] = {}
    for j in ok.values():
        for g in j.passages.values():
            grades[str(g)] = grades.get(str(g), 0) + 1
    return {
        "queries_ranked": len(ranked),
        "queries_judged": len(per_query),
        "queries_unanswered": sum(1 for r in per_query if not r.answered),
        "queries_dropped_unjudgeable": sum(dropped.values()),
        "judged_passages": sum(grades.values()),
        "judged_passages_by_grade": dict(sorted(grades.items())),
        "gold_meetings_without_passages": sum(j.gold_meetings_without_passages for j in judged.values()),
        "run_queries_not_ranked": len(ignored),
    }


