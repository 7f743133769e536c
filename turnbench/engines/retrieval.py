"""The reference retrieval engine: arm files run on OpenSearch (DESIGN §1, §3 rule 7).

An arm (``turnbench.engines.arms``) is a file: a search body with placeholders, an optional search pipeline, a
depth and what the index must hold. This module only fills the placeholders per query, sends the bodies and reads
the hits — the same way for every arm, so nothing here depends on what an arm is.

Scopes: ``corpus`` searches every passage (what a product does); ``gold-meetings`` fills the arm's
``{{filter}}`` with each query's own gold meetings — an ORACLE: it knows the answer's meetings, so its figures
are an upper bound on ranking within meetings, never a product figure. The label travels in the resolved
configuration.

Queries go out in ``_msearch`` batches. The index is sorted on (passage kind, meeting id, passage index),
so Lucene's tie-break among equal scores (lower document first) is the order ``turnbench.runs.normalise``
applies: which of several tied passages makes the depth cut-off is decided by the passages, not by the
order they were indexed in — and queries keep Lucene's fast top-k path (no per-query sort). Only queries
scored on retrieval are run; aggregation queries belong to the answer engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Query
from turnbench.engines.arms import Arm, builtin
from turnbench.errors import BadInput, SearchFailed, StackStateError, UnknownArm
from turnbench.runs import Passage, RankedPassage, Scope, get_scope, inventory_sha256, normalise
from turnbench.stack.info import StackInfo

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

MSEARCH_BATCH = 100
# Only what a run needs comes back: the passage id (from doc values), the score, and what proves completeness.
MSEARCH_FILTER = ",".join(f"responses.{k}" for k in ("hits.hits.fields", "hits.hits._score", "took", "timed_out",
                                                      "_shards", "error", "status"))


@dataclass(frozen=True)
class RunResult:
    arm_config: dict[str, Any]  # the full resolved configuration: arm, scope (oracle label), index, order
    run: dict[str, list[RankedPassage]]  # normalised (DESIGN rule 5); a query with no hit is absent
    latencies: list[float]  # per query, seconds, as OpenSearch reports it ("took"), in query-id order
    timings: Mapping[str, float]
    passages: tuple[Passage, ...] = field(default=())  # the inventory the run is normalised against
    passages_sha256: str = ""
    entries: tuple[RankedPassage, ...] = field(default=())  # as OpenSearch returned them: its ranks, raw scores


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
    from turnbench.stack.index import SIMILARITY as similarity  # the index's scoring function is part of the arm

    return {
        "arm": {**arm.config(), "depth": depth},
        "scope": {"name": scope.name, "oracle": scope.oracle, "label": scope.label},
        "index": index,
        "similarity": dict(similarity),
        "hit_order": ["score desc", "passage_kind asc", "meeting_id asc", "passage_index asc"],  # index sorting
        "queries": {"scored_on": "retrieval", "count": n_queries},
        "passages": {"max_words": marker["max_words"], "sha256": marker["passages_sha256"]},
    }


def run_queries(client: OpenSearch, index: str, bodies: Sequence[tuple[str, dict[str, Any]]], *,
                batch: int = MSEARCH_BATCH, progress: Callable[[int, int], None] | None = None
                ) -> tuple[list[RankedPassage], list[float]]:
    """Send ``(query id, body)`` pairs in ``_msearch`` batches; any failed or partial search is refused.
    ``progress(done, total)`` is called with each batch's query count and the number of queries."""
    from opensearchpy.exceptions import TransportError

    entries: list[RankedPassage] = []
    latencies: list[float] = []
    for lo in range(0, len(bodies), batch):
        part = bodies[lo:lo + batch]
        lines: list[dict] = []
        for _qid, body in part:
            lines.append({"index": index})
            lines.append(body)
        try:
            resp = client.msearch(body=lines, filter_path=MSEARCH_FILTER)
        except TransportError as exc:
            raise SearchFailed(f"queries {part[0][0]}..{part[-1][0]}: OpenSearch refused the _msearch batch: "
                               f"{exc}") from None
        for (qid, _body), r in zip(part, resp["responses"], strict=True):
            if "error" in r:
                raise SearchFailed(f"query {qid}: OpenSearch answered an error: {r['error']}")
            shards = r.get("_shards", {})
            if r.get("timed_out") or shards.get("failed", 0):  # a skipped shard could not match: not partial
                raise SearchFailed(f"query {qid}: partial result (timed out or shards failed): {shards}")
            latencies.append(r["took"] / 1000.0)
            # filter_path drops an empty hit list entirely: no key means no hit
            for rank, hit in enumerate(r.get("hits", {}).get("hits", ()), 1):
                pid = hit.get("fields", {}).get("passage_id")
                if not pid:
                    raise SearchFailed(f"query {qid}: hit {rank} carries no passage_id; "
                                       "the index is not a passage index")
                entries.append(RankedPassage(qid, pid[0], rank, float(hit["_score"])))
        if progress is not None:
            progress(len(part), len(bodies))
    return entries, latencies


