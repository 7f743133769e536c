"""Load a corpus into the stack: PostgreSQL rows, OpenSearch passages, settle, index provenance (DESIGN §9).

PostgreSQL — schema ``turnbench`` (only what a product would hold: never facts, gold, ``Meeting.meta``
or generator metadata)::

    turnbench.meetings (id text PRIMARY KEY, title text NOT NULL, recorded_date date NULL,
                        duration double precision NOT NULL, timing text NOT NULL)   -- seconds; 'synthetic'|'measured'
    turnbench.segments (meeting_id text NOT NULL REFERENCES turnbench.meetings (id),
                        turn_index integer NOT NULL, speaker text NOT NULL,
                        start_s double precision NOT NULL, end_s double precision NOT NULL, text text NOT NULL,
                        PRIMARY KEY (meeting_id, turn_index))

Read segments in the total order ``ORDER BY meeting_id, start_s, end_s, turn_index``. The schema's
comment is a JSON marker ``{"format": "turnbench-tables/1", "corpus_id": ..., "corpus_sha256": ...}``
naming the corpus loaded; the whole PostgreSQL load is one transaction, so a reader sees the previous
corpus or the new one, never half of one.

OpenSearch — one index (default ``turnbench-passages``), 1 shard, 0 replicas, an explicit strict mapping
(``content`` english analyzer with ``content.exact`` standard analyzer, ``title`` text + ``title.keyword``,
``speaker``/``meeting_id``/``passage_id``/``passage_kind`` keywords, ``start``/``end`` doubles,
``passage_index``/``words``/``turns`` integers, ``recorded_date`` date), an explicit BM25 similarity, and
index sorting on (passage kind, meeting id, passage index) so that score ties resolve in that order.
``content`` is an array of the passage's segment texts, so a phrase never matches across two segments.
The mapping's ``_meta.turnbench`` is the marker: corpus id and sha256, passages sha256, ``max_words``
and ``state`` (``loading`` until the index has settled, then ``settled``).

Isolation (DESIGN §3 rule 8): an index or schema of that name that carries no turnbench marker is
someone else's — loading refuses it (``ForeignIndex``, exit 3), empty or not, and never touches it. One
that carries the marker was made by turnbench; loading deletes and recreates it, whichever corpus it held
(one stack serves one corpus at a time). A run checks the marker names its corpus and ``settled``
before searching, so a run can never be scored against passages of another corpus.

Sequence: PostgreSQL (COPY) → create index → bulk → refresh → force-merge to one segment → refresh →
settle (docs per meeting equal the inventory's, on two consecutive reads) → provenance → marker
``settled``.

Provenance (``LoadResult.provenance``, equal across two loads of one corpus, fit for a claim file): docs
count, deleted docs, indexing total, segment count, shards/replicas, similarity, sha256 of the settings
(instance-stamped keys such as uuid and creation date removed) and of the mapping (marker removed),
OpenSearch, Lucene and PostgreSQL versions, passage/meeting/segment counts, passages sha256, ``max_words``.
The store size goes with the timings: Lucene's segment files embed OS and JVM version strings, so it may
differ by a few bytes between machines.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput, ForeignIndex, IndexNotSettled, StackStateError
from turnbench.runs import Passage
from turnbench.stack.passages import DEFAULT_MAX_WORDS, Chunk, chunk_meeting, inventory_sha256

DEFAULT_INDEX = "turnbench-passages"
SCHEMA = "turnbench"
INDEX_FORMAT = "turnbench-passages/1"
TABLES_FORMAT = "turnbench-tables/1"
MARKER = "turnbench"
INDEX_ORDER = ("passage_kind", "meeting_id", "passage_index")
SIMILARITY = {"type": "BM25", "k1": 1.2, "b": 0.75}  # Lucene's defaults, written out so they are recorded
BULK_CHUNK_DOCS = 500
# Two bulk requests in flight keep both of a small machine's cores busy. Safe for determinism: index sorting
# fixes the document order of the force-merged segment whatever order the documents arrived in.
BULK_THREADS = 2
SETTLE_TIMEOUT_S = 30.0
SETTLE_POLL_S = 0.05
# Settings OpenSearch stamps per index instance: they differ between two loads of the same corpus.
VOLATILE_SETTINGS = frozenset({
    "index.uuid", "index.creation_date", "index.version.created", "index.version.upgraded",
    "index.provided_name", "index.history.uuid",
})


@dataclass(frozen=True)
class LoadResult:
    index: str
    passages: tuple[Passage, ...]
    passages_sha256: str
    provenance: Mapping[str, Any]  # claim-safe: equal across two loads of the same corpus
    # seconds per step, plus host-dependent figures (store_size_bytes: Lucene's segment files carry the OS and
    # JVM version strings, so the size can differ by a few bytes between machines); outside any claim
    timings: Mapping[str, float]


# -- endpoints -----------------------------------------------------------------------------------

def opensearch_client(stack):
    """An opensearch-py client for the stack's HTTP endpoint (generous timeout: force-merge blocks)."""
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[stack.opensearch_url], timeout=300, max_retries=0, http_compress=False)


