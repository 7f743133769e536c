"""A settled load is reused only when everything that shapes it matches (issue 25): corpus, cut (max_words and
overlap), shards, index definition, chunking and tables formats, vector field (encoder, embeddings digest), the
PostgreSQL marker, the inventory read back and the live provenance; `bench` says so, and its claim files are the
same bytes whether it reused or reloaded."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.integration.tinycorpus import MAX_WORDS
from turnbench.engines.arms import builtin
from turnbench.loading import index as ix
from turnbench.loading import load as ld
from turnbench.loading.load import load_corpus
from turnbench.loading.reuse import load_or_reuse, settled_load
from turnbench.loading.spec import LoadSpec
from turnbench.loading.tables import SCHEMA
from turnbench.loading.vectors import VectorSpec
from turnbench.pipeline import bench as pipeline
from turnbench.results.directory import CLAIM_FILES
from turnbench.stack.clients import opensearch_client, postgres_connect

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-reuse-test"


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory, monkeypatch):
    """One state directory for the module's tests (the records of their loads), not the working directory's."""
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(_STATE.setdefault("dir", tmp_path_factory.mktemp("state"))))


_STATE: dict[str, Path] = {}


def _load(stack, corpus, **kw):
    spec = {"max_words": MAX_WORDS, "index": INDEX,
            **{k: kw.pop(k) for k in ("max_words", "overlap", "index", "shards", "vectors") if k in kw}}
    return load_or_reuse(stack, corpus, LoadSpec(**spec), **kw)


def _fake_vectors(encoder="fake-4", salt=b"", graph_order=None):
    """A vector field without a model: each passage's vector from the sha256 of its text (and ``salt``)."""
    from turnbench.engines import embeddings as em

    def embed(items, progress):
        import numpy as np

        ids = [i for i, _ in sorted(items)]
        text = dict(items)
        vecs = np.array([[b / 255.0 for b in hashlib.sha256(salt + text[i].encode()).digest()[:4]] for i in ids])
        micro = em.round_micro(vecs)
        digest = em.digest(ids, micro)
        row = {i: [float(x) for x in vecs[k]] for k, i in enumerate(ids)}
        # another salt is another model behind the same encoder name: its provenance says so, as a real one's does
        prov = {"encoder": {"id": encoder, **({"salt": salt.hex()} if salt else {})},
                "digest": {"of": "passages", "count": len(ids), "sha256": digest}}
        return row.__getitem__, prov

    return VectorSpec(field="embedding", encoder=encoder, dim=4, embed=embed, graph=graph_order is not None,
                      graph_order=graph_order or 0)


def test_a_settled_load_is_reused_and_any_change_of_what_shapes_it_reloads(stack, tiny, tiny_other, monkeypatch):
    first = load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS, index=INDEX))  # reuse not asked for: always a load
    assert not first.reused
    again = _load(stack, tiny)
    assert again.reused and again.timings["reused"] == 1.0
    assert (again.provenance, again.passages, again.passages_sha256) == (
        first.provenance, first.passages, first.passages_sha256)
    assert "reusing the settled index" in again.summary(tiny.id)[0]

    def reloads(why_part, **kw):
        r = _load(stack, tiny, **kw)
        assert not r.reused and why_part in r.not_reused, r.not_reused
        return r

    reloads("max_words", max_words=MAX_WORDS + 1)
    reloads("max_words")  # back to the cut it had: the index held the other one
    assert _load(stack, tiny).reused
    reloads("cut_overlap", overlap=2)
    reloads("cut_overlap")
    reloads("shards", shards=2)
    reloads("shards")
    assert _load(stack, tiny).reused

    # another corpus, then the first again
    other = _load(stack, tiny_other)
    assert not other.reused and "corpus_sha256" in other.not_reused
    reloads("corpus_sha256")

    # the index definition this code would create (its settings hash)
    real_settings = ix.index_settings
    monkeypatch.setattr(ix, "index_settings", lambda shards=1: {
        **real_settings(shards), "index": {**real_settings(shards)["index"], "max_result_window": 20000}})
    reloads("other settings or mappings")
    monkeypatch.setattr(ix, "index_settings", real_settings)
    reloads("other settings or mappings")
    assert _load(stack, tiny).reused

    # the chunking's and the tables' formats
    chunking = ld.CHUNKING
    monkeypatch.setattr(ld, "CHUNKING", chunking + "-next")
    reloads("chunking")
    monkeypatch.setattr(ld, "CHUNKING", chunking)
    reloads("chunking")
    assert _load(stack, tiny).reused

    # a live setting changed behind the marker's back: the live provenance differs from the recorded one
    client = opensearch_client(stack)
    client.indices.put_settings(index=INDEX, body={"index": {"max_result_window": 12345}})
    reloads("live provenance")
    assert _load(stack, tiny).reused

    # the inventory in PostgreSQL edited: it no longer hashes to the recorded sha256
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(f"UPDATE {SCHEMA}.passages SET words = words + 1 WHERE passage_index = 0")
    reloads("inventory read back")
    assert _load(stack, tiny).reused

    # PostgreSQL loaded with another corpus through another index: the first index's tables are gone
    assert not load_corpus(stack, tiny_other, LoadSpec(max_words=MAX_WORDS, index=INDEX + "-other")).reused
    reloads("PostgreSQL schema")
    assert _load(stack, tiny).reused
    client.indices.delete(index=INDEX + "-other")

    # an unsettled index (a load that never finished)
    marker = ix.index_marker(client, INDEX)
    ix.put_marker(client, INDEX, {**marker, "state": "loading"})
    reloads("marker is not the one the state directory")  # the index's _meta no longer what the record holds
    # --reload: loaded again although it could be kept
    forced = load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS, index=INDEX))
    assert not forced.reused and forced.provenance == first.provenance
    kept, why = settled_load(stack, tiny, LoadSpec(max_words=MAX_WORDS, index=INDEX))
    assert kept is not None and why == "reused"


