"""The index's vector field, when an arm needs one (docs/design.md §11): definition, build recipe, plugin checks.

The field is a ``knn_vector`` of the encoder's dimension. Exact scoring (the ``knn_score`` script) reads only the
stored vectors, so for arms that score exactly the field is just that (``index.knn`` false, no graph): cheap to
build and the same bytes whatever order passages arrive in. Only an arm that declares ``[requires] vector_index =
"hnsw"`` (an approximate ``knn`` query) gets a graph: HNSW from the Lucene engine, pinned — faiss and nmslib need
native libraries that the embedded node does not have (faiss fails at the first flush and leaves a bulk request
hanging), so they are refused there — space ``cosinesimil``, ``m`` 16, ``ef_construction`` 100.

The graph depends on the order vectors arrive in and on how segments are merged. So that two loads build the same
graph, a graph load is sequential and fixed: passages in the order of the sha256 of their id (a fixed order unrelated to
meetings, which keeps the graph's early layers spread over the corpus), one bulk request at a time, a refresh
(one new segment) every 1,000 passages, background merges held off during the load (``segments_per_tier`` above
the number of segments), then a force-merge to one segment; the segment count before the merge is checked, and
recorded with the recipe. (A single flushed segment gave a poor graph on this corpus — many passages are the
same short backchannel, hence identical vectors — and parallel bulk gave a different graph each time.)

Vectors are computed outside the stack (turnbench.engines.embeddings) and handed in by ``VectorSpec.embed``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turnbench.errors import BadInput, StackStateError
from turnbench.stack import pins

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

ENGINES = ("lucene", "faiss", "nmslib")
SPACE = "cosinesimil"
REFRESH_EVERY = 1000
BULK_DOCS = 500
# classname a node reports for each component, and the name an OpenSearch distribution installs it under
PLUGIN_CLASSES = dict(zip(pins.VECTOR_PLUGINS, [c for a, c in pins.OPENSEARCH_PLUGINS
                                                if a in ("opensearch-knn", "neural-search")], strict=True))

# (passage id, text) pairs in; a function giving each passage's vector and the embeddings' provenance out
Embed = Callable[[Sequence[tuple[str, str]], Callable[[int, int], None] | None],
                 tuple[Callable[[str], list[float]], Mapping[str, Any]]]

MAX_GRAPH_ORDER = 1_000_000


@dataclass(frozen=True)
class VectorSpec:
    """What the index's vector field holds and how it is built."""

    field: str
    encoder: str
    dim: int
    embed: Embed
    graph: bool = True  # an HNSW graph for approximate search; False: stored vectors for exact scoring only
    engine: str = "lucene"
    m: int = 16
    ef_construction: int = 100
    # which of the reproducible graphs: vectors go in by sha256 of the passage id (0) or of str(n) and the id (n).
    # On transcripts full of identical backchannels a graph's recall hangs on its insertion order (QMSum: 0.32 to
    # 0.86 of exact search's top 10 at ef_search 100), so an approximate-search decision is worth asking of several.
    graph_order: int = 0

    def __post_init__(self) -> None:
        check_graph_order(self.graph_order)
        if self.engine not in ENGINES:
            raise BadInput(f"k-NN engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")

    def mapping(self) -> dict[str, Any]:
        if not self.graph:
            return {"type": "knn_vector", "dimension": self.dim}
        return {"type": "knn_vector", "dimension": self.dim,
                "method": {"name": "hnsw", "engine": self.engine, "space_type": SPACE,
                           "parameters": {"m": self.m, "ef_construction": self.ef_construction}}}

    def settings(self, n_docs: int) -> dict[str, Any]:
        """Index settings the field adds: k-NN on (with merges held off while the segments are written) for a
        graph, off (written out, so the record says so) for exact scoring."""
        if not self.graph:
            return {"knn": False}
        # no segment but the explicit refreshes': merges held off, and no flush forced by a full translog (a
        # 2,000-meeting corpus writes ~600 MB of it, past the 512 MB default, which cut two extra segments)
        return {"knn": True, "merge.policy.segments_per_tier": max(10, expected_segments(n_docs) + 10),
                "translog.flush_threshold_size": "16gb"}

    def config(self) -> dict[str, Any]:
        build = ({"order": order_rule(self.graph_order), "bulk": f"sequential, {BULK_DOCS} per request",
                  "refresh_every": REFRESH_EVERY, "then": "force-merge to 1 segment"} if self.graph
                 else {"graph": "none: exact scoring only", "then": "force-merge to 1 segment"})
        return {"field": self.field, "encoder": self.encoder, "graph": "hnsw" if self.graph else "none",
                "mapping": self.mapping(), "build": build}