def postgres_connect(stack):
    import psycopg

    return psycopg.connect(stack.postgres_dsn)


@contextlib.contextmanager
def stack_errors(stack) -> Iterator[None]:
    """A server that stops answering mid-way becomes a one-line refusal, not a traceback."""
    import psycopg
    from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
    from opensearchpy.exceptions import TransportError

    try:
        yield
    except OpenSearchConnectionError as exc:
        raise StackStateError(f"OpenSearch at {stack.opensearch_url} does not answer: {exc}") from None
    except TransportError as exc:
        raise StackStateError(f"OpenSearch at {stack.opensearch_url} refused a request: {exc}") from None
    except psycopg.OperationalError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StackStateError(f"PostgreSQL does not answer: {first}") from None


def check_index_name(index: str) -> str:
    """OpenSearch's index-name rules, checked before anything is written."""
    bad = set('\\/*?"<>| ,#:')
    if (not isinstance(index, str) or not index or index != index.lower() or index in (".", "..")
            or index[0] in "-_+" or any(ch in bad for ch in index) or len(index.encode()) > 255):
        raise BadInput(f"{index!r} is not a valid OpenSearch index name (lowercase, no spaces or \\/*?\"<>|,#:, "
                       "not starting with - _ +)")
    return index


# -- index definition ----------------------------------------------------------------------------

