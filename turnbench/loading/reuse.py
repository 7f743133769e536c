"""Reuse a settled load (issue 25): what ``bench`` and ``load`` do unless ``--reload``.

A load already in the stack is kept only when everything that shapes it matches what this load would build: the
index marker and the PostgreSQL marker name this corpus (sha256), the index format, the tables format, the
chunking, ``max_words`` and ``overlap``, the shards and the sha256 of the settings and mappings this load would
create; a vector field has the same encoder and recipe and the passages' embeddings (read again, from the
encoder's cache) give the recorded digest; the inventory read back from PostgreSQL hashes to the recorded passages
sha256; the index holds exactly those passages per meeting, force-merged; and the provenance read live from the
index equals the one recorded when it settled. So the claim files are the same bytes as after a reload.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.loading import index as ix
from turnbench.loading import load as ld
from turnbench.loading import tables
from turnbench.loading.chunking import DEFAULT_MAX_WORDS, check_cut, chunk_meeting
from turnbench.loading.vectors import VectorSpec
from turnbench.passages import Passage, inventory_sha256
from turnbench.stack.clients import opensearch_client, stack_errors
from turnbench.stack.info import StackInfo


def load_or_reuse(stack: StackInfo, corpus: Corpus, *, reload: bool = False, max_words: int = DEFAULT_MAX_WORDS,
                  overlap: int = 0, index: str = ix.DEFAULT_INDEX, shards: int = 1, vectors: VectorSpec | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  embed_progress: Callable[[int, int], None] | None = None) -> ld.LoadResult:
    """The settled load of exactly this already in the stack (``reused``), else (or with ``reload``) a load
    (turnbench.loading.load.load_corpus) whose ``not_reused`` says why the stack's could not be kept (empty when the
    stack held no such index)."""
    why = ""
    if not reload:
        with stack_errors(stack):
            kept, why = settled_load(stack, corpus, max_words=max_words, overlap=overlap, index=index, shards=shards,
                                     vectors=vectors)
        if kept is not None:
            return kept
    loaded = ld.load_corpus(stack, corpus, max_words=max_words, overlap=overlap, index=index, shards=shards,
                            vectors=vectors, progress=progress, embed_progress=embed_progress)
    return dataclasses.replace(loaded, not_reused=why)


def settled_load(stack: StackInfo, corpus: Corpus, *, max_words: int = DEFAULT_MAX_WORDS, overlap: int = 0,
                 index: str = ix.DEFAULT_INDEX, shards: int = 1,
                 vectors: VectorSpec | None = None) -> tuple[ld.LoadResult | None, str]:
    """The settled load of exactly this corpus, cut and index definition already in the stack, as the LoadResult a
    load would return (``reused``), or None and why not. Nothing is written. Kept only when the index marker and
    the PostgreSQL marker agree on everything that shapes the index, the inventory read back from PostgreSQL hashes
    to the recorded sha256, the index holds exactly those passages per meeting, the vector field's embeddings give
    the recorded digest, and the provenance read live from the index equals the one recorded at settling."""
    t_all = time.perf_counter()
    client = opensearch_client(stack)
    ix.check_index_name(index)
    ix.check_shards(shards)
    check_cut(max_words, overlap)
    marker = ix.index_marker(client, index)  # an index without turnbench's marker is refused, as by a load
    if marker is None:
        return None, ""  # nothing to keep: a fresh stack's load is no news
    want = {"corpus_sha256": corpus.sha256, "state": "settled", "max_words": max_words, "cut_overlap": overlap,
            "shards": shards, "chunking": ld.CHUNKING, "tables_format": tables.TABLES_FORMAT}
    for key, value in want.items():
        if marker.get(key) != value:
            return None, f"index {index!r} has {key} {marker.get(key)!r}, not {value!r}"
    n_passages = marker.get("passages")
    if not isinstance(n_passages, int) or not isinstance(marker.get("provenance"), dict):
        return None, f"index {index!r} records no passage count or provenance"
    settings, mappings = ld._definition(shards, vectors, n_passages)
    if marker.get("definition_sha256") != ld._shaping(settings, mappings, overlap=overlap)["definition_sha256"]:
        return None, f"index {index!r} was created with other settings or mappings"
    recorded_vectors = marker.get("vectors")
    if (vectors is None) != (recorded_vectors is None):
        return None, f"index {index!r} {'has no' if vectors is not None else 'has a'} vector field"
    if vectors is not None and recorded_vectors is not None and (
            [recorded_vectors.get(k) for k in ("field", "encoder", "graph", "config")]
            != [vectors.field, vectors.encoder, vectors.graph, vectors.config()]):
        return None, f"index {index!r} holds another vector field (encoder {recorded_vectors.get('encoder')!r})"
    held = tables.loaded_tables_marker(stack)
    pg_want = {"corpus_sha256": corpus.sha256,
               "loaded": ld._pg_loaded(index, marker, str(marker.get("passages_sha256")), n_passages)}
    for key, value in pg_want.items():
        if held is None or held.get(key) != value:
            return None, f"PostgreSQL schema {tables.SCHEMA!r} does not hold this load ({key} differs)"
    passages = tables.read_passages(stack)
    passages_sha256 = inventory_sha256(passages)
    if passages_sha256 != marker.get("passages_sha256") or len(passages) != n_passages:
        return None, ("the inventory read back from PostgreSQL does not hash to the recorded "
                      f"{marker.get('passages_sha256')}")
    expected = ix.expected_counts(passages)
    if ix.observed_counts(client, index) != expected:
        return None, f"index {index!r} does not hold exactly the inventory's passages per meeting"
    prov = ix.index_provenance(client, index)
    topology = ix.index_topology(client, index)
    if any(n != 1 for n in topology["segments_per_shard"]):
        return None, f"index {index!r} has {topology['segments_per_shard']} segments per shard, not 1"
    ld._add_provenance(prov, stack, passages=n_passages, meetings=int(marker.get("meetings", -1)),
                       segments=int(marker.get("segments", -1)), passages_sha256=passages_sha256,
                       max_words=max_words, overlap=overlap)
    recorded = marker["provenance"]
    if vectors is not None and recorded_vectors is not None:
        vector_prov = _embeddings_again(corpus, vectors, max_words=max_words, overlap=overlap, passages=passages)
        if vector_prov is None or vector_prov["digest"]["sha256"] != recorded_vectors.get("digest"):
            return None, f"the passages' embeddings no longer give the digest index {index!r} was built with"
        prov["vectors"] = {**vectors.config(), "segments_before_merge": (recorded.get("vectors") or {}).get(
            "segments_before_merge"), "embeddings": dict(vector_prov)}
    if canonical.dumps(prov) != canonical.dumps(recorded):
        return None, f"index {index!r}'s live provenance differs from the one recorded when it settled"
    timings = {"total_s": time.perf_counter() - t_all, "reused": 1.0}
    return ld.LoadResult(index=index, passages=tuple(passages), passages_sha256=passages_sha256, provenance=prov,
                         timings=timings, topology=topology, reused=True), "reused"


def _embeddings_again(corpus: Corpus, vectors: VectorSpec, *, max_words: int, overlap: int,
                      passages: Sequence[Passage]) -> Mapping[str, Any] | None:
    """The embeddings' provenance of the passages cut again (the encoder's cache makes this a read), or None when the
    cut does not give the inventory."""
    cut = [c for m in corpus.iter_meetings() for c in chunk_meeting(m.id, m.turns, max_words=max_words,
                                                                    overlap=overlap)]
    if [c.passage.id for c in sorted(cut, key=lambda c: (c.passage.meeting, c.passage.index))] != [
            p.id for p in passages]:
        return None
    _vector_of, prov = vectors.embed([(c.passage.id, c.text) for c in cut], None)
    return prov
