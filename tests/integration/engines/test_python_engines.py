"""Python engines (the engine protocol) on the real stack: benched like an arm, judged and scored like an arm, and the
shipped examples — BM25 in memory, numpy dense, PostgreSQL full-text on the stack's own PostgreSQL — deterministic
and the same on every provider leg."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from msgspec.structs import replace

from turnbench.cli import main
from turnbench.corpus.format import open_corpus
from turnbench.engines import protocol
from turnbench.engines.inprocess import run_engine
from turnbench.errors import EngineFailed, NondeterministicRun, UnjudgedPassage
from turnbench.loading.load import load_corpus
from turnbench.loading.spec import LoadSpec
from turnbench.pipeline import bench as pipeline
from turnbench.results.directory import CLAIM_FILES, read_metrics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-engines-test"
EXAMPLES = ("turnbench.engines.examples.bm25:engine", "turnbench.engines.examples.dense:engine",
            "turnbench.engines.examples.pg_fulltext:engine")
# run.raw.trec of pg-fulltext on fixtures/small: PostgreSQL's own float4 ranks, the same on every provider leg
PG_FULLTEXT_RAW_SHA256 = "172405b31512e09904f4d1a6885040f85219488b94727fd553f21198bccc8acc"


def docs_engine() -> str:
    """The engine docs/engines.md shows, exactly as a reader would copy it."""
    text = (ROOT / "docs" / "engines.md").read_text()
    (code,) = re.findall(r"<!-- engine-example -->\n```python\n(.*?)```", text, re.S)
    return code


def _options(stack, **kw):
    return pipeline.BenchOptions(provider="external", index=INDEX, answerer="skip", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw)


@pytest.fixture
def env(stack, monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)


def test_the_engine_in_the_docs_benched_with_engine_equals_its_own_trec_run_scored(env, stack, tmp_path):
    code = docs_engine()
    assert len([line for line in code.splitlines() if line.strip()]) <= 20  # a 20-line engine
    (tmp_path / "overlap.py").write_text(code)
    r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--engine", f"{tmp_path / 'overlap.py'}:engine",
                                  "--provider", "external", "--index", INDEX, "--answerer", "skip",
                                  "--out", str(tmp_path / "benched")])
    assert r.exit_code == 0, r.output
    benched = tmp_path / "benched" / "word-overlap"

    # the same engine, run by hand the way its author would, written as TREC and scored with `turnbench score`
    from turnbench.corpus.format import open_corpus as opened
    from turnbench.engines.texts import passages_with_texts
    from turnbench.passages import write_passages

    corpus = opened(SMALL)
    loaded = read_metrics(benched).tree["provenance"]["index"]
    passages = passages_with_texts(corpus, loaded)
    ref = protocol.resolve(f"{tmp_path / 'overlap.py'}:engine")
    ref.engine.index(passages, None)
    questions = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    lines = [f"{q.id} Q0 {pid} {rank} {score} overlap\n"
             for q, hits in zip(questions, ref.engine.search([protocol.Question(q.id, q.text) for q in questions],
                                                             100), strict=True)
             for rank, (pid, score) in enumerate(hits, 1)]
    (tmp_path / "run.trec").write_text("".join(lines))
    write_passages(tmp_path / "passages.jsonl", [replace(p, text=None) for p in passages])
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(tmp_path / "passages.jsonl"),
                                  "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "scored")])
    assert r.exit_code == 0, r.output
    ours, theirs = read_metrics(benched).tree, read_metrics(tmp_path / "scored").tree
    assert ours["retrieval"] == theirs["retrieval"]
    assert ours["provenance"]["inputs"] == theirs["provenance"]["inputs"]
    arm = ours["provenance"]["arm"]
    assert arm["arm"]["name"] == "word-overlap" and arm["arm"]["depth"] == 100
    engine = arm["arm"]["engine"]
    assert engine["factory"] == "overlap.py:engine" and engine["version"] == "1"
    assert engine["source"]["sha256"] == hashlib.sha256(code.encode()).hexdigest()
    assert engine["config"] == {"score": "distinct question words in the passage", "tokens": "lowercased \\w+"}
    assert str(tmp_path) not in (benched / "metrics.json").read_text()
    info = json.loads((benched / "runinfo.json").read_text())
    assert info["queries_timed"] == 103 and info["latency_ms"]["p50"] > 0
    assert info["search"]["client"] == "in-process Python engine" and info["search"]["batch"] == 1


def test_the_shipped_engines_bench_beside_an_arm_byte_identical_twice_and_leave_nothing_on_the_server(stack,
                                                                                                        tmp_path):
    runs = []
    for name in ("a", "b"):
        out = pipeline.bench(SMALL, ["bm25"], tmp_path / name, _options(stack), engines=EXAMPLES)
        assert [o.name for o in out] == ["bm25", "bm25-python", "dense-numpy", "pg-fulltext"]
        runs.append(out)
    for first, second in zip(*runs, strict=True):
        for f in (*CLAIM_FILES, "run.raw.trec", "run.passages.trec", "bindings.jsonl", "report.html"):
            assert (first.out_dir / f).read_bytes() == (second.out_dir / f).read_bytes(), (first.name, f)
    docs = {o.name: read_metrics(o.out_dir).tree for o in runs[0]}
    for name, doc in docs.items():
        counts = doc["retrieval"]["counts"]
        assert counts["queries_ranked"] == 103, name
        assert doc["provenance"]["index"] == docs["bm25"]["provenance"]["index"], name  # the same passages
        assert doc["retrieval"]["rows"][-1]["means"]["nDCG@10"] > 0.3, name  # ts_rank_cd is the weakest: 0.3234
    assert docs["pg-fulltext"]["provenance"]["arm"]["arm"]["engine"]["config"]["rank"] == "ts_rank_cd(tsvector, " \
                                                                                          "query, 0)"
    raw = (runs[0][3].out_dir / "run.raw.trec").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == PG_FULLTEXT_RAW_SHA256
    import psycopg

    with psycopg.connect(stack.postgres_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'turnbench_pg_fulltext'").fetchone() == (0,)


BROKEN = '''
import random
class E:
    name, version, config = "broken", "1", {}
    def index(self, passages, context):
        self.ids = [p.id for p in passages]
    def search(self, questions, depth):
        return [HITS for q in questions]
def engine():
    return E()
'''


@pytest.mark.parametrize(("hits", "kind", "said"), [
    ("1 / 0", EngineFailed, "engine broken: search raised ZeroDivisionError: division by zero (the engine's own "
                            "error; --debug shows its traceback)"),
    ("[(self.ids[0], float('nan'))]", EngineFailed, "hit 1 (m0001:00000) has score nan, not a finite number"),
    ("[('m9999:00000', 1.0)]", UnjudgedPassage, "passage 'm9999:00000' (rank 1) is not in the passage inventory"),
    ("[(self.ids[0], random.random())]", NondeterministicRun, "asked twice got different hits"),
])
def test_an_engine_that_raises_or_answers_wrongly_is_refused_naming_it(stack, tmp_path, hits, kind, said):
    corpus = open_corpus(SMALL)
    loaded = load_corpus(stack, corpus, LoadSpec(index=INDEX))
    (tmp_path / "broken.py").write_text(BROKEN.replace("HITS", hits))
    ref = protocol.resolve(f"{tmp_path / 'broken.py'}:engine")
    with pytest.raises(kind) as caught:
        run_engine(stack, corpus, ref, index=INDEX, inventory=(loaded.passages, loaded.passages_sha256))
    assert said in str(caught.value)


def test_on_the_command_line_an_engines_own_error_is_exit_2_and_writes_nothing(env, tmp_path):
    (tmp_path / "broken.py").write_text(BROKEN.replace("HITS", "1 / 0"))
    r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--engine", f"{tmp_path / 'broken.py'}:engine",
                                  "--provider", "external", "--index", INDEX, "--answerer", "skip",
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    # the refusal is the only line: the load's note (a load, or the reuse of an earlier test's) is a --verbose one
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("turnbench: EngineFailed: engine broken: search raised ZeroDivisionError")
    assert not (tmp_path / "out" / "broken").exists()


def test_an_engine_is_benched_only_over_the_whole_corpus(stack, tmp_path):
    from turnbench.errors import BadInput

    with pytest.raises(BadInput, match="bench an engine with the corpus scope"):
        pipeline.bench(SMALL, [], tmp_path / "o", _options(stack, scope="gold-meetings"), engines=EXAMPLES[:1])
