"""`turnbench answer` against the real stack: byte-identical claim files, and a stack holding another corpus refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus.format import open_corpus
from turnbench.loading.load import load_corpus

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(stack, monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    load_corpus(stack, open_corpus(ROOT / "fixtures" / "small"))


def test_answer_twice_is_byte_identical(env, tmp_path):
    outs = []
    for name in ("a", "b"):
        r = CliRunner().invoke(main, ["answer", "--corpus", str(ROOT / "fixtures" / "small"), "--out",
                                      str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        n_in = sum(1 for q in open_corpus(ROOT / "fixtures" / "small").queries()
                   if q.scored_on == "answer" and q.meta.get("grammar") != "out")
        assert f"in grammar: {n_in} questions, 0 declined, EM 1.0000, answered 1.0000" in r.output
        outs.append({f: (tmp_path / name / f).read_bytes() for f in ("answers.md", "answers.json", "answers.jsonl")})
    assert outs[0] == outs[1]
    assert b"127.0.0.1" not in outs[0]["answers.json"]  # endpoints are not part of the claim


def test_a_corpus_the_stack_does_not_hold_is_refused(env, tmp_path):
    other = tmp_path / "other"
    r = CliRunner().invoke(main, ["generate", "--meetings", "8", "--words-per-meeting", "300", "--out", str(other)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["answer", "--corpus", str(other), "--out", str(tmp_path / "o")])
    assert r.exit_code == 3 and "StackStateError" in r.output
    assert not (tmp_path / "o").exists()
