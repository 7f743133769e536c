"""Reuse a settled load (issues 25, 40): what ``bench`` and ``load`` do unless ``--reload``.

A load already in the stack is kept only when the state directory holds the record its load wrote
(turnbench.loading.proof) — the index's own ``_meta`` is never trusted: anyone can rewrite it — and everything that
shapes the load matches what this load would build: the recorded marker (equal to the index's) names this corpus
(sha256), the index format, the tables format, the chunking, ``max_words`` and ``overlap``, the shards and the
sha256 of the settings and mappings this load would create; a vector field has the same encoder (its provenance)
and recipe; the index is the one the record was written for (its uuid); the PostgreSQL marker names this cut; the
inventory read back from PostgreSQL hashes to the recorded passages sha256; the index holds exactly those passages
per meeting, force-merged; the provenance read live equals the recorded one; and the content proves it: every table
of the schema digests as the load left it, and every document read back from the index (its ``_source``, vectors
included) digests as the load sent it. Anything else loads again, the reason in one note line; so the claim files
are the same bytes as after a reload.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from turnbench import canonical, settings
from turnbench.corpus.format import Corpus
from turnbench.loading import index as search_index
from turnbench.loading import load as loader
from turnbench.loading import proof, tables
from turnbench.loading.chunking import check_cut
from turnbench.loading.spec import LoadSpec
from turnbench.loading.vectors import VectorSpec
from turnbench.passages import inventory_sha256
from turnbench.stack.clients import opensearch_client, stack_errors
from turnbench.stack.info import StackInfo


def load_or_reuse(stack: StackInfo, corpus: Corpus, spec: LoadSpec = LoadSpec(), *, reload: bool = False,
                  progress: Callable[[int, int], None] | None = None,
                  embed_progress: Callable[[int, int], None] | None = None) -> loader.LoadResult:
    """The settled load of exactly this (``spec``) already in the stack (``reused``), else (or with ``reload``) a load
    (turnbench.loading.load.load_corpus) whose ``not_reused`` says why the stack's could not be kept (empty when the
    stack held no such index)."""
    why = ""
    if not reload:
        with stack_errors(stack):
            kept, why = settled_load(stack, corpus, spec)
        if kept is not None:
            return kept
    loaded = loader.load_corpus(stack, corpus, spec, progress=progress, embed_progress=embed_progress)
    return dataclasses.replace(loaded, not_reused=why)


def settled_load(stack: StackInfo, corpus: Corpus,
                 spec: LoadSpec = LoadSpec()) -> tuple[loader.LoadResult | None, str]:
    """The settled load of exactly this corpus, cut and index definition already in the stack, as the LoadResult a
    load would return (``reused``), or None and why not. Neither store is written (only the passage inventory, kept
    beside the record when a load made before inventories were kept left none). Kept only when the state directory
    records a settled load into this index (turnbench.loading.proof) whose marker, shaping, uuid, provenance,
    documents and tables are what the stack holds now and what this load would build; the index's own marker only
    says whose the index is (an alias, a data stream or an index without it is refused, ForeignIndex)."""
    t_all = time.perf_counter()
    index, vectors = spec.index, spec.vectors
    client = opensearch_client(stack)
    search_index.check_index_name(index)
    search_index.check_shards(spec.shards)
    check_cut(spec.max_words, spec.overlap)
    live_marker = search_index.index_marker(client, index)  # someone else's index, alias or data stream is refused here
    if live_marker is None:
        return None, ""  # nothing to keep: a fresh stack's load is no news
    record = proof.read_record(index)
    if record is None or not isinstance(record.get("marker"), dict) or not isinstance(record.get("provenance"), dict):
        return None, f"the state directory {settings.state_dir()} holds no record of a settled load into {index!r}"
    marker = record["marker"]
    if canonical.dumps(live_marker) != canonical.dumps(marker):
        return None, f"index {index!r}'s marker is not the one the state directory's record holds"
    differs = _shape_differs(marker, corpus, spec)
    if differs is not None:
        return None, differs
    n_passages = int(marker["passages"])
    if search_index.index_uuid(client, index) != record.get("index_uuid"):
        return None, f"index {index!r} is not the one the state directory's record was written for (another uuid)"
    held = tables.loaded_tables_marker(stack)
    pg_want = {"corpus_sha256": corpus.sha256,
               "loaded": loader._pg_loaded(index, marker, str(marker.get("passages_sha256")), n_passages)}
    for key, value in pg_want.items():
        if held is None or held.get(key) != value:
            return None, f"PostgreSQL schema {tables.SCHEMA!r} does not hold this load ({key} differs)"
    passages = tables.read_passages(stack)
    passages_sha256 = inventory_sha256(passages)
    if passages_sha256 != marker.get("passages_sha256") or len(passages) != n_passages:
        return None, ("the inventory read back from PostgreSQL does not hash to the recorded "
                      f"{marker.get('passages_sha256')}")
    expected = search_index.expected_counts(passages)
    if search_index.observed_counts(client, index) != expected:
        return None, f"index {index!r} does not hold exactly the inventory's passages per meeting"
    prov = search_index.index_provenance(client, index)
    topology = search_index.index_topology(client, index)
    if any(n != 1 for n in topology["segments_per_shard"]):
        return None, f"index {index!r} has {topology['segments_per_shard']} segments per shard, not 1"
    loader._add_provenance(prov, stack, passages=n_passages, meetings=int(marker.get("meetings", -1)),
                       segments=int(marker.get("segments", -1)), passages_sha256=passages_sha256,
                       max_words=spec.max_words, overlap=spec.overlap)
    recorded = record["provenance"]
    if vectors is not None:
        recorded_embeddings = (recorded.get("vectors") or {}).get("embeddings") or {}
        # the encoder this load would embed with (its provenance, nothing encoded): the vectors themselves are read
        # back from the index with the documents below, never embedded again
        if vectors.embed([], None)[1].get("encoder") != recorded_embeddings.get("encoder"):
            return None, f"index {index!r}'s vectors were made by another encoder than this load's"
        prov["vectors"] = recorded.get("vectors")
    if canonical.dumps(prov) != canonical.dumps(recorded):
        return None, f"index {index!r}'s live provenance differs from the one recorded when it settled"
    differs = _content_differs(stack, client, record, index=index, vectors=vectors)
    if differs is not None:
        return None, differs
    if not proof.inventory_path(index).is_file():  # a load kept before inventories were kept beside its record
        proof.keep_inventory(index, passages)
    timings = {"total_s": time.perf_counter() - t_all, "reused": 1.0}
    return loader.LoadResult(index=index, passages=tuple(passages), passages_sha256=passages_sha256, provenance=prov,
                         timings=timings, topology=topology, reused=True), "reused"


def _shape_differs(marker: Mapping[str, Any], corpus: Corpus, spec: LoadSpec) -> str | None:
    """Why the recorded load is not the one this load would build (corpus, cut, formats, definition, vector field),
    or None."""
    index, max_words, overlap, shards, vectors = spec.index, spec.max_words, spec.overlap, spec.shards, spec.vectors
    want = {"corpus_sha256": corpus.sha256, "state": "settled", "max_words": max_words, "cut_overlap": overlap,
            "shards": shards, "chunking": loader.CHUNKING, "tables_format": tables.TABLES_FORMAT}
    for key, value in want.items():
        if marker.get(key) != value:
            return f"index {index!r} has {key} {marker.get(key)!r}, not {value!r}"
    n_passages = marker.get("passages")
    if not isinstance(n_passages, int):
        return f"index {index!r} records no passage count"
    index_settings, mappings = loader._definition(shards, vectors, n_passages)
    shaping = loader._shaping(index_settings, mappings, overlap=overlap)
    if marker.get("definition_sha256") != shaping["definition_sha256"]:
        return f"index {index!r} was created with other settings or mappings"
    recorded_vectors = marker.get("vectors")
    if (vectors is None) != (recorded_vectors is None):
        return f"index {index!r} {'has no' if vectors is not None else 'has a'} vector field"
    if vectors is not None and isinstance(recorded_vectors, Mapping) and (
            [recorded_vectors.get(k) for k in ("field", "encoder", "graph", "config")]
            != [vectors.field, vectors.encoder, vectors.graph, vectors.config()]):
        return f"index {index!r} holds another vector field (encoder {recorded_vectors.get('encoder')!r})"
    return None


def _content_differs(stack: StackInfo, client: Any, record: Mapping[str, Any], *, index: str,
                     vectors: VectorSpec | None) -> str | None:
    """Why the stack's content is not what the recorded load wrote — a table of the schema, then the index's
    documents read back (naming the first meeting that differs) — or None."""
    differing = proof.first_table_differing(record.get("tables") or {}, tables.digest(stack))
    if differing is not None:
        return f"PostgreSQL table {tables.SCHEMA}.{differing} is not what the load wrote"
    documents = proof.combine(proof.read_documents(client, index, vectors.field if vectors is not None else None))
    if documents != record.get("documents"):
        meeting = proof.first_meeting_differing(record.get("documents") or {}, documents)
        return (f"index {index!r}'s documents do not read back as the load wrote them"
                + (f" (meeting {meeting!r} first)" if meeting is not None else ""))
    return None