def check_engine(spec: VectorSpec, provider: str) -> None:
    """Refuse a native engine by the provider alone, before the node is asked (``require_plugins`` asks it)."""
    if provider == "embedded" and spec.engine in pins.NATIVE_KNN_ENGINES:
        raise BadInput(f"the k-NN engine {spec.engine} needs native libraries the embedded node does not load; "
                       "use lucene (the default), or a docker or external stack")


def require_plugins(client: OpenSearch, engine: str = "lucene") -> None:
    """Refuse a node without the k-NN and neural-search plugins, naming the missing ones, and a native k-NN engine
    on a node that says it was built without the native libraries (the local image): creating a faiss index there
    takes the whole node down, not just the request."""
    nodes = client.nodes.info(metric="plugins")["nodes"]
    seen = {p.get(k) for n in nodes.values() for p in n.get("plugins", []) for k in ("name", "classname")}
    missing = [name for name, cls in PLUGIN_CLASSES.items() if name not in seen and cls not in seen]
    if missing:
        raise StackStateError(f"OpenSearch at this stack lacks the plugin(s) {', '.join(missing)} that vector and "
                              "hybrid arms need: install them (2.19.6.0) or use the embedded provider")
    bare = sorted(str(n.get("name", node_id)) for node_id, n in nodes.items()
                  if (n.get("attributes") or {}).get(pins.KNN_NATIVE_ATTRIBUTE) == "none")
    if engine in pins.NATIVE_KNN_ENGINES and bare:
        raise BadInput(f"the k-NN engine {engine} needs native libraries node {bare[0]} was built without "
                       f"(node.attr.{pins.KNN_NATIVE_ATTRIBUTE}: none); use lucene (the default), or an image "
                       "that ships them")


def check_graph_order(order: int) -> None:
    if isinstance(order, bool) or not isinstance(order, int) or not 0 <= order <= MAX_GRAPH_ORDER:
        raise BadInput(f"graph order must be a whole number from 0 to {MAX_GRAPH_ORDER}, not {order!r}")


def order_rule(order: int = 0) -> str:
    return "sha256 of the passage id" if order == 0 else f"sha256 of {str(order)!r} followed by the passage id"


def build_order(ids: Sequence[str], order: int = 0) -> list[str]:
    salt = str(order) if order else ""
    return sorted(ids, key=lambda i: hashlib.sha256((salt + i).encode("utf-8")).hexdigest())


def expected_segments(n_docs: int) -> int:
    return max(1, math.ceil(n_docs / REFRESH_EVERY))


def sequential_bulk(client: OpenSearch, index: str, actions: Sequence[dict[str, Any]],
                    progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
    """Index ``actions`` in their order, one request at a time, refreshing every REFRESH_EVERY documents;
    returns (documents acknowledged, segments before the force-merge)."""
    from opensearchpy import helpers

    ok = 0
    for lo in range(0, len(actions), REFRESH_EVERY):
        part = actions[lo:lo + REFRESH_EVERY]
        for success, _ in helpers.streaming_bulk(client, part, chunk_size=BULK_DOCS, max_chunk_bytes=50 << 20,
                                                 raise_on_error=True, raise_on_exception=True):
            ok += bool(success)
        client.indices.refresh(index=index)
        if progress is not None:
            progress(len(part), len(actions))
    stats = client.indices.stats(index=index, metric="segments")["indices"][index]["primaries"]
    return ok, int(stats["segments"]["count"])
