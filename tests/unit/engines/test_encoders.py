"""The offline encoder: pinned files, a numpy fp32 reference, determinism, and the embeddings cache and digest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.unit.engines.bert_reference import REFERENCE_WEIGHTS, reference_weights
from tests.unit.engines.bert_reference import minilm as reference_minilm
from turnbench.corpus.format import open_corpus
from turnbench.engines import encoders
from turnbench.engines.embeddings import SCALE, digest, embed, round_micro, store
from turnbench.engines.encoders import minilm
from turnbench.errors import BadInput
from turnbench.loading.chunking import chunk_meeting

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def encoder():
    return encoders.get("minilm-l6-v2-int8")


@pytest.fixture(scope="module")
def real_texts():
    """60 texts of fixtures/small: every third query (30), every eighth passage in id order (28), the shortest
    passage (a 4-token backchannel, "Mm.") and the longest (243 tokens, under the 256 cap)."""
    corpus = open_corpus(ROOT / "fixtures" / "small")
    queries = sorted(corpus.queries(), key=lambda q: q.id)
    chunks = sorted((c for m in corpus.iter_meetings() for c in chunk_meeting(m.id, m.turns)),
                    key=lambda c: c.passage.id)
    longest = max(chunks, key=lambda c: (len(c.text), c.passage.id))
    shortest = min(chunks, key=lambda c: (len(c.text), c.passage.id))
    return [q.text for q in queries[::3]][:30] + [c.text for c in chunks[::8]][:28] + [shortest.text, longest.text]


def test_an_unknown_encoder_is_refused_in_one_line():
    known = "bge-small-en-v15-int8, minilm-l6-v2-int8"
    with pytest.raises(BadInput, match=rf"arm\.toml: unknown encoder 'bert-huge'; known encoders: {known}"):
        encoders.check_name("bert-huge", "arm.toml")


def test_provenance_names_every_file_by_sha256_and_every_setting(encoder):
    p = encoder.provenance()
    assert p["id"] == "minilm-l6-v2-int8" and p["dim"] == encoder.dim == 384
    assert p["files"]["model.onnx"]["sha256"] == minilm.MODEL_SHA256
    assert p["files"]["tokenizer.json"]["sha256"] == minilm.TOKENIZER.sha256
    assert p["tokens"]["max"] == 256 and p["tokens"]["padding"] == "to the longest text of its batch"
    assert "mean" in p["pooling"] and p["normalisation"].startswith("L2")
    assert p["runtime"]["onnxruntime"] == "1.32.0" and p["runtime"]["tokenizers"] == "0.23.3"
    assert p["runtime"]["allow_spinning"] == 0 and p["runtime"]["graph_optimization"] == "all"


def test_int8_encoder_agrees_with_a_numpy_fp32_forward_pass(encoder, real_texts):
    """Cosine between the int8 ONNX vector and the fp32 reference, on 60 real texts. Measured (corpus-v3 fixture):
    mean 0.99952; every text of more than 4 tokens at least 0.99933; the 4-token backchannel ("Mm.") 0.99809 —
    int8 quantisation moves a vector pooled from two word pieces the most (on the corpus-v2 fixture, "Sure." and
    "Yeah." 0.9959-0.9962). Asserted: mean >= 0.999, >= 0.999 for every text of more than 4 tokens, >= 0.995 for
    every text."""
    assert len(real_texts) == 60
    reference = reference_minilm(reference_weights())
    ids = encoder.token_ids(real_texts)
    assert min(len(i) for i in ids) == 4 and max(len(i) for i in ids) == 243  # a backchannel .. the longest
    ref = np.stack([reference.encode_one(i) for i in ids]).astype(np.float64)
    cos = (ref * encoder.encode(real_texts, "passage")).sum(axis=1)
    assert cos.mean() >= 0.999
    assert all(c >= 0.999 for c, i in zip(cos, ids, strict=True) if len(i) > 4), sorted(cos)[:5]
    assert cos.min() >= 0.995


def test_vectors_do_not_depend_on_batch_company_or_order(encoder, real_texts):
    together = encoder.encode(real_texts, "passage")
    alone = np.stack([encoder.encode([t], "passage")[0] for t in real_texts[::7]])
    assert together[::7].tobytes() == alone.tobytes()
    reversed_ = encoder.encode(real_texts[::-1], "passage")[::-1]
    assert together.tobytes() == reversed_.tobytes()
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)


def test_minilm_embeds_a_query_as_it_embeds_a_passage(encoder, real_texts):
    """Symmetric: the role changes nothing, so MiniLM's vectors (and every digest of them) are what they were."""
    assert encoder.encode(real_texts[:30], "query").tobytes() == encoder.encode(real_texts[:30], "passage").tobytes()
    with pytest.raises(ValueError, match="a 'query' or a 'passage'"):
        encoder.encode(real_texts[:1], "question")


def test_rounding_keeps_six_decimals_half_to_even():
    v = np.array([[0.1234565, -0.0000005, 0.9999996, -1.0]], dtype=np.float64)
    assert round_micro(v).tolist() == [[123456, 0, 1000000, -1000000]]
    assert SCALE == 10 ** 6


def test_digest_is_over_ids_in_order_not_over_input_order():
    micro = np.array([[1, 2], [3, 4]], dtype="<i4")
    assert digest(["b", "a"], micro) == digest(["a", "b"], micro[::-1])
    assert digest(["a", "b"], micro) != digest(["a", "b"], micro[::-1])


