"""Arms on other engines than OpenSearch (turnbench.engines.families) on the real stack: benched from their files beside
an OpenSearch arm, on the same loaded passages, judged and scored alike, the same bytes twice; a setting the engine did
not store refuses the arm in one line and writes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.pipeline import bench as pipeline
from turnbench.results.directory import CLAIM_FILES, read_metrics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-families-test"
SAME = (*CLAIM_FILES, "run.raw.trec", "run.passages.trec", "bindings.jsonl", "report.html")


def docs_arm(marker: str) -> bytes:
    """The arm file docs/engines.md shows under ``marker``, exactly as a reader would copy it."""
    (code,) = re.findall(rf"<!-- {marker} -->\n```toml\n(.*?)```", (ROOT / "docs" / "engines.md").read_text(), re.S)
    return code.encode()


def _options(stack, **kw):
    return pipeline.BenchOptions(provider="external", index=INDEX, answerer="skip", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw)


def _bench_twice(stack, tmp_path: Path, arms: list, names: list[str]) -> tuple[list, dict]:
    """The arms benched twice: every claimed file the same bytes both times, every arm over the same passages,
    each ranking the fixture's 103 questions with nDCG@10 above 0.3; the first run's outcomes and documents."""
    runs = []
    for name in ("a", "b"):
        out = pipeline.bench(SMALL, arms, tmp_path / name, _options(stack))
        assert [o.name for o in out] == names
        runs.append(out)
    for first, second in zip(*runs, strict=True):
        for f in SAME:
            assert (first.out_dir / f).read_bytes() == (second.out_dir / f).read_bytes(), (first.name, f)
    docs = {o.name: read_metrics(o.out_dir).tree for o in runs[0]}
    for name, doc in docs.items():
        assert doc["retrieval"]["counts"]["queries_ranked"] == 103, name
        assert doc["provenance"]["index"] == docs[names[0]]["provenance"]["index"], name  # the same passages
        assert doc["retrieval"]["rows"][-1]["means"]["nDCG@10"] > 0.3, name
    return runs[0], docs


def test_fts5_arms_the_built_in_and_the_one_in_the_docs_bench_beside_bm25_byte_identical_twice(stack, tmp_path):
    from turnbench.engines.arms import from_file

    (tmp_path / "mine.toml").write_bytes(docs_arm("fts5-arm-example"))
    first, docs = _bench_twice(stack, tmp_path, ["bm25", "fts5-bm25", from_file(tmp_path / "mine.toml")],
                           ["bm25", "fts5-bm25", "fts5-text-speaker"])
    arm = docs["fts5-bm25"]["provenance"]["arm"]["arm"]
    assert arm["description"].startswith("SQLite FTS5 bm25()")
    engine = arm["engine"]
    assert engine["factory"] == "turnbench.engines.families.fts5:sqlite-fts5"
    assert engine["config"]["engine"] == "sqlite-fts5" and engine["config"]["versions"]["sqlite"]
    assert engine["config"]["arm"]["settings"] == {"tokenizer": "porter unicode61", "columns": {"text": 1.0},
                                                  "join": "OR"}
    assert engine["config"]["arm"]["file"]["name"] == "fts5-bm25.toml"
    # the two FTS5 arms rank differently: the tokenizer and the speaker column are settings that matter
    assert (first[1].out_dir / "run.raw.trec").read_bytes() != (first[2].out_dir / "run.raw.trec").read_bytes()


def test_a_tokenizer_sqlite_did_not_store_refuses_the_arm_in_one_line_and_writes_nothing(stack, tmp_path,
                                                                                         monkeypatch):
    from turnbench.engines.families import fts5

    # SQLite storing the table under another tokenizer than the arm's: the read-back catches it before any question
    real = fts5._create
    monkeypatch.setattr(fts5, "_create", lambda settings, name=fts5.NAME: real(
        {**settings, "tokenizer": "unicode61"}, name))
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--arm", "fts5-bm25", "--provider", "external",
                                  "--index", INDEX, "--answerer", "skip", "--out", str(tmp_path / "out")])
    assert r.exit_code == 3, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("turnbench: SettingIgnored: arm fts5-bm25 (sqlite-fts5): SQLite stored the table as")
    assert not (tmp_path / "out" / "fts5-bm25").exists()


def _private_tmp(monkeypatch, tmp_path: Path) -> Path:
    """The shards' temporary directory, this test's own: another bench on the machine may hold shards in /tmp."""
    import tempfile

    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def test_qdrant_arms_the_built_ins_and_the_one_in_the_docs_bench_byte_identical_twice(stack, tmp_path, monkeypatch):
    from turnbench.engines.arms import from_file

    shards = _private_tmp(monkeypatch, tmp_path)

    (tmp_path / "mine.toml").write_bytes(docs_arm("qdrant-arm-example"))
    first, docs = _bench_twice(
        stack, tmp_path, ["qdrant-bm25", "qdrant-dense", "qdrant-hybrid-rrf", from_file(tmp_path / "mine.toml")],
        ["qdrant-bm25", "qdrant-dense", "qdrant-hybrid-rrf", "qdrant-rrf-lexical-2x"])
    engine = docs["qdrant-hybrid-rrf"]["provenance"]["arm"]["arm"]["engine"]
    assert engine["factory"] == "turnbench.engines.families.qdrant:qdrant"
    assert engine["config"]["versions"] == {"qdrant-edge-py": "0.9.0"}
    assert engine["config"]["arm"]["settings"]["dense"] == {"encoder": "minilm-l6-v2-int8", "distance": "cosine"}
    # the fused arms differ by their weights alone
    assert (first[2].out_dir / "run.raw.trec").read_bytes() != (first[3].out_dir / "run.raw.trec").read_bytes()
    assert not list(shards.glob("turnbench-qdrant-*"))  # every shard removed


def test_a_qdrant_setting_the_engine_drops_refuses_the_arm_in_one_line_and_writes_nothing(stack, tmp_path,
                                                                                          monkeypatch):
    import qdrant_edge

    shards = _private_tmp(monkeypatch, tmp_path)
    real = qdrant_edge.EdgeSparseVectorParams  # the engine storing the sparse vector without its IDF modifier
    monkeypatch.setattr(qdrant_edge, "EdgeSparseVectorParams", lambda modifier=None, **kw: real(**kw))
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--arm", "qdrant-bm25", "--provider", "external",
                                  "--index", INDEX, "--answerer", "skip", "--out", str(tmp_path / "out")])
    assert r.exit_code == 3, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line == ("turnbench: SettingIgnored: arm qdrant-bm25 (qdrant): the shard stored sparse_vectors 'bm25' with "
                    "modifier None, not 'idf' as declared (a dropped setting)")
    assert not (tmp_path / "out" / "qdrant-bm25").exists()
    assert not list(shards.glob("turnbench-qdrant-*"))