def test_the_vector_field_its_encoder_and_embeddings_digest_shape_the_reuse(stack, tiny):
    plain = _load(stack, tiny)
    with_vectors = _load(stack, tiny, vectors=_fake_vectors())
    assert not with_vectors.reused and "other settings or mappings" in with_vectors.not_reused  # the field's mapping
    again = _load(stack, tiny, vectors=_fake_vectors())
    assert again.reused and again.provenance == with_vectors.provenance
    other_encoder = _load(stack, tiny, vectors=_fake_vectors(encoder="fake-4b"))
    assert not other_encoder.reused and "another vector field" in other_encoder.not_reused
    _load(stack, tiny, vectors=_fake_vectors())
    other_vectors = _load(stack, tiny, vectors=_fake_vectors(salt=b"x"))
    assert not other_vectors.reused and "another encoder" in other_vectors.not_reused
    none = _load(stack, tiny)
    assert not none.reused and none.provenance == plain.provenance


def test_another_graph_order_is_another_graph_and_is_recorded(stack, tiny):
    first = _load(stack, tiny, vectors=_fake_vectors(graph_order=0))
    assert first.provenance["vectors"]["build"]["order"] == "sha256 of the passage id"
    assert _load(stack, tiny, vectors=_fake_vectors(graph_order=0)).reused
    other = _load(stack, tiny, vectors=_fake_vectors(graph_order=1))
    assert not other.reused
    assert other.provenance["vectors"]["build"]["order"] == "sha256 of '1' followed by the passage id"


def _bench(stack, out: Path, **kw):
    lines: list[str] = []
    outcomes = pipeline.bench(SMALL, [builtin("bm25"), builtin("bm25-title")], out, pipeline.BenchOptions(
        provider="external", index=INDEX, answerer="skip",
        stack_options={"opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw),
        echo=lines.append)
    return outcomes, lines


def test_bench_reuses_a_settled_load_says_so_and_writes_the_same_bytes(stack, tmp_path):
    loaded, said = _bench(stack, tmp_path / "loaded", reload=True)
    assert any(line.startswith("load: loaded") and "--reload" in line for line in said), said
    reused, said = _bench(stack, tmp_path / "reused")
    assert any(line.startswith("load: reusing the settled index") for line in said), said
    # the load stage of a reuse is a check, far below a load
    assert reused[0].stages["load"] < loaded[0].stages["load"]
    for a, b in zip(loaded, reused, strict=True):
        names = sorted(p.name for p in a.out_dir.iterdir())
        assert names == sorted(p.name for p in b.out_dir.iterdir())
        assert set(CLAIM_FILES) <= set(names)
        for name in names:
            if name != "runinfo.json":
                assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes(), name
    # another cut reloads, and says why
    _, said = _bench(stack, tmp_path / "cut", max_words=150)
    assert any(line.startswith("load: loaded") and "max_words" in line for line in said), said
