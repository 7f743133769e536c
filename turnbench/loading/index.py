"""The passage index: its definition, its ownership marker, exact counts, settling and provenance (docs/design.md §9).

One index (default ``turnbench-passages``), 1 shard, 0 replicas, an explicit strict mapping (``content``
english analyzer with ``content.exact`` standard analyzer, ``title`` text + ``title.keyword``,
``speaker``/``meeting_id``/``passage_id``/``passage_kind`` keywords, ``start``/``end`` doubles,
``passage_index``/``words``/``turns`` integers, ``recorded_date`` date), an explicit BM25 similarity, and
index sorting on (passage kind, meeting id, passage index) so that score ties resolve in that order.
``content`` is an array of the passage's segment texts, so a phrase never matches across two segments.

The mapping's ``_meta.turnbench`` is the marker: corpus id and sha256, passages sha256, ``max_words`` and
``state`` (``loading`` until the index has settled, then ``settled``). It says whose the index is and what a run
must find there; it proves nothing about the content (anyone can rewrite it): a reuse proves that from the state
directory's record (turnbench.loading.proof). An index of that name without the marker, or an alias or data
stream of that name, is someone else's (``ForeignIndex``, exit 3): never touched (docs/design.md §3 rule 8).

Settled means: the index holds exactly the expected passages per meeting on two consecutive reads.
Provenance (equal across two loads of one corpus, fit for a claim file): docs count, deleted docs, indexing
total, segment count, shards/replicas, similarity, sha256 of the settings (instance-stamped keys removed) and
of the mapping (marker removed), OpenSearch and Lucene versions. The store size is not in it: Lucene's
segment files embed OS and JVM version strings, so it may differ by a few bytes between machines.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.errors import BadInput, ForeignIndex, IndexChanged, IndexNotSettled
from turnbench.loading.chunking import Chunk
from turnbench.passages import Passage

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

DEFAULT_INDEX = "turnbench-passages"
INDEX_FORMAT = "turnbench-passages/1"
MARKER = "turnbench"
INDEX_ORDER = ("passage_kind", "meeting_id", "passage_index")
SIMILARITY = {"type": "BM25", "k1": 1.2, "b": 0.75}  # Lucene's defaults, written out so they are recorded
SETTLE_TIMEOUT_S = 30.0
MAX_SHARDS = 64
# Settings that describe the topology, not the index: runinfo.json records them, the claim does not, so one shard
# and several (searched shard-invariantly) write the same claim files.
TOPOLOGY_SETTINGS = frozenset({"index.number_of_shards", "index.number_of_replicas", "index.number_of_routing_shards"})
# What the claim says instead: why the shard count cannot move a score or an order (retrieval.search_plan).
SHARD_INVARIANCE = ("one shard, or dfs_query_then_fetch (corpus-wide term statistics) with the hit order as an "
                    "explicit sort")
SETTLE_POLL_S = 0.05
# Settings OpenSearch stamps per index instance: they differ between two loads of the same corpus.
VOLATILE_SETTINGS = frozenset({
    "index.uuid", "index.creation_date", "index.version.created", "index.version.upgraded",
    "index.provided_name", "index.history.uuid",
})

Counts = tuple[int, dict[str, int]]  # (passages, passages per meeting id)


def check_index_name(index: str) -> str:
    """OpenSearch's index-name rules, checked before anything is written."""
    bad = set('\\/*?"<>| ,#:')
    if (not isinstance(index, str) or not index or index != index.lower() or index in (".", "..")
            or index[0] in "-_+" or any(ch in bad for ch in index) or len(index.encode()) > 255):
        raise BadInput(f"{index!r} is not a valid OpenSearch index name (lowercase, no spaces or \\/*?\"<>|,#:, "
                       "not starting with - _ +)")
    return index


# -- definition ------------------------------------------------------------------------------------

def check_shards(shards: int) -> int:
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise BadInput(f"shards must be a whole number from 1 to {MAX_SHARDS}, not {shards!r}")
    return shards


def index_settings(shards: int = 1) -> dict[str, Any]:
    return {
        "index": {
            # no replicas: a search is answered by exactly one copy of each shard, so nothing depends on which
            "number_of_shards": check_shards(shards),
            "number_of_replicas": 0,
            "refresh_interval": "-1",  # refreshed explicitly after bulk; set back after the force-merge
            "similarity": {"turnbench_bm25": dict(SIMILARITY)},
            # Documents are stored in (kind, meeting, index) order, so Lucene's tie-break (lower document
            # first) is the same order turnbench.rankings.normalise applies, at no cost per query.
            "sort.field": list(INDEX_ORDER),
            "sort.order": ["asc"] * len(INDEX_ORDER),
        }
    }


