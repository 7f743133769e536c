"""`turnbench load` and `turnbench run` against the session stack (named to the CLI as an external stack)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.tinycorpus import MAX_WORDS, write_tiny_corpus
from turnbench.cli import main
from turnbench.passages import read_passages
from turnbench.runfiles import read_trec_run

pytestmark = pytest.mark.integration


@pytest.fixture
def cli_env(stack, monkeypatch, tmp_path):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_load_then_run_writes_the_inventory_and_the_run(cli_env, tmp_path):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    res = invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS)
    assert res.exit_code == 0, res.output
    assert "4 meetings, 12 segments, 12 passages" in res.output

    outs = {}
    for scope in ("corpus", "gold-meetings"):
        out = tmp_path / f"run-{scope}"
        res = invoke("run", "--corpus", corpus, "--arm", "bm25", "--out", out, "--scope", scope)
        assert res.exit_code == 0, res.output
        assert ("ORACLE UPPER BOUND" in res.output) is (scope == "gold-meetings")
        outs[scope] = out
    out = outs["corpus"]
    assert sorted(p.name for p in out.iterdir()) == ["arm.json", "passages.jsonl", "run.jsonl", "run.trec"]
    passages = read_passages(out / "passages.jsonl")
    assert len(passages) == 12 and passages[0].id == "mtg-0001:00000"
    lines = (out / "run.trec").read_text().splitlines()
    # the engine's own rank and raw BM25 score, written so the float round-trips
    first = lines[0].split()
    assert first[:4] + first[5:] == ["q01", "Q0", "mtg-0004:00001", "1", "bm25"] and float(first[4]) > 1.0
    assert repr(float(first[4])) == first[4]
    assert all(len(line.split()) == 6 for line in lines)
    assert {e.query_id for e in read_trec_run(out / "run.trec")} == {"q01", "q02", "q03", "q04", "q07"}
    gold_trec = (outs["gold-meetings"] / "run.trec").read_text().splitlines()
    assert gold_trec[0].split()[-1] == "bm25@gold-meetings"
    arm = json.loads((out / "arm.json").read_text())
    assert (arm["arm"]["name"], arm["arm"]["depth"], arm["scope"]["oracle"]) == ("bm25", 100, False)
    assert json.loads((outs["gold-meetings"] / "arm.json").read_text())["scope"]["oracle"] is True

    # a second load and run reproduce the files byte for byte
    assert invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS).exit_code == 0
    again = tmp_path / "again"
    assert invoke("run", "--corpus", corpus, "--arm", "bm25", "--out", again).exit_code == 0
    for name in ("passages.jsonl", "run.trec", "run.jsonl", "arm.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_cli_refusals_exit_3(cli_env, tmp_path, stack):
    from turnbench.stack.clients import opensearch_client

    corpus = write_tiny_corpus(tmp_path / "corpus")
    other = write_tiny_corpus(tmp_path / "other", variant=1)
    assert invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS).exit_code == 0

    res = invoke("run", "--corpus", other, "--arm", "bm25", "--out", tmp_path / "o")
    assert res.exit_code == 3 and "StackStateError" in res.output and "tiny-load-0" in res.output

    res = invoke("run", "--corpus", corpus, "--arm", "nope", "--out", tmp_path / "o")
    assert res.exit_code == 3 and "known arms: bm25, bm25-title" in res.output

    client = opensearch_client(stack)
    client.index(index="their-index", id="1", body={"x": 1}, refresh=True)
    try:
        res = invoke("load", "--corpus", corpus, "--index", "their-index")
        assert res.exit_code == 3 and "ForeignIndex" in res.output
    finally:
        client.indices.delete(index="their-index")

    client.index(index="turnbench-passages", id="stray", refresh=True, body={"meeting_id": "mtg-0001"})
    res = invoke("run", "--corpus", corpus, "--arm", "bm25", "--out", tmp_path / "o")
    assert res.exit_code == 3 and "IndexNotSettled" in res.output and "13 passages" in res.output
    assert not (tmp_path / "o").exists()
    assert invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS).exit_code == 0


def test_a_fresh_run_process_refuses_in_one_line_while_its_inventory_thread_imports_psycopg(cli_env, tmp_path, stack):
    """``turnbench run`` as its own process: the index's marker refuses another corpus (and the counts a stray
    document) while the inventory thread may still be importing psycopg; the refusal is the one line and exit 3,
    never an InternalError from a half-imported client."""
    import subprocess
    import sys
    from pathlib import Path

    from turnbench.stack.clients import opensearch_client

    exe = str(Path(sys.executable).with_name("turnbench"))
    corpus = write_tiny_corpus(tmp_path / "corpus")
    other = write_tiny_corpus(tmp_path / "other", variant=1)
    assert invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS).exit_code == 0
    for _ in range(3):  # a race, so more than once
        res = subprocess.run([exe, "run", "--corpus", str(other), "--arm", "bm25", "--out", str(tmp_path / "o")],
                             capture_output=True, text=True)
        assert res.returncode == 3 and res.stderr.startswith("turnbench: StackStateError: index "), res.stderr
        assert "tiny-load-0" in res.stderr and len(res.stderr.splitlines()) == 1 and not (tmp_path / "o").exists()
    client = opensearch_client(stack)
    client.index(index="turnbench-passages", id="stray", refresh=True, body={"meeting_id": "mtg-0001"})
    res = subprocess.run([exe, "run", "--corpus", str(corpus), "--arm", "bm25", "--out", str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert res.returncode == 3 and res.stderr.startswith("turnbench: IndexNotSettled: ") and "13 passages" in res.stderr
    assert len(res.stderr.splitlines()) == 1 and not (tmp_path / "o").exists()
    assert invoke("load", "--corpus", corpus, "--max-words", MAX_WORDS).exit_code == 0
