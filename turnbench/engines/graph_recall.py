"""How much of exact search an HNSW graph over a corpus keeps: recall@10 against exact cosine, per ef_search, per
build order (docs/agreement.md, "Why approximate search loses on real meetings").

An arm's `approximates` figure (engines/approximation.py) is measured on the one graph a bench builds. That is
not enough to say whether a corpus is like real meetings for approximate search: on QMSum and MeetingQA the same
vectors inserted in another order give graphs whose recall@10 at 100 candidates ranges from a third to nine
tenths, because thousands of identical backchannel vectors ("Yeah.") leave the graph badly connected whenever the
insertion order puts them high in it, and a graph that fragile moves with anything else about the build too. So
the probe builds graphs by the load's recipe (its mapping, 500 per bulk request, a refresh every 1,000,
force-merged to one segment) in ``orders`` insertion orders (order 0: sha256 of the passage id, the load's; order
n: sha256 of "n" and the id) and reports each: a sample of the graphs a load could have built. The bench's own
graph is one more draw (its documents carry more fields and its merges run otherwise, so even order 0 is not
guaranteed to be the same graph). Exact search is numpy over the same rounded vectors, a tie at the 10th counting
as found. Queries ask k = 10 with ``method_parameters.ef_search`` = ef, so ef sets the candidate count (at k ≥ ef,
Lucene searches k candidates).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from opensearchpy import OpenSearch

from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput
from turnbench.loading.chunking import chunk_meeting
from turnbench.loading.vectors import build_order, sequential_bulk
from turnbench.stack.clients import opensearch_client
from turnbench.stack.info import StackInfo

EFS = (16, 40, 100)
K = 10
ORDERS = 3
ENCODER = "minilm-l6-v2-int8"


@dataclass(frozen=True)
class OrderRecall:
    """One graph: the order its vectors went in, and recall@10 per ef_search."""

    order: int  # 0: sha256 of the passage id (the load's order); n: sha256 of "n" and the id
    recall: tuple[tuple[int, float], ...]  # (ef_search, mean recall@10 over queries)

    def at(self, ef: int) -> float:
        return dict(self.recall)[ef]


@dataclass(frozen=True)
class GraphRecall:
    """A corpus's graphs: what the load builds, and the spread over other insertion orders."""

    corpus_id: str
    passages: int
    queries: int
    distinct_share: float  # passages whose vector no other passage has, or the first of a group of identical ones
    largest_group: int  # passages sharing the commonest vector
    graphs: tuple[OrderRecall, ...]

    def to_json(self) -> dict[str, Any]:
        return {"corpus": self.corpus_id, "passages": self.passages, "queries": self.queries,
                "distinct_share": round(self.distinct_share, 4), "largest_group": self.largest_group,
                "graphs": [{"order": g.order, **{f"ef{ef}": round(r, 4) for ef, r in g.recall}}
                           for g in self.graphs]}


def check(efs: Sequence[int], orders: int) -> None:
    if not efs or any(isinstance(e, bool) or not isinstance(e, int) or not 1 <= e <= 10_000 for e in efs):
        raise BadInput(f"ef_search values must be whole numbers from 1 to 10000, not {list(efs)!r}")
    if isinstance(orders, bool) or not isinstance(orders, int) or not 1 <= orders <= 20:
        raise BadInput(f"build orders must be a whole number from 1 to 20, not {orders!r}")


def exact_found(passages: np.ndarray, queries: np.ndarray, k: int = K) -> list[set[int]]:
    """Per query, the rows exact cosine ranks in its top ``k`` plus every row scoring equal to the k-th."""
    p = passages / np.linalg.norm(passages, axis=1, keepdims=True)
    out = []
    for lo in range(0, len(queries), 256):
        q = queries[lo:lo + 256]
        s = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ p.T
        for row in s:
            kth = np.partition(row, -k)[-k] if len(row) > k else row.min()
            out.append(set(np.nonzero(row >= kth)[0].tolist()))
    return out