def run_arm(stack: StackInfo, corpus: Corpus, arm: Arm | str, *, scope: str = "corpus", index: str | None = None,
            depth: int | None = None, progress: Callable[[int, int], None] | None = None) -> RunResult:
    """Run every retrieval-scored query of ``corpus`` through ``arm`` against the loaded index (``progress``: as
    ``run_queries`` calls it)."""
    from turnbench.stack.clients import stack_errors

    with stack_errors(stack):
        return _run_arm(stack, corpus, arm, scope=scope, index=index, depth=depth, progress=progress)


def _run_arm(stack: StackInfo, corpus: Corpus, arm: Arm | str, *, scope: str, index: str | None, depth: int | None,
             progress: Callable[[int, int], None] | None) -> RunResult:
    from turnbench.errors import IndexNotSettled
    from turnbench.stack.clients import opensearch_client
    from turnbench.stack.index import (
        DEFAULT_INDEX,
        check_index_name,
        describe_difference,
        expected_counts,
        observed_counts,
    )
    from turnbench.stack.load import loaded_marker
    from turnbench.stack.passages import chunk_meeting
    from turnbench.stack.vectors import require_plugins

    arm = builtin(arm) if isinstance(arm, str) else arm
    sc = get_scope(scope)
    depth = arm.depth if depth is None else depth
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 10000:
        raise BadInput(f"depth must be an integer from 1 to 10000, not {depth!r}")
    index = check_index_name(index or DEFAULT_INDEX)
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    client = opensearch_client(stack)
    marker = loaded_marker(stack, corpus, index=index, client=client)
    # The inventory is rebuilt from the corpus (chunking is pure) and must be the one the index was built from.
    passages = tuple(sorted((c.passage for m in corpus.iter_meetings()
                             for c in chunk_meeting(m.id, m.turns, max_words=marker["max_words"])),
                            key=lambda p: (p.meeting, p.index)))
    sha = inventory_sha256(passages)
    if sha != marker["passages_sha256"]:
        raise IndexNotSettled(f"index {index!r} was built from a different passage inventory "
                              f"(sha256 {marker['passages_sha256'][:12]}…, rebuilt {sha[:12]}…)")
    expected = expected_counts(passages)
    got = observed_counts(client, index)
    if got != expected:
        raise IndexNotSettled(f"index {index!r} no longer holds the loaded passages: "
                              f"{describe_difference(expected, got)}")
    reference = builtin(arm.approximates) if arm.approximates else None
    for a in (arm, reference):
        if a is not None:
            require_index_holds(a, marker, index)
    if any(a is not None and "hybrid" in _keys(a.request(query_text="", filters=[], depth=depth, query_vector=[0.0]))
           for a in (arm, reference)):
        shards = int(next(iter(client.indices.get_settings(index=index, name="index.number_of_shards").values()))
                     ["settings"]["index"]["number_of_shards"])
        if shards != 1:
            raise StackStateError(f"arm {arm.name}: the hybrid query cannot use dfs_query_then_fetch, so its scores "
                                  f"would depend on the split of index {index!r} into {shards} shards: load one shard")
    if arm.vector_field:
        require_plugins(client)
    timings["verify_s"] = time.perf_counter() - t0

    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    vectors = None
    if arm.encoder:
        from turnbench.engines import encoders
        from turnbench.engines.embeddings import embed

        t0 = time.perf_counter()
        vectors = embed(encoders.get(arm.encoder), [(q.id, q.text) for q in queries])
        timings["embed_queries_s"] = time.perf_counter() - t0
    bodies = [(q.id, search_body(arm, q, sc, depth, vectors.vector(q.id) if vectors else None)) for q in queries]
    t0 = time.perf_counter()
    entries, latencies = run_queries(client, index, bodies, progress=progress)
    timings["search_s"] = time.perf_counter() - t0
    timings["queries"] = float(len(queries))
    timings["queries_per_s"] = len(queries) / timings["search_s"] if timings["search_s"] > 0 else 0.0

    config = _resolved_config(arm, sc, index, depth, len(queries), marker)
    if vectors is not None:
        config["query_vectors"] = vectors.provenance("queries")
    if reference is not None:
        from turnbench.engines.approximation import recall_against

        if reference.encoder != arm.encoder:
            raise BadInput(f"arm {arm.name} approximates {reference.name}, which uses another encoder")
        t0 = time.perf_counter()
        ref_entries, _ = run_queries(client, index, [(q.id, search_body(reference, q, sc, depth, vectors.vector(
            q.id) if vectors else None)) for q in queries])
        timings["reference_search_s"] = time.perf_counter() - t0
        config["approximation"] = {"of": reference.name, "reference_sha256": reference.file_sha256,
                                   **recall_against(entries, ref_entries)}

    by_id = {p.id: p for p in passages}
    run = normalise(entries, by_id)
    return RunResult(arm_config=config, run=run, latencies=latencies, timings=timings, passages=passages,
                     passages_sha256=sha, entries=tuple(entries))


def _keys(obj: Any) -> set[str]:
    """Every key anywhere in a JSON value."""
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


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
