"""Load a corpus into the stack: PostgreSQL tables, OpenSearch passages, settle, provenance (docs/design.md §9).

Sequence: check ownership of both stores (a refusal changes nothing) → PostgreSQL (COPY, cutting passages
from the same single read of the corpus) → create index → bulk → refresh → force-merge to one segment →
refresh → settle → provenance → marker ``settled``. Loading deletes and recreates an index or schema that
carries turnbench's marker, whichever corpus it held (one stack serves one corpus at a time); a run checks
the markers name its corpus and ``settled`` before searching (``settled.loaded_marker``), so a run can never be
scored against passages of another corpus.

``LoadResult.provenance`` is equal across two loads of one corpus and fit for a claim file: the index
provenance (:mod:`turnbench.loading.index`) plus passage/meeting/segment counts, passages sha256, ``max_words``
and the PostgreSQL version.

``turnbench.loading.reuse.load_or_reuse`` (what ``bench`` and ``load`` do unless ``--reload``) keeps a settled load
of exactly this corpus, cut and index definition instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput, IndexNotSettled
from turnbench.loading import capacity, proof, tables
from turnbench.loading import index as search_index
from turnbench.loading.chunking import Chunk, check_cut, chunk_meeting
from turnbench.loading.spec import LoadSpec
from turnbench.loading.vectors import VectorSpec
from turnbench.passages import Passage
from turnbench.stack.clients import opensearch_client, stack_errors
from turnbench.stack.info import StackInfo

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

T = TypeVar("T")

BULK_CHUNK_DOCS = 500
# Two bulk requests in flight keep both of a small machine's cores busy. Safe for determinism: index sorting
# fixes the document order of the force-merged segment whatever order the documents arrived in.
BULK_THREADS = 2
CHUNKING = "speaker-turn-whole-segments/1"


@dataclass(frozen=True)
class LoadResult:
    index: str
    passages: tuple[Passage, ...]
    passages_sha256: str
    provenance: Mapping[str, Any]  # claim-safe: equal across two loads of the same corpus
    # seconds per step, plus host-dependent figures (store_size_bytes: Lucene's segment files carry the OS and
    # JVM version strings, so the size can differ by a few bytes between machines); outside any claim
    timings: Mapping[str, float]
    topology: Mapping[str, Any] = field(default_factory=dict)  # nodes, shards, segments: runinfo.json's
    reused: bool = False  # a settled load of exactly this was found and kept (settled_load), nothing written
    not_reused: str = ""  # with reuse asked for and a load done: why the stack's load could not be kept

    def reuse_line(self, corpus_id: str) -> str:
        return (f"load: reusing the settled index {self.index!r} of {corpus_id} ({self.provenance['passages']} "
                f"passages, sha256 {self.passages_sha256[:12]}…): its documents and tables read back as the state "
                f"directory's record of its load says; "
                f"checked in {self.timings['total_s']:.2f} s (--reload loads again)")

    def summary(self, corpus_id: str) -> list[str]:
        """What ``turnbench load`` prints: counts, versions, the inventory's hash and the time per step."""
        p, t = self.provenance, self.timings
        if self.reused:
            return [self.reuse_line(corpus_id), f"passages sha256 {self.passages_sha256}"]
        # why the stack's load was not kept, in the words bench uses
        return ([f"load: loaded {corpus_id} into {self.index!r} ({self.not_reused})"] if self.not_reused else []) + [
            f"loaded {corpus_id}: {p['meetings']} meetings, {p['segments']} segments, {p['passages']} passages "
            f"(max {p['max_words']} words) into {self.index!r}; settled in {int(t['settle_reads'])} reads",
            f"OpenSearch {p['opensearch_version']} (Lucene {p['lucene_version']}), PostgreSQL "
            f"{p['postgres_major']}; passages sha256 {self.passages_sha256}",
            f"time {t['total_s']:.2f} s: postgres {t['postgres_s']:.2f}, chunk {t['chunk_s']:.2f}, "
            f"bulk {t['bulk_s']:.2f}, force-merge {t['force_merge_s']:.2f}, settle {t['settle_s']:.2f}",
        ] + ([] if "vectors" not in p else [
            f"vectors: {p['vectors']['field']!r} by {p['vectors']['encoder']} ({p['vectors']['graph']} graph), "
            f"embedded in {t.get('embed_s', 0.0):.2f} s; passage embeddings digest "
            f"{p['vectors']['embeddings']['digest']['sha256']}"])


