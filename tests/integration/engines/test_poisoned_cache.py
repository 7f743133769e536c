"""The embeddings cache rewritten with recomputed digests (docs/arms.md): the entries are signed under the cache's
own secret, so a poisoned entry is encoded again — on reuse and on --reload alike — and the bench's vectors and
numbers are a clean run's, never the poison's (which took nDCG@10 to 0.003 before entries were signed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from turnbench.pipeline import bench as pipeline
from turnbench.results.directory import read_metrics
from turnbench.settings import cache_dir

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-cache-test"


def _bench(stack, out: Path, *, reload: bool) -> dict:
    options = pipeline.BenchOptions(provider="external", index=INDEX, answerer="skip", reload=reload, stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn})
    (done,) = pipeline.bench(SMALL, ["dense-exact"], out, options)
    return read_metrics(done.out_dir).tree


def _facts(doc: dict) -> tuple:
    return (doc["provenance"]["index"]["vectors"]["embeddings"]["digest"]["sha256"],
            doc["provenance"]["arm"]["query_vectors"]["digest"]["sha256"],
            doc["retrieval"]["rows"])


def test_a_cache_rewritten_with_recomputed_digests_is_encoded_again_on_reuse_and_reload(stack, tmp_path,
                                                                                         monkeypatch):
    # a cache of the test's own (the pinned model files read from the user's), so the user's is never touched
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "sha256").symlink_to(cache_dir() / "sha256")
    monkeypatch.setenv("TURNBENCH_CACHE_DIR", str(cache))
    clean = _facts(_bench(stack, tmp_path / "clean", reload=True))

    def poison() -> int:
        # every passage entry gets the next one's vector, its digest recomputed as anyone can: sha256(key, NUL, vector)
        entries = sorted(p for p in cache.rglob("*.f32d") if "query" not in p.parts)
        payloads = [e.read_bytes()[:-32] for e in entries]
        for e, payload in zip(entries, payloads[1:] + payloads[:1], strict=True):
            e.write_bytes(payload + hashlib.sha256(e.stem.encode("ascii") + b"\0" + payload).digest())
        return len(entries)

    assert poison() > 700
    assert _facts(_bench(stack, tmp_path / "reused", reload=False)) == clean  # the reuse check re-embeds: clean
    poison()
    assert _facts(_bench(stack, tmp_path / "reloaded", reload=True)) == clean  # and so does a reload