def index_mappings() -> dict[str, Any]:
    text = {"type": "text", "similarity": "turnbench_bm25"}
    return {
        "dynamic": "strict",
        "properties": {
            "content": {**text, "analyzer": "english",
                        "fields": {"exact": {**text, "analyzer": "standard"}}},
            "title": {**text, "analyzer": "english", "fields": {"keyword": {"type": "keyword"}}},
            "speaker": {"type": "keyword"},
            "meeting_id": {"type": "keyword"},
            "passage_id": {"type": "keyword"},
            "passage_index": {"type": "integer"},
            "passage_kind": {"type": "keyword"},
            "start": {"type": "double"},
            "end": {"type": "double"},
            "words": {"type": "integer"},
            "turns": {"type": "integer"},
            "recorded_date": {"type": "date", "format": "strict_date"},
        },
    }


def passage_document(chunk: Chunk, title: str, recorded_date: str | None) -> dict[str, Any]:
    p = chunk.passage
    return {
        "content": list(chunk.texts), "title": title, "speaker": p.speaker, "meeting_id": p.meeting,
        "passage_id": p.id, "passage_index": p.index, "passage_kind": p.kind, "start": p.start, "end": p.end,
        "words": p.words, "turns": list(chunk.turns), "recorded_date": recorded_date,
    }


# -- ownership -------------------------------------------------------------------------------------

def index_marker(client: OpenSearch, index: str) -> dict[str, Any] | None:
    """The index's turnbench marker; None when the index does not exist; ForeignIndex when it has none."""
    if not client.indices.exists(index=index):
        return None
    mapping = client.indices.get_mapping(index=index)
    if list(mapping) != [index]:  # the name resolves to other indices: an alias or a data stream
        what = "a data stream" if _is_data_stream(client, index) else "an alias"
        raise ForeignIndex(
            f"{index!r} is {what} (of {', '.join(sorted(mapping)[:3])}{' and more' if len(mapping) > 3 else ''}), "
            "not an index turnbench created: it and what it points to are left untouched; load into another index")
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    marker = meta.get(MARKER)
    if not isinstance(marker, dict) or marker.get("format") != INDEX_FORMAT:
        docs = client.count(index=index)["count"]
        raise ForeignIndex(
            f"OpenSearch index {index!r} exists ({docs} documents) and carries no turnbench marker: it was not "
            f"created by turnbench, so it is left untouched; load into another index or another stack"
        )
    return marker


def _is_data_stream(client: OpenSearch, name: str) -> bool:
    try:
        return bool(client.indices.get_data_stream(name=name).get("data_streams"))
    except Exception:  # noqa: BLE001 - no such data stream (404), or a server without them: then it is an alias
        return False


def index_uuid(client: OpenSearch, index: str) -> str:
    """The uuid OpenSearch gave the index when it was created: no request can set it, so a deleted and recreated
    index of the same name is another."""
    flat = client.indices.get_settings(index=index, name="index.uuid", flat_settings=True)
    return str(next(iter(flat.values()))["settings"].get("index.uuid", ""))


def put_marker(client: OpenSearch, index: str, marker: Mapping[str, Any]) -> None:
    client.indices.put_mapping(index=index, body={"_meta": {MARKER: dict(marker)}})


# -- counts and settling ---------------------------------------------------------------------------

def observed_counts(client: OpenSearch, index: str) -> Counts:
    """Documents in the index and documents per meeting id, read exactly (a paged composite aggregation)."""
    total = int(client.count(index=index)["count"])
    per_meeting: dict[str, int] = {}
    after = None
    while True:
        comp: dict[str, Any] = {"size": 1000, "sources": [{"m": {"terms": {"field": "meeting_id"}}}]}
        if after is not None:
            comp["after"] = after
        resp = client.search(index=index, body={"size": 0, "track_total_hits": False,
                                                "aggs": {"meetings": {"composite": comp}}})
        agg = resp["aggregations"]["meetings"]
        for b in agg["buckets"]:
            per_meeting[b["key"]["m"]] = b["doc_count"]
        after = agg.get("after_key")
        if not agg["buckets"] or after is None:
            break
    return total, per_meeting


def expected_counts(passages: Iterable[Passage]) -> Counts:
    return meeting_counts(map(attrgetter("meeting"), passages))


def meeting_counts(meetings: Iterable[str]) -> Counts:
    """How many passages in all and per meeting, from each passage's meeting."""
    per_meeting = dict(Counter(meetings))
    return sum(per_meeting.values()), per_meeting


def describe_difference(expected: Counts, got: Counts) -> str:
    (n_exp, m_exp), (n_got, m_got) = expected, got
    parts = [f"{n_got} passages in {len(m_got)} meetings where the inventory has {n_exp} in {len(m_exp)}"]
    wrong = sorted(k for k in set(m_exp) | set(m_got) if m_exp.get(k) != m_got.get(k))
    if wrong:
        shown = ", ".join(f"{k}: {m_got.get(k, 0)} not {m_exp.get(k, 0)}" for k in wrong[:5])
        parts.append(f"meetings differing: {shown}" + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""))
    return "; ".join(parts)


