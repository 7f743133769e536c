"""Will the stack hold this corpus? Disk and heap checked from the nodes' own figures before a load writes anything.

The figures are measured, not derived (``make perf-scale`` prints them): loading the 2,000-meeting corpus (6.1 M
words, 132,678 passages) into one shard peaked at 98 MB of store and 75 MB of translog, ~28 bytes a word, and the
force-merge to one segment writes a full copy of the index before it drops the old segments; PostgreSQL's tables
held 14 bytes a word. So the index is given 64 bytes a word of free disk on its data path, PostgreSQL 24 (and, on
the embedded stack, where both live under one private directory, the two together). Stored vectors cost their
float32 bytes twice over for the same reason. Passages are counted as turns (within 0.2% on every synthetic
corpus measured).

Heap: a lexical load is bounded by the bulk requests in flight, not by the corpus (the 2,000-meeting corpus
loads in a 512 MB heap, 20,000 in 1 GB), so it needs a fixed floor; an HNSW graph is built on the heap at the
force-merge, its neighbour lists ~0.5 KB a passage with the pinned ``m``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turnbench.errors import BadInput, StackStateError

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

INDEX_BYTES_PER_WORD = 64
POSTGRES_BYTES_PER_WORD = 24
POSTGRES_FIXED_BYTES = 32 << 20  # an empty database and the catalog
HEAP_FLOOR_BYTES = 256 << 20
GRAPH_HEAP_BYTES_PER_PASSAGE = 512


@dataclass(frozen=True)
class Need:
    """What a load of one corpus needs from the stack, in bytes."""

    words: int
    passages: int
    index_disk: int
    postgres_disk: int
    heap: int


def need(counts: Mapping[str, Any], *, vector_dim: int | None = None, graph: bool = False) -> Need | None:
    """The need of a corpus whose manifest ``counts`` are given (``words``, ``turns``); None when the manifest does
    not count them (the corpus format does not require it), and the load goes unchecked."""
    try:
        words, turns = int(counts["words"]), int(counts["turns"])
    except (KeyError, TypeError, ValueError):
        return None
    if words < 0 or turns < 0:
        raise BadInput(f"the corpus manifest counts {words} words and {turns} turns")
    vector_disk = 2 * turns * 4 * vector_dim if vector_dim else 0
    return Need(words=words, passages=turns,
                index_disk=words * INDEX_BYTES_PER_WORD + vector_disk,
                postgres_disk=words * POSTGRES_BYTES_PER_WORD + POSTGRES_FIXED_BYTES,
                heap=HEAP_FLOOR_BYTES + (turns * GRAPH_HEAP_BYTES_PER_PASSAGE if graph else 0))


def human(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def check(nodes: Mapping[str, Any], want: Need, *, shards: int, postgres_beside: bool) -> None:
    """Refuse, in one line, a load the data nodes cannot hold. ``nodes`` is ``GET _nodes/stats/fs,jvm``'s
    ``nodes``; the shards are spread evenly over the data nodes, so each needs its share (the whole index when
    there is one shard). ``postgres_beside``: PostgreSQL writes to the same filesystem as the node (embedded)."""
    data = {node_id: n for node_id, n in nodes.items() if "data" in n.get("roles", ["data"])}
    if not data:
        raise StackStateError("the OpenSearch cluster has no data node to load into")
    per_node = -(-want.index_disk // min(max(shards, 1), len(data)))
    if postgres_beside:
        per_node += want.postgres_disk
    for node_id, n in sorted(data.items(), key=lambda kv: str(kv[1].get("name", kv[0]))):
        name = n.get("name", node_id)
        free = (n.get("fs") or {}).get("total", {}).get("available_in_bytes")
        if free is not None and int(free) < per_node:
            raise StackStateError(
                f"OpenSearch node {name} has {human(int(free))} free on its data path; loading {want.words:,} words "
                f"({want.passages:,} passages) needs about {human(per_node)} there (index, translog and the "
                f"force-merge copy{', and PostgreSQL' if postgres_beside else ''}): free some space or use a larger "
                "disk")
        heap = (n.get("jvm") or {}).get("mem", {}).get("heap_max_in_bytes")
        if heap is not None and int(heap) < want.heap:
            raise StackStateError(
                f"OpenSearch node {name} has a {human(int(heap))} heap; this load needs at least {human(want.heap)}"
                f"{' (the HNSW graph is built on the heap)' if want.heap > HEAP_FLOOR_BYTES else ''}: start the "
                "stack with --heap (or TURNBENCH_OPENSEARCH_HEAP) set higher")


def check_stack(client: OpenSearch, want: Need, *, shards: int, postgres_beside: bool) -> None:
    check(client.nodes.stats(metric="fs,jvm")["nodes"], want, shards=shards, postgres_beside=postgres_beside)