def corpus_marker(corpus: Corpus, **extra: Any) -> dict[str, Any]:
    return {"corpus_id": corpus.id, "corpus_sha256": corpus.sha256, **extra}


def _bulk_actions(index: str, chunks: Iterable[tuple[Chunk, str, str | None]],
                  vector: tuple[str, Callable[[str], list[float]]] | None = None,
                  sent: proof.PassageDigests | None = None) -> Iterator[dict[str, Any]]:
    """One bulk action per passage; ``sent`` collects each document's digest (turnbench.loading.proof), what the
    load's record says the index holds."""
    for chunk, title, recorded_date in chunks:
        source = search_index.passage_document(chunk, title, recorded_date)
        if vector is not None:
            source[vector[0]] = vector[1](chunk.passage.id)
        if sent is not None:
            sent[chunk.passage.id] = (chunk.passage.meeting, proof.document_digest(
                chunk.passage.id, source, vector[0] if vector is not None else None))
        yield {"_index": index, "_id": chunk.passage.id, "_source": source}


def _bulk(client: OpenSearch, index: str, chunks: Iterable[tuple[Chunk, str, str | None]],
          progress: Callable[[int, int], None] | None = None,
          vector: tuple[str, Callable[[str], list[float]]] | None = None,
          sent: proof.PassageDigests | None = None) -> int:
    from opensearchpy import helpers
    from opensearchpy.helpers import BulkIndexError

    ok = 0
    try:
        actions = _bulk_actions(index, chunks, vector, sent)
        for success, _info in helpers.parallel_bulk(client, actions, thread_count=BULK_THREADS,
                                                    chunk_size=BULK_CHUNK_DOCS, max_chunk_bytes=50 * 1024 * 1024,
                                                    raise_on_error=True, raise_on_exception=True):
            ok += bool(success)
            if progress is not None and ok % BULK_CHUNK_DOCS == 0:
                progress(BULK_CHUNK_DOCS, ok)  # once per bulk chunk: a chunk's items arrive together
        if progress is not None and ok % BULK_CHUNK_DOCS:
            progress(ok % BULK_CHUNK_DOCS, ok)
    except BulkIndexError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise IndexNotSettled(
            f"OpenSearch rejected {len(exc.errors)} passage(s) during bulk indexing; first: {canonical.dumps(first)}"
        ) from None
    return ok


def load_corpus(stack: StackInfo, corpus: Corpus, spec: LoadSpec = LoadSpec(), *,
                settle_timeout_s: float = search_index.SETTLE_TIMEOUT_S,
                progress: Callable[[int, int], None] | None = None,
                embed_progress: Callable[[int, int], None] | None = None) -> LoadResult:
    """Load ``corpus`` into the stack's PostgreSQL and OpenSearch, cut and indexed as ``spec`` says (its ``shards``
    primary shards, no replicas), and return the passages and provenance. ``progress(done, total)`` is called with
    each bulk chunk's passage count and the number of passages loaded so far (without vectors the total is not known
    until the corpus has been read once). ``spec.vectors``: the index also gets a vector field, each passage embedded
    (``embed_progress``) and indexed by the fixed recipe of turnbench.loading.vectors. ``spec.overlap``: words
    neighbouring passages of one speaker's run share (turnbench.loading.chunking; 0, the default, shares none).
    Always a load: turnbench.loading.reuse.load_or_reuse keeps a settled load of exactly this instead."""
    with stack_errors(stack):
        return _load_corpus(stack, corpus, spec, settle_timeout_s=settle_timeout_s, progress=progress,
                            embed_progress=embed_progress)