def settle(client: OpenSearch, index: str, expected: Counts, *, timeout_s: float = SETTLE_TIMEOUT_S,
           poll_s: float = SETTLE_POLL_S) -> int:
    """Wait until two consecutive reads both show exactly the expected passages per meeting; returns reads taken.

    Raises IndexNotSettled, naming what was seen, when that does not happen within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    consecutive = reads = 0
    while True:
        got = observed_counts(client, index)
        reads += 1
        consecutive = consecutive + 1 if got == expected else 0
        if consecutive >= 2:
            return reads
        if time.monotonic() >= deadline:
            raise IndexNotSettled(
                f"index {index!r} did not settle within {timeout_s:g} s ({reads} reads): "
                f"{describe_difference(expected, got)}"
            )
        time.sleep(poll_s)


# -- provenance ------------------------------------------------------------------------------------

def strip_volatile_settings(flat: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(flat.items()) if k not in VOLATILE_SETTINGS}


def index_provenance(client: OpenSearch, index: str) -> dict[str, Any]:
    """What a results file records about the index (docs/design.md §3 rule 1); equal across two loads of one corpus, and
    across topologies: shard and replica counts and segments go to :func:`index_topology` (runinfo.json)."""
    info = client.info()
    stats = client.indices.stats(index=index, metric="docs,indexing,store,segments")["indices"][index]["primaries"]
    flat = next(iter(client.indices.get_settings(index=index, flat_settings=True).values()))["settings"]
    mappings = dict(next(iter(client.indices.get_mapping(index=index).values()))["mappings"])
    mappings.pop("_meta", None)  # the marker names the corpus; the hash describes the mapping alone
    settings = {k: v for k, v in strip_volatile_settings(flat).items() if k not in TOPOLOGY_SETTINGS}
    return {
        "index": index,
        "format": INDEX_FORMAT,
        "docs_count": stats["docs"]["count"],
        "docs_deleted": stats["docs"]["deleted"],
        "indexing_index_total": stats["indexing"]["index_total"],
        "segments_per_shard": 1,  # load force-merges every shard to one segment and checks it (index_topology)
        "search": SHARD_INVARIANCE,
        "similarity": dict(SIMILARITY),
        "settings_sha256": canonical.sha256_bytes(canonical.dumps(settings).encode()),
        "mapping_sha256": canonical.sha256_bytes(canonical.dumps(mappings).encode()),
        "opensearch_version": info["version"]["number"],
        "lucene_version": info["version"]["lucene_version"],
        "opensearch_distribution": info["version"].get("distribution", "opensearch"),
    }


# what index_provenance records of the index's documents, and how many were deleted: what a write changes
TOTALS = ("docs_count", "docs_deleted", "indexing_index_total", "indexing_delete_total")


def index_totals(client: OpenSearch, index: str) -> dict[str, int]:
    """The index's document counts and indexing totals as the server reports them now (``TOTALS``): any document
    indexed or deleted moves an indexing total at once, refreshed or not."""
    stats = client.indices.stats(index=index, metric="docs,indexing")["indices"][index]["primaries"]
    return {"docs_count": int(stats["docs"]["count"]), "docs_deleted": int(stats["docs"]["deleted"]),
            "indexing_index_total": int(stats["indexing"]["index_total"]),
            "indexing_delete_total": int(stats["indexing"]["delete_total"])}


def check_unchanged(client: OpenSearch, index: str, recorded: Mapping[str, Any], *, when: str) -> dict[str, int]:
    """The index's totals now (``index_totals``), refused (IndexChanged) when one the claim records
    (``recorded``: the load's provenance, or the totals read before) is not what the server reports: another client
    indexed or deleted documents ``when``."""
    now = index_totals(client, index)
    moved = [f"{k} {recorded[k]} -> {now[k]}" for k in TOTALS if k in recorded and recorded[k] != now[k]]
    if moved:
        raise IndexChanged(f"index {index!r} was written to {when}: {', '.join(moved)}; its claim would record "
                           "counts the run did not search (another client indexed or deleted documents); run again "
                           "on an index nobody writes")
    return now


def index_topology(client: OpenSearch, index: str) -> dict[str, Any]:
    """Where the index lives: nodes, shards, replicas and segments per shard — runinfo.json's, never the claim's."""
    flat = next(iter(client.indices.get_settings(index=index, flat_settings=True).values()))["settings"]
    shards = client.cat.shards(index=index, format="json", h="shard,prirep,segments.count")
    nodes = client.cat.nodes(format="json", h="name")
    segments = {int(s["shard"]): int(s.get("segments.count") or 0) for s in shards if s.get("prirep") == "p"}
    return {
        "nodes": len(nodes),
        "shards": int(flat["index.number_of_shards"]),
        "replicas": int(flat["index.number_of_replicas"]),
        "segments_per_shard": [segments[k] for k in sorted(segments)],
    }


def store_size_bytes(client: OpenSearch, index: str) -> int:
    stats = client.indices.stats(index=index, metric="store")
    return int(stats["indices"][index]["primaries"]["store"]["size_in_bytes"])
