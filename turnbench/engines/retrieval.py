"""The reference retrieval engine: arm files run on OpenSearch (docs/design.md §1, §3 rule 7).

An arm (``turnbench.engines.arms``) is a file: a search body with placeholders, an optional search pipeline, a
depth and what the index must hold. This module only fills the placeholders per query, sends the bodies and reads
the hits — the same way for every arm, so nothing here depends on what an arm is.

Scopes: ``corpus`` searches every passage (what a product does); ``gold-meetings`` fills the arm's
``{{filter}}`` with each query's own gold meetings — an ORACLE: it knows the answer's meetings, so its figures
are an upper bound on ranking within meetings, never a product figure. The label travels in the configuration.

Queries go out in ``_msearch`` batches (the first query alone, then from ``concurrency`` threads), answered
independently and collected in query-id order, so the run is the same bytes at any concurrency. On one shard the
index is sorted on (passage kind, meeting id, passage index) and force-merged to one segment, so Lucene's tie-break
among equal scores (lower document first) is the order ``turnbench.rankings.normalise`` applies, and queries keep
Lucene's fast top-k path. On several shards every search is ``dfs_query_then_fetch`` (corpus-wide term statistics, so a
passage scores as it would on one shard) and sorts explicitly by (score, kind, meeting, index), so the merged
top-k — and which tied passage makes the depth cut-off — is the one-shard answer. An arm that cannot be searched
that way (a search pipeline, or ``shards = "one"``) is refused on several shards. Only queries scored on
retrieval are run; aggregation queries belong to the answer engine.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Query
from turnbench.engines import DEFAULT_CONCURRENCY, MAX_CONCURRENCY
from turnbench.engines.arms import Arm, builtin
from turnbench.engines.msearch import answers
from turnbench.engines.pipelines import SAMPLE_QUERIES
from turnbench.engines.verified import Inventory, Verifying, read_back, verifying
from turnbench.errors import BadInput, StackStateError, UnknownArm
from turnbench.passages import Passage, ids_and_meetings
from turnbench.rankings import RankedPassage, Ranking, normalise
from turnbench.stack.info import StackInfo
from turnbench.vocab import Scope, get_scope

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from turnbench.engines.rerank import Reranked

MSEARCH_BATCH = 100
HIT_ORDER = ("passage_kind", "meeting_id", "passage_index")  # the index sort: ties broken as rule 5 breaks them


@dataclass(frozen=True)
class SearchPlan:
    """How the queries are sent to an index of ``shards`` shards: the same scores and order on any number."""

    shards: int
    search_type: str | None  # dfs_query_then_fetch on several shards
    sort: tuple[dict[str, str], ...] | None  # the hit order as an explicit sort on several shards

    def runinfo(self) -> dict[str, Any]:
        return {"shards": self.shards, "search_type": self.search_type or "query_then_fetch",
                "sort": "explicit: score, then the index order" if self.sort else "index order (one segment)"}


def search_plan(arm: Arm, shards: int) -> SearchPlan:
    if shards == 1:
        return SearchPlan(1, None, None)
    if arm.one_shard:
        why = "it runs a search pipeline, whose normalisation dfs_query_then_fetch skips" if arm.pipeline else \
            "its file says so ([requires] shards = \"one\")"
        raise BadInput(f"arm {arm.name} cannot run on an index of {shards} shards: {why}; load with --shards 1")
    return SearchPlan(shards, "dfs_query_then_fetch",
                      ({"_score": "desc"}, *({k: "asc"} for k in HIT_ORDER)))


@dataclass(frozen=True)
class RunResult:
    arm_config: dict[str, Any]  # the full resolved configuration: arm, scope (oracle label), index, order
    latencies: list[float]  # per query, seconds, as OpenSearch reports it ("took"), in query-id order
    timings: Mapping[str, float]
    passages: Sequence[Passage] = field(default=())  # the inventory the run is normalised against
    passages_sha256: str = ""
    entries: Ranking = field(default_factory=lambda: Ranking((), (0,), [], []))  # OpenSearch's ranks, raw scores
    plan: SearchPlan = field(default_factory=lambda: SearchPlan(1, None, None))
    rerank: Reranked | None = None  # the second stage, when the arm or engine declares one (entries are its output)
    client: Mapping[str, Any] | None = None  # how the queries were sent, when not by _msearch (runinfo.json)
    notes: tuple[str, ...] = ()  # what the run has to say besides its results (a Python engine's threads left)
    # passages.jsonl's bytes for ``passages``, when the run has them at hand (an inventory read back is hashed from
    # them): written as they are instead of encoded again
    passages_jsonl: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def run(self) -> dict[str, list[RankedPassage]]:
        """Normalised (docs/design.md §3 rule 5); a query with no hit is absent."""
        return normalise(self.entries, {p.id: p for p in self.passages})

    @property
    def answered(self) -> int:
        """How many queries have a hit: ``len(run)``, without normalising the run."""
        bounds = self.entries.bounds
        return sum(1 for k in range(len(bounds) - 1) if bounds[k + 1] > bounds[k])


def search_body(arm: Arm, query: Query, scope: Scope, depth: int,
                vector: Sequence[float] | None = None) -> dict[str, Any]:
    """The arm's body for one query, with what turnbench owns to read every arm's hits alike."""
    if scope.oracle and "filter" not in arm.placeholders:
        raise UnknownArm(f"arm {arm.name} has no {{{{filter}}}} in its body, so it cannot be restricted to the gold "
                         f"meetings of the {scope.name} scope")
    filters = [{"terms": {"meeting_id": sorted(query.gold_meetings)}}] if scope.oracle else []
    body = arm.request(query_text=query.text, filters=filters, depth=depth, query_vector=vector)
    pipeline = arm.pipeline_body()
    if pipeline is not None:
        body["search_pipeline"] = pipeline  # a temporary pipeline, defined in the request: nothing left on the server
    # The passage id comes from doc values: reading _id would decompress a stored-fields block per hit,
    # which measured as most of the server's time per query.
    body.update({"size": depth, "track_total_hits": False, "_source": False, "stored_fields": "_none_",
                 "docvalue_fields": ["passage_id"]})
    return body


def _resolved_config(arm: Arm, scope: Scope, index: str, depth: int, n_queries: int,
                     marker: Mapping[str, Any]) -> dict[str, Any]:
    from turnbench.loading.index import SIMILARITY as similarity

    return {
        "arm": {**arm.config(), "depth": depth},
        "scope": {"name": scope.name, "oracle": scope.oracle, "label": scope.label},
        "index": index,
        "similarity": dict(similarity),
        "hit_order": ["score desc", "passage_kind asc", "meeting_id asc", "passage_index asc"],  # index sorting
        "queries": {"scored_on": "retrieval", "count": n_queries},
        "passages": {"max_words": marker["max_words"], "sha256": marker["passages_sha256"],
                     **({"overlap": marker["overlap"]} if marker.get("overlap") else {})},
    }


def run_queries(client: OpenSearch, index: str, bodies: Sequence[tuple[str, Any]], *,
                batch: int = MSEARCH_BATCH, progress: Callable[[int, int], None] | None = None,
                concurrency: int = 1, plan: SearchPlan | None = None,
                known: Mapping[str, str] | None = None, where: str | None = None,
                make: Callable[[Any], dict[str, Any]] | None = None) -> tuple[Ranking, list[float]]:
    """Send ``(query id, body)`` pairs in ``_msearch`` batches from ``concurrency`` threads; any failed or partial
    search is refused. Returns the hits column-wise, in the order given, and each query's server time.
    ``make``: the pairs hold what it turns into a body, in the worker that sends it (while another batch is
    searched), not all before the first is sent.
    ``progress(done, total)`` is called with each batch's query count and the number of queries; ``known`` maps
    passage ids to themselves (the inventory's strings), so a million hits share their ids instead of copying them.
    ``where`` names the arm file the bodies come from: a request the server rejects as malformed is that file's
    fault (BadInput naming it), not the stack's.
    """
    from concurrent.futures import ThreadPoolExecutor

    plan = plan or SearchPlan(1, None, None)
    header = {"index": index, **({"search_type": plan.search_type} if plan.search_type else {})}
    extra = {"sort": list(plan.sort), "track_scores": True} if plan.sort else {}
    head = (json.dumps(header, separators=(",", ":")) + "\n").encode()
    # the first query goes alone: a server may set up what parses a request on first use without a lock (the k-NN
    # plugin fills its table of method parameters after publishing it: a request parsed meanwhile is refused)
    lead = 1 if concurrency > 1 and bodies else 0
    batches = [bodies[lo:lo + batch] for lo in range(lead, len(bodies), batch)]

    def send(part: Sequence[tuple[str, Any]]) -> list[tuple[str, list[str], list[float], float]]:
        # the bodies are made and serialised here, in the worker, and the response read here too: the server is
        # never idle
        payload = b"".join(head + json.dumps({**(body if make is None else make(body)), **extra},
                                             separators=(",", ":"), ensure_ascii=False).encode()
                           + b"\n" for _qid, body in part)
        return answers(client, payload, part, known, where)

    per_query: list[tuple[str, list[str], list[float]]] = []
    latencies: list[float] = []
    workers = ThreadPoolExecutor(concurrency, thread_name_prefix="turnbench-search") if concurrency > 1 else None
    try:
        first = [send(bodies[:lead])] if lead else []
        for part in itertools.chain(first, workers.map(send, batches) if workers is not None else map(send, batches)):
            for qid, pids, scores, took in part:
                per_query.append((qid, pids, scores))
                latencies.append(took)
            if progress is not None:
                progress(len(part), len(bodies))
    finally:
        if workers is not None:
            workers.shutdown(wait=True, cancel_futures=True)
    return Ranking.build(per_query), latencies


def run_arm(stack: StackInfo, corpus: Corpus, arm: Arm | str, *, scope: str = "corpus", index: str | None = None,
            depth: int | None = None, progress: Callable[[int, int], None] | None = None,
            concurrency: int = DEFAULT_CONCURRENCY, inventory: tuple[Sequence[Passage], str] | None = None
            ) -> RunResult:
    """Run every retrieval-scored query of ``corpus`` through ``arm`` against the loaded index (``progress``: as
    ``run_queries`` calls it). ``inventory``: the passages the load cut and their sha256 (what ``bench`` has in
    hand); without it the inventory the load left (kept in the state directory, else stored in PostgreSQL) is read
    back and hashed, from the start, in a thread (``engines.verified``)."""
    from turnbench.loading.index import DEFAULT_INDEX

    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise BadInput(f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, not {concurrency!r}")
    with read_back(stack, index or DEFAULT_INDEX, inventory) as reading:
        from turnbench.stack.clients import stack_errors

        with stack_errors(stack):
            return _run_arm(stack, corpus, arm, scope=scope, index=index, depth=depth, progress=progress,
                            concurrency=concurrency, inventory=reading)


def _run_arm(stack: StackInfo, corpus: Corpus, arm: Arm | str, *, scope: str, index: str | None, depth: int | None,
             progress: Callable[[int, int], None] | None, concurrency: int, inventory: Inventory) -> RunResult:
    from turnbench.loading.index import DEFAULT_INDEX, check_index_name
    from turnbench.stack.clients import search_client

    arm = (builtin(arm) if isinstance(arm, str) else arm).on_opensearch()
    sc = get_scope(scope)
    depth = arm.depth if depth is None else depth
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 10000:
        raise BadInput(f"depth must be an integer from 1 to 10000, not {depth!r}")
    index = check_index_name(index or DEFAULT_INDEX)
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    client = search_client(stack)
    with verifying(stack, client, corpus, index, inventory) as verified:
        return _searched(stack, corpus, arm, sc, index, depth, progress, concurrency, client, verified, timings, t0)


def _searched(stack: StackInfo, corpus: Corpus, arm: Arm, sc: Scope, index: str, depth: int,
              progress: Callable[[int, int], None] | None, concurrency: int, client: OpenSearch,
              verified: Verifying, timings: dict[str, float], t0: float) -> RunResult:
    """``_run_arm`` once the index's marker is read (the inventory, when it is read back, still being verified)."""
    from turnbench.loading.vectors import require_plugins

    marker = verified.marker
    if arm.rerank is not None:
        from turnbench.engines import rerank

        rerank.scorer(arm.rerank, arm.file_name)  # a stage that cannot load is refused before any query
    plan = search_plan(arm, int(marker.get("shards", 1)))
    reference = builtin(arm.approximates) if arm.approximates else None
    for a in (arm, reference):
        if a is not None:
            require_index_holds(a, marker, index)
            search_plan(a, plan.shards)  # the reference arm, too, must run on this many shards
    if arm.vector_field:
        require_plugins(client)
    timings["verify_s"] = time.perf_counter() - t0

    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    vectors = None
    if arm.encoder:
        from turnbench.engines import encoders
        from turnbench.engines.embeddings import embed

        t0 = time.perf_counter()
        vectors = embed(encoders.get(arm.encoder), [(q.id, q.text) for q in queries], role="query")
        timings["embed_queries_s"] = time.perf_counter() - t0
    def body_of(q: Query) -> dict[str, Any]:
        return search_body(arm, q, sc, depth, vectors.vector(q.id) if vectors else None)

    # the checks' queries made now: they refuse an arm this scope cannot run before any query is sent; the rest
    # are made by the workers as they send them
    bodies = [(q.id, body_of(q)) for q in queries[:CHECKED_QUERIES]]
    handed = verified.now()
    t0 = time.perf_counter()
    try:
        entries, latencies = run_queries(client, index, [(q.id, q) for q in queries], progress=progress,
                                         concurrency=concurrency, plan=plan,
                                         known=_known(handed[1]) if handed is not None else None,
                                         where=arm.file_name, make=body_of)
    except Exception:
        verified.wait()  # an index that does not hold its inventory is refused as that, whatever its search did
        raise
    timings["search_s"] = time.perf_counter() - t0
    marker, passages, sha, lines = handed or verified.wait()
    timings["queries"] = float(len(queries))
    timings["queries_per_s"] = len(queries) / timings["search_s"] if timings["search_s"] > 0 else 0.0

    config = _resolved_config(arm, sc, index, depth, len(queries), marker)
    if vectors is not None:
        config["query_vectors"] = vectors.provenance("queries")
    t0 = time.perf_counter()
    config.update(_checks(client, index, arm, reference, bodies, entries, plan, concurrency, lambda q: search_body(
        reference, q, sc, depth, vectors.vector(q.id) if vectors else None) if reference else {}, queries))
    timings["checks_s"] = time.perf_counter() - t0
    timings["concurrency"] = float(concurrency)
    result = RunResult(arm_config=config, latencies=latencies, timings=timings, passages=passages,
                       passages_sha256=sha, entries=entries, plan=plan, passages_jsonl=lines)
    if arm.rerank is None:
        return result
    from turnbench.engines.rerank import with_rerank
    from turnbench.engines.texts import passages_with_texts

    return with_rerank(result, arm.rerank, passages_with_texts(corpus, marker), queries, arm.file_name)



def _known(passages: Sequence[Passage]) -> dict[str, str]:
    """Each passage id mapped to itself: the inventory's strings, which the hits then share."""
    ids = ids_and_meetings(passages)[0]
    return dict(zip(ids, ids, strict=True))


def _checks(client: OpenSearch, index: str, arm: Arm, reference: Arm | None,
            bodies: Sequence[tuple[str, dict[str, Any]]], entries: Ranking, plan: SearchPlan, concurrency: int,
            reference_body: Callable[[Query], dict[str, Any]], queries: Sequence[Query]) -> dict[str, Any]:
    """What the run's answers are checked against before any is scored, as the arm's configuration records it: the
    same queries sent again give the same hits (``repeat_check``); a pipeline's fusion is what the server applied
    (``pipeline_check``); an approximate arm's recall against the arm it approximates (``approximation``)."""
    out: dict[str, Any] = {"repeat_check": _repeat_check(client, index, arm, bodies, entries, plan)}
    if arm.pipeline is not None:
        out["pipeline_check"] = _pipeline_check(client, index, arm, bodies, entries, plan)
    if reference is not None:
        from turnbench.engines.approximation import recall_against

        if reference.encoder != arm.encoder:
            raise BadInput(f"arm {arm.name} approximates {reference.name}, which uses another encoder")
        ref_entries, _ = run_queries(client, index, [(q.id, reference_body(q)) for q in queries],
                                     concurrency=concurrency, plan=plan, where=reference.file_name)
        out["approximation"] = {"of": reference.name, "reference_sha256": reference.file_sha256,
                                **recall_against(list(entries), list(ref_entries))}
    return out


REPEATED_QUERIES = 10
CHECKED_QUERIES = max(REPEATED_QUERIES, SAMPLE_QUERIES)  # the most queries any check resends


def _top(entries: Ranking, k: int) -> list[tuple[str, float]]:
    ids, scores = entries.hits(k)
    return list(zip(ids, scores, strict=True))


def _repeat_check(client: OpenSearch, index: str, arm: Arm, bodies: Sequence[tuple[str, dict[str, Any]]],
                  entries: Ranking, plan: SearchPlan) -> dict[str, Any]:
    """Refuse (NondeterministicRun) unless the first queries, sent again, get the same hits with the same scores:
    a run is deterministic or it is refused."""
    from turnbench.errors import NondeterministicRun

    sample = list(bodies[:REPEATED_QUERIES])
    again, _ = run_queries(client, index, sample, plan=plan, where=arm.file_name)
    position = {qid: k for k, qid in enumerate(entries.query_ids)}
    for k, (qid, _) in enumerate(sample):
        if _top(again, k) != _top(entries, position[qid]):
            raise NondeterministicRun(f"{arm.file_name}: arm {arm.name}: query {qid} sent twice got different hits; "
                                      "a run whose answers change cannot be reproduced or compared")
    return {"rule": f"the first {len(sample)} queries sent twice give the same hits and scores", "queries": len(sample)}


def _pipeline_check(client: OpenSearch, index: str, arm: Arm, bodies: Sequence[tuple[str, dict[str, Any]]],
                    entries: Ranking, plan: SearchPlan) -> dict[str, Any]:
    """Each sub-query of the first queries sent alone, and the server's fused hits re-derived from their lists
    under the pipeline's declared settings (``turnbench.engines.pipelines``)."""
    from turnbench.engines import pipelines

    fusion = pipelines.parse(arm.pipeline_body() or {}, arm.file_name)
    sample = list(bodies[:pipelines.SAMPLE_QUERIES])
    alone = []
    for qid, body in sample:
        owned = {k: v for k, v in body.items() if k not in ("query", "search_pipeline")}
        for i, sub in enumerate(pipelines.sub_queries(body, arm.file_name)):
            alone.append((f"{qid}\t{i}", {"query": sub, **owned}))
    got, _ = run_queries(client, index, alone, plan=plan, where=arm.file_name)
    lists: dict[str, list[list[tuple[str, float]]]] = {}
    for k, key in enumerate(got.query_ids):
        qid, _ = key.split("\t")
        lists.setdefault(qid, []).append(_top(got, k))
    position = {qid: k for k, qid in enumerate(entries.query_ids)}
    server = {qid: _top(entries, position[qid]) for qid, _ in sample}
    return pipelines.check(fusion, arm.name, arm.file_name, server, lists)


def require_index_holds(arm: Arm, marker: Mapping[str, Any], index: str) -> None:
    """Refuse an arm whose vector field the loaded index does not hold, before any query is sent."""
    if not arm.vector_field:
        return
    held = marker.get("vectors") or {}
    if held.get("field") == arm.vector_field and held.get("encoder") == arm.encoder and (
            held.get("graph") or not arm.needs_graph):
        return
    def what(field: Any, encoder: Any, graph: bool) -> str:
        return f"{field!r} ({encoder}, {'HNSW graph' if graph else 'no graph'})"

    has = what(held.get("field"), held.get("encoder"), bool(held.get("graph"))) if held else "no vector field"
    option = " --vector-index hnsw" if arm.needs_graph else ""
    raise StackStateError(f"{arm.file_name}: arm {arm.name} needs vector field "
                          f"{what(arm.vector_field, arm.encoder, arm.needs_graph)}; index {index!r} holds {has}: load "
                          f"with `turnbench load --encoder {arm.encoder}{option}` (bench does so)")


def run_tag(arm_config: Mapping[str, Any]) -> str:
    """The TREC run tag: the arm name, with the scope appended when it is the oracle."""
    name = arm_config["arm"]["name"]
    return name if not arm_config["scope"]["oracle"] else f"{name}@{arm_config['scope']['name']}"