def index_settings() -> dict[str, Any]:
    return {
        "index": {
            "number_of_shards": 1,
            "number_of_replicas": 0,
            "refresh_interval": "-1",  # refreshed explicitly after bulk; set back below
            "similarity": {"turnbench_bm25": dict(SIMILARITY)},
            # Documents are stored in (kind, meeting, index) order, so Lucene's tie-break (lower document
            # first) is the same order turnbench.runs.normalise applies, at no cost per query.
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


def corpus_marker(corpus: Corpus, **extra: Any) -> dict[str, Any]:
    return {"corpus_id": corpus.id, "corpus_sha256": corpus.sha256, **extra}


# -- ownership -----------------------------------------------------------------------------------

def index_marker(client, index: str) -> dict[str, Any] | None:
    """The index's turnbench marker; None when the index does not exist; ForeignIndex when it has none."""
    if not client.indices.exists(index=index):
        return None
    mapping = client.indices.get_mapping(index=index)
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    marker = meta.get(MARKER)
    if not isinstance(marker, dict) or marker.get("format") != INDEX_FORMAT:
        docs = client.count(index=index)["count"]
        raise ForeignIndex(
            f"OpenSearch index {index!r} exists ({docs} documents) and carries no turnbench marker: it was not "
            f"created by turnbench, so it is left untouched; load into another index or another stack"
        )
    return marker


def _schema_marker(cur) -> dict[str, Any] | None:
    cur.execute(
        "SELECT obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname = %s", (SCHEMA,)
    )
    row = cur.fetchone()
    if row is None:
        return None
    import json

    try:
        marker = json.loads(row[0] or "")
    except json.JSONDecodeError:
        marker = None
    if not isinstance(marker, dict) or marker.get("format") != TABLES_FORMAT:
        raise ForeignIndex(
            f"PostgreSQL schema {SCHEMA!r} exists and carries no turnbench marker: it was not created by "
            f"turnbench, so it is left untouched; use another database or stack"
        )
    return marker


# -- PostgreSQL ----------------------------------------------------------------------------------

def _load_postgres(stack, corpus: Corpus, max_words: int) -> tuple[list[tuple[Chunk, str, str | None]], dict]:
    """COPY meetings and segments in one transaction; chunk each meeting on the way (one read of the corpus)."""
    chunks: list[tuple[Chunk, str, str | None]] = []
    counts = {"meetings": 0, "segments": 0}
    chunk_s = 0.0
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        if _schema_marker(cur) is not None:
            cur.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
        cur.execute(f"CREATE SCHEMA {SCHEMA}")
        marker = canonical.dumps(corpus_marker(corpus, format=TABLES_FORMAT))
        cur.execute(f"COMMENT ON SCHEMA {SCHEMA} IS {_sql_literal(marker)}")
        # keys and the foreign key come after COPY: building them once is faster than checking per row
        cur.execute(
            f"CREATE TABLE {SCHEMA}.meetings (id text NOT NULL, title text NOT NULL, recorded_date date, "
            "duration double precision NOT NULL, timing text NOT NULL)"
        )
        cur.execute(
            f"CREATE TABLE {SCHEMA}.segments (meeting_id text NOT NULL, turn_index integer NOT NULL, "
            "speaker text NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL, "
            "text text NOT NULL)"
        )
        meeting_rows = []
        with cur.copy(
            f"COPY {SCHEMA}.segments (meeting_id, turn_index, speaker, start_s, end_s, text) FROM STDIN"
        ) as copy:
            for m in corpus.iter_meetings():
                meeting_rows.append((m.id, m.title, m.recorded_date, m.duration, m.timing))
                for t in m.turns:
                    copy.write_row((m.id, t.index, t.speaker, t.start, t.end, t.text))
                counts["segments"] += len(m.turns)
                t0 = time.perf_counter()
                for c in chunk_meeting(m.id, m.turns, max_words=max_words):
                    chunks.append((c, m.title, m.recorded_date))
                chunk_s += time.perf_counter() - t0
        with cur.copy(f"COPY {SCHEMA}.meetings (id, title, recorded_date, duration, timing) FROM STDIN") as copy:
            for row in meeting_rows:
                copy.write_row(row)
        counts["meetings"] = len(meeting_rows)
        cur.execute(f"ALTER TABLE {SCHEMA}.meetings ADD PRIMARY KEY (id)")
        cur.execute(f"ALTER TABLE {SCHEMA}.segments ADD PRIMARY KEY (meeting_id, turn_index)")
        cur.execute(
            f"ALTER TABLE {SCHEMA}.segments ADD FOREIGN KEY (meeting_id) REFERENCES {SCHEMA}.meetings (id)"
        )
        cur.execute(f"SELECT (SELECT count(*) FROM {SCHEMA}.meetings), (SELECT count(*) FROM {SCHEMA}.segments)")
        got = cur.fetchone()
        if got != (counts["meetings"], counts["segments"]):
            raise IndexNotSettled(
                f"PostgreSQL holds {got[0]} meetings and {got[1]} segments after COPY; the corpus has "
                f"{counts['meetings']} and {counts['segments']}"
            )
        cur.execute(f"ANALYZE {SCHEMA}.meetings")
        cur.execute(f"ANALYZE {SCHEMA}.segments")
    counts["chunk_s"] = chunk_s
    return chunks, counts


def _sql_literal(text: str) -> str:
    # COMMENT ON takes no bind parameters; the marker is our own canonical JSON, quoted the SQL way
    return "'" + text.replace("'", "''") + "'"


def postgres_version(stack) -> str:
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute("SHOW server_version")
        return cur.fetchone()[0]


# -- OpenSearch ----------------------------------------------------------------------------------

def _bulk_actions(index: str, chunks) -> Iterator[dict[str, Any]]:
    for chunk, title, recorded_date in chunks:
        yield {"_index": index, "_id": chunk.passage.id, "_source": passage_document(chunk, title, recorded_date)}


def _bulk(client, index: str, chunks) -> int:
    from opensearchpy import helpers
    from opensearchpy.helpers import BulkIndexError

    ok = 0
    try:
        for success, _info in helpers.parallel_bulk(client, _bulk_actions(index, chunks), thread_count=BULK_THREADS,
                                                    chunk_size=BULK_CHUNK_DOCS, max_chunk_bytes=50 * 1024 * 1024,
                                                    raise_on_error=True, raise_on_exception=True):
            ok += bool(success)
    except BulkIndexError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise IndexNotSettled(
            f"OpenSearch rejected {len(exc.errors)} passage(s) during bulk indexing; first: {canonical.dumps(first)}"
        ) from None
    return ok


def observed_counts(client, index: str) -> tuple[int, dict[str, int]]:
    """Documents in the index and documents per meeting id, read exactly (a paged composite aggregation)."""
    total = client.count(index=index)["count"]
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


def expected_counts(passages) -> tuple[int, dict[str, int]]:
    per_meeting: dict[str, int] = {}
    n = 0
    for p in passages:
        per_meeting[p.meeting] = per_meeting.get(p.meeting, 0) + 1
        n += 1
    return n, per_meeting


def describe_difference(expected: tuple[int, dict[str, int]], got: tuple[int, dict[str, int]]) -> str:
    (n_exp, m_exp), (n_got, m_got) = expected, got
    parts = [f"{n_got} passages in {len(m_got)} meetings where the inventory has {n_exp} in {len(m_exp)}"]
    wrong = sorted(k for k in set(m_exp) | set(m_got) if m_exp.get(k) != m_got.get(k))
    if wrong:
        shown = ", ".join(f"{k}: {m_got.get(k, 0)} not {m_exp.get(k, 0)}" for k in wrong[:5])
        parts.append(f"meetings differing: {shown}" + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""))
    return "; ".join(parts)


def settle(client, index: str, expected: tuple[int, dict[str, int]], *, timeout_s: float = SETTLE_TIMEOUT_S,
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
                f"index {index!r} did not settle within {timeout_s:g} s ({reads} reads): {describe_difference(expected, got)}"
            )
        time.sleep(poll_s)


def _strip_volatile_settings(flat: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(flat.items()) if k not in VOLATILE_SETTINGS}


def index_provenance(client, index: str) -> dict[str, Any]:
    """What a results file records about the index (DESIGN §3 rule 1); equal across two loads of one corpus."""
    info = client.info()
    stats = client.indices.stats(index=index, metric="docs,indexing,store,segments")["indices"][index]["primaries"]
    flat = next(iter(client.indices.get_settings(index=index, flat_settings=True).values()))["settings"]
    mappings = dict(next(iter(client.indices.get_mapping(index=index).values()))["mappings"])
    mappings.pop("_meta", None)  # the marker names the corpus; the hash describes the mapping alone
    settings = _strip_volatile_settings(flat)
    return {
        "index": index,
        "format": INDEX_FORMAT,
        "docs_count": stats["docs"]["count"],
        "docs_deleted": stats["docs"]["deleted"],
        "indexing_index_total": stats["indexing"]["index_total"],
        "segments_count": stats["segments"]["count"],
        "number_of_shards": int(settings["index.number_of_shards"]),
        "number_of_replicas": int(settings["index.number_of_replicas"]),
        "similarity": dict(SIMILARITY),
        "settings_sha256": canonical.sha256_bytes(canonical.dumps(settings).encode()),
        "mapping_sha256": canonical.sha256_bytes(canonical.dumps(mappings).encode()),
        "opensearch_version": info["version"]["number"],
        "lucene_version": info["version"]["lucene_version"],
        "opensearch_distribution": info["version"].get("distribution", "opensearch"),
    }


def store_size_bytes(client, index: str) -> int:
    return client.indices.stats(index=index, metric="store")["indices"][index]["primaries"]["store"]["size_in_bytes"]


def _put_marker(client, index: str, marker: Mapping[str, Any]) -> None:
    client.indices.put_mapping(index=index, body={"_meta": {MARKER: dict(marker)}})


# -- the load ------------------------------------------------------------------------------------

def load_corpus(stack, corpus: Corpus, *, max_words: int = DEFAULT_MAX_WORDS, index: str = DEFAULT_INDEX,
                settle_timeout_s: float = SETTLE_TIMEOUT_S) -> LoadResult:
    """Load ``corpus`` into the stack's PostgreSQL and OpenSearch and return the passages and provenance."""
    with stack_errors(stack):
        return _load_corpus(stack, corpus, max_words=max_words, index=index, settle_timeout_s=settle_timeout_s)


def _load_corpus(stack, corpus: Corpus, *, max_words: int, index: str, settle_timeout_s: float) -> LoadResult:
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    check_index_name(index)
    client = opensearch_client(stack)
    # Ownership is checked on both stores before either is written, so a refusal changes nothing.
    old_marker = index_marker(client, index)
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        _schema_marker(cur)
    chunk_meeting("validate", (), max_words=max_words)  # a bad max_words is refused before any write

    t0 = time.perf_counter()
    chunks, pg_counts = _load_postgres(stack, corpus, max_words)
    timings["postgres_s"] = time.perf_counter() - t0 - pg_counts["chunk_s"]
    timings["chunk_s"] = pg_counts["chunk_s"]
    passages = tuple(sorted((c.passage for c, _, _ in chunks), key=lambda p: (p.meeting, p.index)))
    passages_sha256 = inventory_sha256(passages)
    expected = expected_counts(passages)
    if len(expected[1]) != pg_counts["meetings"]:
        # a meeting with no segments yields no passage; the index could not show it, so refuse up front
        empty = pg_counts["meetings"] - len(expected[1])
        raise IndexNotSettled(f"{empty} meeting(s) have no segments and would be absent from the index")

    t0 = time.perf_counter()
    if old_marker is not None:
        client.indices.delete(index=index)
    marker = corpus_marker(corpus, format=INDEX_FORMAT, max_words=max_words, passages=len(passages),
                           meetings=pg_counts["meetings"], passages_sha256=passages_sha256, state="loading")
    mappings = index_mappings()
    mappings["_meta"] = {MARKER: marker}
    client.indices.create(index=index, body={"settings": index_settings(), "mappings": mappings})
    timings["create_index_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    indexed = _bulk(client, index, chunks)
    timings["bulk_s"] = time.perf_counter() - t0
    del chunks
    if indexed != len(passages):
        raise IndexNotSettled(f"bulk indexing acknowledged {indexed} of {len(passages)} passages")

    t0 = time.perf_counter()
    client.indices.refresh(index=index)
    client.indices.forcemerge(index=index, max_num_segments=1)
    client.indices.put_settings(index=index, body={"index": {"refresh_interval": "1s"}})
    client.indices.refresh(index=index)
    timings["force_merge_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    reads = settle(client, index, expected, timeout_s=settle_timeout_s)
    timings["settle_s"] = time.perf_counter() - t0
    timings["settle_reads"] = float(reads)

    t0 = time.perf_counter()
    prov = index_provenance(client, index)
    timings["store_size_bytes"] = float(store_size_bytes(client, index))
    if prov["segments_count"] != 1:
        raise IndexNotSettled(f"index {index!r} has {prov['segments_count']} segments after force-merge, not 1")
    prov.update({
        "passages": len(passages), "meetings": pg_counts["meetings"], "segments": pg_counts["segments"],
        "passages_sha256": passages_sha256, "max_words": max_words, "chunking": "speaker-turn-whole-segments/1",
        "postgres_version": postgres_version(stack), "postgres_schema": SCHEMA, "tables_format": TABLES_FORMAT,
    })
    _put_marker(client, index, {**marker, "state": "settled"})
    timings["provenance_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - t_all
    return LoadResult(index=index, passages=passages, passages_sha256=passages_sha256, provenance=prov,
                      timings=timings)


def loaded_marker(stack, corpus: Corpus, *, index: str = DEFAULT_INDEX, client=None) -> dict[str, Any]:
    """Refuse unless the index and the PostgreSQL schema hold ``corpus``, fully loaded; returns the index marker.

    What a run (or the answer engine) calls before reading the stack, so it can never read another
    corpus's passages or a half-finished load.
    """
    client = client or opensearch_client(stack)
    marker = index_marker(client, index)
    if marker is None:
        raise StackStateError(f"OpenSearch index {index!r} does not exist; run `turnbench load` first")
    if marker.get("corpus_sha256") != corpus.sha256:
        raise StackStateError(
            f"index {index!r} holds corpus {marker.get('corpus_id')!r} (sha256 {str(marker.get('corpus_sha256'))[:12]}…), "
            f"not {corpus.id!r} (sha256 {corpus.sha256[:12]}…); run `turnbench load --corpus` for it first"
        )
    if marker.get("state") != "settled":
        raise IndexNotSettled(f"index {index!r} was never settled (state {marker.get('state')!r}): a load did not finish")
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        tables = _schema_marker(cur)
    if tables is None or tables.get("corpus_sha256") != corpus.sha256:
        raise StackStateError(
            f"PostgreSQL schema {SCHEMA!r} does not hold corpus {corpus.id!r}; run `turnbench load --corpus` for it"
        )
    return marker
