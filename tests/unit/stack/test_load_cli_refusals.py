"""CLI refusals that happen before the stack is touched: a tampered corpus, an unknown arm (exit 3)."""

from pathlib import Path

from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.records import Meeting, Query, Turn


def _corpus(out: Path) -> Path:
    m = Meeting("m1", "Team — sync #1", "2026-01-05", 2.0, "synthetic", ("Ana",),
                (Turn(0, "Ana", 0.0, 2.0, "hello all"),))
    q = Query("q1", "lookup", "R1", "direct", "hello", "retrieval", ("m1",), {"m1": ((0, 0),)})
    with CorpusWriter(out) as w:
        w.write_meetings([m])
        w.write_queries([q])
        w.write_manifest(corpus_id="cli-refusals", licence={"tier": "synthetic", "name": "CC0-1.0"},
                         producer={"name": "tests", "version": "1", "seed": 0}, counts={"meetings": 1})
    return out


def test_load_and_run_refuse_a_corpus_that_does_not_match_its_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "no-stack"))
    root = _corpus(tmp_path / "c")
    part = root / "meetings" / "part-0000.jsonl"
    part.write_bytes(part.read_bytes().replace(b"hello all", b"hello ALL"))
    for args in (["load", "--corpus", str(root)],
                 ["run", "--corpus", str(root), "--arm", "bm25", "--out", str(tmp_path / "o")]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 3, res.output
        assert "CorpusIntegrityError" in res.output and "meetings/part-0000.jsonl" in res.output
    assert not (tmp_path / "o").exists()


def test_run_refuses_an_unknown_arm_naming_the_known_ones(tmp_path):
    root = _corpus(tmp_path / "c")
    res = CliRunner().invoke(main, ["run", "--corpus", str(root), "--arm", "bm42", "--out", str(tmp_path / "o")])
    assert res.exit_code == 3
    assert "UnknownArm" in res.output and "known arms: bm25, bm25-title" in res.output
