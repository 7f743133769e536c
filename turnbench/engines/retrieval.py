"""The reference retrieval engine: arms on OpenSearch (DESIGN §1, §3 rule 7).

An arm is configuration — a name, a query builder picked by name from ``BUILDERS``, its parameters and
a depth. Adding an arm is one more ``Arm(...)`` row in ``_ARM_TABLE``; nothing else changes, and the
harness never sees more than the resolved configuration (``Arm.config``).

Scopes: ``corpus`` searches every passage (what a product does); ``gold-meetings`` filters each query to
its own gold meetings — an ORACLE: it knows the answer's meetings, so its figures are an upper bound on
ranking within meetings, never a product figure. The label travels in the resolved configuration.

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
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Query
from turnbench.errors import BadInput, SearchFailed, UnknownArm
from turnbench.runs import Passage, RankedPassage, Scope, get_scope, inventory_sha256, normalise
from turnbench.stack.info import StackInfo

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

DEFAULT_DEPTH = 100
MSEARCH_BATCH = 100
# Only what a run needs comes back: the passage id (from doc values), the score, and what proves completeness.
MSEARCH_FILTER = ",".join(f"responses.{k}" for k in ("hits.hits.fields", "hits.hits._score", "took", "timed_out",
                                                      "_shards", "error", "status"))


# -- query builders: name → function(query text, params) → OpenSearch query clause -----------------

def _match(text: str, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"match": {params["field"]: {"query": text, "operator": params["operator"]}}}


def _multi_match(text: str, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"multi_match": {"query": text, "fields": list(params["fields"]), "type": params["type"],
                            "operator": params["operator"]}}


BUILDERS: Mapping[str, Callable[[str, Mapping[str, Any]], dict[str, Any]]] = MappingProxyType({
    "match": _match,
    "multi_match": _multi_match,
})


@dataclass(frozen=True)
class Arm:
    name: str
    builder: str  # a key of BUILDERS
    params: Mapping[str, Any]
    depth: int = DEFAULT_DEPTH
    description: str = ""

    def query(self, text: str) -> dict[str, Any]:
        return BUILDERS[self.builder](text, self.params)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "builder": self.builder, "params": _plain(self.params), "depth": self.depth,
                "description": self.description}


_ARM_TABLE = (
    Arm("bm25", "match", MappingProxyType({"field": "content", "operator": "or"}),
        description="BM25 match on passage text (english analyzer)"),
    Arm("bm25-title", "multi_match",
        MappingProxyType({"fields": ("content", "title^2.0"), "type": "most_fields", "operator": "or"}),
        description="BM25 on passage text plus the meeting title, boosted 2x, scores summed"),
)
ARMS: Mapping[str, Arm] = MappingProxyType({a.name: a for a in _ARM_TABLE})


def get_arm(name: str) -> Arm:
    try:
        return ARMS[name]
    except KeyError:
        raise UnknownArm(f"no retrieval arm named {name!r}; known arms: {', '.join(sorted(ARMS))}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class RunResult:
    arm_config: dict[str, Any]  # the full resolved configuration: arm, scope (oracle label), index, order
    run: dict[str, list[RankedPassage]]  # normalised (DESIGN rule 5); a query with no hit is absent
    latencies: list[float]  # per query, seconds, as OpenSearch reports it ("took"), in query-id order
    timings: Mapping[str, float]
    passages: tuple[Passage, ...] = field(default=())  # the inventory the run is normalised against
    passages_sha256: str = ""
    entries: tuple[RankedPassage, ...] = field(default=())  # as OpenSearch returned them: its ranks, raw scores


def search_body(arm: Arm, query: Query, scope: Scope, depth: int) -> dict[str, Any]:
    clause = arm.query(query.text)
    if scope.oracle:
        clause = {"bool": {"must": [clause], "filter": [{"terms": {"meeting_id": sorted(query.gold_meetings)}}]}}
    # The passage id comes from doc values: reading _id would decompress a stored-fields block per hit,
    # which measured as most of the server's time per query.
    return {"query": clause, "size": depth, "track_total_hits": False, "_source": False, "stored_fields": "_none_",
            "docvalue_fields": ["passage_id"]}


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

    arm = get_arm(arm) if isinstance(arm, str) else arm
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
    timings["verify_s"] = time.perf_counter() - t0

    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    bodies = [(q.id, search_body(arm, q, sc, depth)) for q in queries]
    t0 = time.perf_counter()
    entries, latencies = run_queries(client, index, bodies, progress=progress)
    timings["search_s"] = time.perf_counter() - t0
    timings["queries"] = float(len(queries))
    timings["queries_per_s"] = len(queries) / timings["search_s"] if timings["search_s"] > 0 else 0.0

    by_id = {p.id: p for p in passages}
    run = normalise(entries, by_id)
    return RunResult(arm_config=_resolved_config(arm, sc, index, depth, len(queries), marker), run=run,
                     latencies=latencies, timings=timings, passages=passages, passages_sha256=sha,
                     entries=tuple(entries))


def run_tag(arm_config: Mapping[str, Any]) -> str:
    """The TREC run tag: the arm name, with the scope appended when it is the oracle."""
    name = arm_config["arm"]["name"]
    return name if not arm_config["scope"]["oracle"] else f"{name}@{arm_config['scope']['name']}"