def test_cache_is_keyed_by_encoder_and_text_and_a_second_embed_reads_it(encoder, tmp_path):
    items = [("p2", "we ship on friday"), ("p1", "Right."), ("p3", "Right.")]
    calls = []

    def progress(n, total):
        calls.append((n, total))

    first = embed(encoder, items, role="passage", root=tmp_path, progress=progress)
    assert first.ids == ("p1", "p2", "p3") and first.encoded == 2 and first.cached == 0
    assert calls == [(2, 2)]  # two distinct texts ran through the model
    files = sorted(store(encoder, tmp_path).rglob("*.f32d"))
    assert len(files) == 2 and all(f.stat().st_size == 4 * 384 + 32 for f in files)
    second = embed(encoder, list(reversed(items)), role="passage", root=tmp_path)
    assert second.encoded == 0 and second.cached == 3 and second.digest == first.digest
    assert first.vector("p1") == first.vector("p3")
    assert all(abs(x * SCALE - round(x * SCALE)) < 1e-6 for x in first.vector("p2"))
    files[0].write_bytes(b"short")  # a damaged entry is removed and rewritten, never read
    third = embed(encoder, items, role="passage", root=tmp_path)
    assert third.encoded == 1 and third.repaired == 1 and third.digest == first.digest


def test_a_tampered_cache_entry_of_the_right_size_is_caught_and_encoded_again(encoder, tmp_path):
    """Same key, same size, another vector (the one of another text): used silently, it would move a passage from
    rank 50 to 1. Its digest does not hold, so it is removed and the text encoded again: the vectors and their digest
    are the untampered ones."""
    items = [("p1", "we ship on friday"), ("p2", "the budget is approved")]
    first = embed(encoder, items, role="passage", root=tmp_path)
    a, b = sorted(store(encoder, tmp_path).rglob("*.f32d"))
    a.write_bytes(b.read_bytes()[:4 * 384] + a.read_bytes()[4 * 384:])  # p2's vector under p1's key, digest kept
    again = embed(encoder, items, role="passage", root=tmp_path)
    assert again.repaired == 1 and again.encoded == 1 and again.digest == first.digest
    b.write_bytes(b.read_bytes())  # copying a whole valid entry under another name fails too: the key is digested
    a.write_bytes(b.read_bytes())
    assert embed(encoder, items, role="passage", root=tmp_path).repaired == 1


def test_the_reference_weights_are_the_pinned_snapshot():
    path = reference_weights()
    assert path.name == "model.safetensors" and path.parent.name == REFERENCE_WEIGHTS.sha256


def _plain_digest(path: Path, payload: bytes) -> bytes:
    """The digest an entry carried before entries were signed: what anyone can recompute, no secret needed."""
    import hashlib

    return hashlib.sha256(path.stem.encode("ascii") + b"\0" + payload).digest()


def test_an_entry_rewritten_with_a_recomputed_digest_is_encoded_again_not_trusted(encoder, tmp_path):
    """A poisoned cache: another text's vector under this key, its digest recomputed by hand as sha256 (and even
    as HMAC under a guessed secret). Neither holds without the cache's own secret: the entry is removed, the text
    encoded again, and the vectors' digest is the clean run's."""
    import hashlib
    import hmac

    items = [("p1", "we ship on friday"), ("p2", "the budget is approved")]
    clean = embed(encoder, items, role="passage", root=tmp_path)
    a, b = sorted(store(encoder, tmp_path).rglob("*.f32d"))
    payload = b.read_bytes()[:4 * 384]
    a.write_bytes(payload + _plain_digest(a, payload))
    again = embed(encoder, items, role="passage", root=tmp_path)
    assert (again.repaired, again.encoded, again.cached) == (1, 1, 1) and again.digest == clean.digest
    guessed = hmac.new(b"\0" * 32, a.stem.encode() + b"\0" + payload, hashlib.sha256).digest()
    a.write_bytes(payload + guessed)
    assert embed(encoder, items, role="passage", root=tmp_path).digest == clean.digest


def test_an_untouched_cache_is_read_not_encoded_again(encoder, tmp_path):
    items = [("p1", "we ship on friday"), ("q", "when do we ship?")]
    first = embed(encoder, items, role="query", root=tmp_path)
    key = tmp_path / "embeddings" / "cache.key"
    assert first.encoded == 2 and key.stat().st_size == 32 and key.stat().st_mode & 0o777 == 0o600
    secret = key.read_bytes()
    second = embed(encoder, items, role="query", root=tmp_path)
    assert (second.encoded, second.cached, second.repaired) == (0, 2, 0) and second.digest == first.digest
    assert key.read_bytes() == secret  # the key is kept, not made again


@pytest.mark.parametrize("damage", ["missing", "short", "open to others"])
def test_a_key_missing_or_unusable_is_made_again_and_the_cache_encoded_again_once(encoder, tmp_path, damage):
    items = [("p1", "we ship on friday"), ("p2", "the budget is approved")]
    first = embed(encoder, items, role="passage", root=tmp_path)
    key = tmp_path / "embeddings" / "cache.key"
    old = key.read_bytes()
    if damage == "missing":
        key.unlink()
    elif damage == "short":
        key.write_bytes(old[:16])
    else:
        key.chmod(0o644)
    again = embed(encoder, items, role="passage", root=tmp_path)
    assert (again.repaired, again.encoded) == (2, 2) and again.digest == first.digest
    assert key.read_bytes() != old and len(key.read_bytes()) == 32 and key.stat().st_mode & 0o777 == 0o600
    third = embed(encoder, items, role="passage", root=tmp_path)
    assert (third.repaired, third.encoded, third.cached) == (0, 0, 2)  # once: then read