def recall_of(found: Sequence[Sequence[int]], exact: Sequence[set[int]], k: int = K) -> float:
    """Mean over queries of |approximate top k ∩ exact top k (ties at the k-th in)| / min(k, |corpus|)."""
    values = [min(len(set(f[:k]) & e), k) / min(k, len(e)) for f, e in zip(found, exact, strict=True)]
    return math.fsum(values) / len(values) if values else 0.0


def probe(stack: StackInfo, corpus: Corpus, *, max_words: int, efs: Sequence[int] = EFS, orders: int = ORDERS,
          say: Callable[[str], None] = lambda _: None) -> GraphRecall:
    """Build ``orders`` graphs of ``corpus``'s passages on ``stack`` in a scratch index (removed after) and measure
    each at every ef of ``efs``."""
    from turnbench.engines import encoders
    from turnbench.engines.embeddings import embed, vector_spec

    check(efs, orders)
    items = [(c.passage.id, c.text) for m in corpus.iter_meetings()
             for c in chunk_meeting(m.id, m.turns, max_words=max_words)]
    questions = [(q.id, q.text) for q in corpus.queries()]
    if not items or not questions:
        raise BadInput(f"{corpus.id}: an HNSW probe needs passages and questions; this corpus has "
                       f"{len(items)} passages and {len(questions)} questions")
    encoder = encoders.get(ENCODER)
    got = embed(encoder, items, role="passage")
    asked = embed(encoder, questions, role="query")
    vectors = np.asarray(got.micro, dtype=np.float64) / 1e6
    qvecs = np.asarray(asked.micro, dtype=np.float64) / 1e6
    exact = exact_found(vectors, qvecs)
    _, counts = np.unique(got.micro, axis=0, return_counts=True)
    spec = vector_spec(ENCODER, "v")
    client = opensearch_client(stack)
    index = f"turnbench-graph-probe-{secrets.token_hex(4)}"
    graphs = []
    try:
        for n in range(orders):
            say(f"  {corpus.id}: graph {n + 1} of {orders} ({len(items)} vectors)")
            _build(client, index, spec.mapping(), got.ids, vectors, n)
            graphs.append(OrderRecall(n,
                                      tuple((ef, recall_of(_search(client, index, qvecs, ef), exact)) for ef in efs)))
    finally:
        client.indices.delete(index=index, ignore_unavailable=True)
    return GraphRecall(corpus.id, len(items), len(questions), float(len(counts) / len(items)), int(counts.max()),
                       tuple(graphs))


def _build(client: OpenSearch, index: str, mapping: dict[str, Any], ids: Sequence[str], vectors: np.ndarray,
           graph_order: int) -> None:
    client.indices.delete(index=index, ignore_unavailable=True)
    client.indices.create(index=index, body={
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": -1,
                               "merge.policy.segments_per_tier": 10_000, "translog.flush_threshold_size": "16gb"}},
        "mappings": {"dynamic": "strict", "properties": {"v": mapping}}})
    row = {pid: i for i, pid in enumerate(ids)}
    # the load's own bulk and refresh rhythm, so the segments merged are the ones a load would merge
    sequential_bulk(client, index, [{"_index": index, "_id": str(row[pid]), "v": vectors[row[pid]].tolist()}
                                    for pid in build_order(ids, graph_order)])
    client.indices.forcemerge(index=index, max_num_segments=1, params={"request_timeout": 3600})
    client.indices.refresh(index=index)


def _search(client: OpenSearch, index: str, queries: np.ndarray, ef: int) -> list[list[int]]:
    out: list[list[int]] = []
    for lo in range(0, len(queries), 100):
        body: list[dict[str, Any]] = []
        for q in queries[lo:lo + 100]:
            body.append({"index": index})
            body.append({"size": K, "_source": False, "query": {"knn": {"v": {
                "vector": q.tolist(), "k": K, "method_parameters": {"ef_search": ef}}}}})
        for resp in client.msearch(body=body, request_timeout=3600)["responses"]:
            out.append([int(h["_id"]) for h in resp["hits"]["hits"]])
    return out