def _load_corpus(stack: StackInfo, corpus: Corpus, spec: LoadSpec, *, settle_timeout_s: float,
                 progress: Callable[[int, int], None] | None,
                 embed_progress: Callable[[int, int], None] | None) -> LoadResult:
    index, vectors = spec.index, spec.vectors
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    client = opensearch_client(stack)
    old_marker = _refuse_before_writing(stack, client, corpus, spec)
    proof.forget(index)  # from the first write on, nothing vouches for the index until the record is written again
    written = _write(stack, client, corpus, spec, old_marker=old_marker, progress=progress,
                     embed_progress=embed_progress, timings=timings)
    passages = written.passages
    expected = search_index.expected_counts(passages)
    if len(expected[1]) != written.counts.meetings or written.meetings_cut != written.counts.meetings:
        # a meeting with no segments yields no passage; the index could not show it
        empty = written.counts.meetings - len(expected[1])
        raise IndexNotSettled(f"{empty} meeting(s) have no segments and would be absent from the index")
    # the inventory kept for runs as it is hashed (one encoding): trusted only once the marker says settled with it
    passages_sha256 = proof.keep_inventory(index, passages)
    _merge_and_settle(stack, client, index, passages, expected, graph=bool(vectors is not None and vectors.graph),
                      settle_timeout_s=settle_timeout_s, timings=timings,
                      pg_marker=_pg_loaded(index, written.marker, passages_sha256, len(passages)))

    t0 = time.perf_counter()
    prov = search_index.index_provenance(client, index)
    topology = search_index.index_topology(client, index)
    timings["store_size_bytes"] = float(search_index.store_size_bytes(client, index))
    if any(n != 1 for n in topology["segments_per_shard"]):
        raise IndexNotSettled(f"index {index!r} has {topology['segments_per_shard']} segments per shard after "
                              "force-merge, not 1")
    _add_provenance(prov, stack, passages=len(passages), meetings=written.counts.meetings,
                    segments=written.counts.segments, passages_sha256=passages_sha256, max_words=spec.max_words,
                    overlap=spec.overlap)
    if vectors is not None and written.vector_prov is not None:
        prov["vectors"] = {**vectors.config(), "segments_before_merge": written.segments_before,
                           "embeddings": dict(written.vector_prov)}
    marker = {**written.marker, "passages": len(passages), "meetings": written.counts.meetings,
              "segments": written.counts.segments, "passages_sha256": passages_sha256, "state": "settled"}
    search_index.put_marker(client, index, marker)
    timings["provenance_s"] = time.perf_counter() - t0
    # what a later reuse must read back from both stores, kept where only turnbench writes (turnbench.loading.proof)
    t0 = time.perf_counter()
    proof.write_record(index, {"index_uuid": search_index.index_uuid(client, index), "marker": marker,
                               "provenance": prov, "documents": proof.combine(written.sent),
                               "tables": tables.digest(stack)})
    timings["record_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - t_all
    return LoadResult(index=index, passages=tuple(passages), passages_sha256=passages_sha256, provenance=prov,
                      timings=timings, topology=topology)


def _add_provenance(prov: dict[str, Any], stack: StackInfo, *, passages: int, meetings: int, segments: int,
                    passages_sha256: str, max_words: int, overlap: int) -> None:
    prov.update({
        "passages": passages, "meetings": meetings, "segments": segments,
        "passages_sha256": passages_sha256, "max_words": max_words, "chunking": CHUNKING,
        # only when asked for: every index cut without overlap keeps the provenance it always had
        **({"overlap": overlap} if overlap else {}),
        # the major only: the pin; the full string (a distribution's point release) goes to runinfo.json
        "postgres_major": stack.postgres_major, "postgres_schema": tables.SCHEMA,
        "tables_format": tables.TABLES_FORMAT,
    })


def _refuse_before_writing(stack: StackInfo, client: OpenSearch, corpus: Corpus,
                           spec: LoadSpec) -> Mapping[str, Any] | None:
    """Everything that can refuse the load, checked before either store is written, so a refusal changes nothing;
    returns the index's marker when turnbench made the index there before (it is replaced)."""
    from turnbench.loading import vectors as vector_index

    index, shards, vectors = spec.index, spec.shards, spec.vectors
    search_index.check_index_name(index)
    search_index.check_shards(shards)
    if vectors is not None:
        vector_index.check_engine(vectors, stack.provider)
        vector_index.require_plugins(client, vectors.engine)
        if vectors.graph and shards > 1:
            raise BadInput("an HNSW graph is built reproducibly on one shard only; load it with --shards 1")
    want = capacity.need(corpus.manifest.get("counts") or {}, vector_dim=vectors.dim if vectors else None,
                         graph=bool(vectors and vectors.graph))
    if want is not None:
        capacity.check_stack(client, want, shards=shards, postgres_beside=stack.provider == "embedded")
    old_marker = search_index.index_marker(client, index)
    tables.loaded_tables_marker(stack)
    check_cut(spec.max_words, spec.overlap)  # a bad size or overlap is refused before any write
    return old_marker


@dataclass
class _Written:
    """What writing both stores left: the inventory (sorted), PostgreSQL's counts, the index marker."""

    passages: list[Passage]
    counts: tables.TableCounts
    meetings_cut: int
    marker: dict[str, Any]
    vector_prov: Mapping[str, Any] | None = None
    segments_before: int = 0
    sent: proof.PassageDigests = field(default_factory=dict)  # each document's digest, as bulk sent it


def _write(stack: StackInfo, client: OpenSearch, corpus: Corpus, spec: LoadSpec, *,
           old_marker: Mapping[str, Any] | None,
           progress: Callable[[int, int], None] | None, embed_progress: Callable[[int, int], None] | None,
           timings: dict[str, float]) -> _Written:
    """PostgreSQL's COPY in a thread while the passages are cut meeting by meeting straight into bulk requests, only
    their records kept (the inventory): the corpus is read twice at once, neither time held. Vectors are the
    exception: every passage is embedded (and a graph's build order fixed) before the first one is indexed."""
    from concurrent.futures import ThreadPoolExecutor

    index, vectors = spec.index, spec.vectors
    passages: list[Passage] = []
    sent: proof.PassageDigests = {}
    meetings_cut = 0
    chunk_s = 0.0

    def cut() -> Iterator[tuple[Chunk, str, str | None]]:
        nonlocal meetings_cut, chunk_s
        for m in corpus.iter_meetings():
            t = time.perf_counter()
            chunks = chunk_meeting(m.id, m.turns, max_words=spec.max_words, overlap=spec.overlap)
            chunk_s += time.perf_counter() - t
            meetings_cut += 1
            for c in chunks:
                passages.append(c.passage)
                yield c, m.title, m.recorded_date

    t0 = time.perf_counter()
    with ThreadPoolExecutor(1, thread_name_prefix="turnbench-copy") as pool:
        copied = pool.submit(_timed, tables.copy_corpus, stack, corpus.iter_meetings(), corpus_marker(corpus))
        try:
            held = list(cut()) if vectors is not None else None
            vector_of, vector_prov = None, None
            if vectors is not None and held is not None:
                t1 = time.perf_counter()
                vector_of, vector_prov = vectors.embed([(c.passage.id, c.text) for c, _, _ in held], embed_progress)
                timings["embed_s"] = time.perf_counter() - t1
            t1 = time.perf_counter()
            marker = _create_index(client, corpus, spec, vector_prov=vector_prov, n_passages=len(passages),
                                   replace=old_marker is not None)
            timings["create_index_s"] = time.perf_counter() - t1
            segments_before = 0
            if vectors is not None and held is not None and vector_of is not None and vectors.graph:
                indexed, segments_before = _index_graph(client, index, held, vectors, vector_of, progress, sent)
            else:
                indexed = _bulk(client, index, held if held is not None else cut(), progress,
                                None if vectors is None or vector_of is None else (vectors.field, vector_of), sent)
            held = None
        finally:
            counts, timings["postgres_s"] = copied.result()  # waited for whatever happened, so no thread outlives us
    timings["bulk_s"] = time.perf_counter() - t0 - timings.get("embed_s", 0.0) - timings["create_index_s"]
    timings["chunk_s"] = chunk_s
    passages.sort(key=attrgetter("meeting", "index"))
    if indexed != len(passages):
        raise IndexNotSettled(f"bulk indexing acknowledged {indexed} of {len(passages)} passages")
    return _Written(passages, counts, meetings_cut, marker, vector_prov, segments_before, sent)


def _create_index(client: OpenSearch, corpus: Corpus, spec: LoadSpec, *, vector_prov: Mapping[str, Any] | None,
                  n_passages: int, replace: bool) -> dict[str, Any]:
    """The index, created empty with its settings, mappings and a marker saying it is loading; returns the marker."""
    index, shards, overlap, vectors = spec.index, spec.shards, spec.overlap, spec.vectors
    if replace:
        client.indices.delete(index=index)
    marker = corpus_marker(corpus, format=search_index.INDEX_FORMAT, max_words=spec.max_words, shards=shards,
                           state="loading", **({"overlap": overlap} if overlap else {}))
    settings, mappings = _definition(shards, vectors if vector_prov is not None else None, n_passages)
    marker.update(_shaping(settings, mappings, overlap=overlap))
    if vectors is not None and vector_prov is not None:
        marker["vectors"] = {"field": vectors.field, "encoder": vectors.encoder, "graph": vectors.graph,
                             "digest": vector_prov["digest"]["sha256"], "config": vectors.config()}
    mappings["_meta"] = {search_index.MARKER: marker}
    client.indices.create(index=index, body={"settings": settings, "mappings": mappings},
                          params={"wait_for_active_shards": "all"})
    return marker


def _definition(shards: int, vectors: VectorSpec | None, n_passages: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings and mappings a load creates the index with (before the marker is added)."""
    settings, mappings = search_index.index_settings(shards), search_index.index_mappings()
    if vectors is not None:
        settings["index"].update(vectors.settings(n_passages))
        mappings["properties"][vectors.field] = vectors.mapping()
    return settings, mappings


def _shaping(settings: Mapping[str, Any], mappings: Mapping[str, Any], *, overlap: int) -> dict[str, Any]:
    """What the marker records besides the corpus and the cut so that a reuse can tell it would build the same:
    the overlap written out, the chunking and tables formats, and the sha256 of the index definition."""
    return {"cut_overlap": overlap, "chunking": CHUNKING, "tables_format": tables.TABLES_FORMAT,
            "definition_sha256": canonical.sha256_bytes(canonical.dumps({"settings": settings,
                                                                         "mappings": mappings}).encode())}


def _index_graph(client: OpenSearch, index: str, held: Sequence[tuple[Chunk, str, str | None]], vectors: VectorSpec,
                 vector_of: Callable[[str], list[float]], progress: Callable[[int, int], None] | None,
                 sent: proof.PassageDigests) -> tuple[int, int]:
    """The passages with their vectors in the fixed build order of a reproducible HNSW graph, one refresh per
    segment; returns (indexed, segments before the force-merge)."""
    from turnbench.loading import vectors as vector_index

    docs = {c.passage.id: (c, title, date) for c, title, date in held}
    actions = [a for pid in vector_index.build_order(list(docs), vectors.graph_order)
               for a in _bulk_actions(index, [docs[pid]], (vectors.field, vector_of), sent)]
    indexed, segments_before = vector_index.sequential_bulk(client, index, actions, progress)
    if segments_before != vector_index.expected_segments(len(actions)):
        raise IndexNotSettled(
            f"index {index!r} held {segments_before} segments before the force-merge, not "
            f"{vector_index.expected_segments(len(actions))} (one per refresh): a merge or flush cut them otherwise, "
            "so the "
            "vector graph would not be the reproducible one")
    return indexed, segments_before


def _merge_and_settle(stack: StackInfo, client: OpenSearch, index: str, passages: Sequence[Passage],
                      expected: Any, *, graph: bool, settle_timeout_s: float, timings: dict[str, float],
                      pg_marker: Mapping[str, Any]) -> None:
    """Refresh, force-merge to one segment, settle (the expected counts on two consecutive reads), then store the
    inventory in PostgreSQL beside the rows."""
    t0 = time.perf_counter()
    client.indices.refresh(index=index)
    # building one HNSW graph over every vector can outlast the client's default timeout (2,000 meetings: > 5 min)
    client.indices.forcemerge(index=index, max_num_segments=1, params={"request_timeout": 3600} if graph else None)
    client.indices.put_settings(index=index, body={"index": {"refresh_interval": "1s"}})
    client.indices.refresh(index=index)
    timings["force_merge_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    reads = search_index.settle(client, index, expected, timeout_s=settle_timeout_s)
    timings["settle_s"] = time.perf_counter() - t0
    timings["settle_reads"] = float(reads)
    t0 = time.perf_counter()
    tables.copy_passages(stack, passages, loaded=pg_marker)
    timings["passages_table_s"] = time.perf_counter() - t0


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    t0 = time.perf_counter()
    return fn(*args), time.perf_counter() - t0


def _pg_loaded(index: str, marker: Mapping[str, Any], passages_sha256: str, n_passages: int) -> dict[str, Any]:
    """What the PostgreSQL schema's marker records of the cut its passages table holds (tables.copy_passages)."""
    keys = ("max_words", "cut_overlap", "shards", "chunking", "definition_sha256")
    return {"index": index, **{k: marker.get(k) for k in keys}, "passages": n_passages,
            "passages_sha256": passages_sha256}

