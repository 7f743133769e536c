"""`turnbench answer` without a stack: the none floor, scoring another engine's answers.jsonl, refusals."""

import json
from pathlib import Path

from click.testing import CliRunner

from turnbench.cli import main

SMALL = str(Path(__file__).resolve().parents[3] / "fixtures" / "small")
QUERIES = [json.loads(x) for x in Path(SMALL, "queries.jsonl").read_text().splitlines()]
AGG = [q for q in QUERIES if q["scored_on"] == "answer"]
CORPUS_ID = json.loads(Path(SMALL, "manifest.json").read_text())["corpus_id"]


def _answer(*args):
    return CliRunner().invoke(main, ["answer", "--corpus", SMALL, *args])


def test_none_answerer_writes_the_floor(tmp_path):
    r = _answer("--out", str(tmp_path / "none"), "--answerer", "none")
    assert r.exit_code == 0, r.output
    n = len(AGG)
    assert f"none on {CORPUS_ID}, all: {n} questions, {n} declined, EM 0.0000, answered 0.0000" in r.output
    doc = json.loads((tmp_path / "none" / "answers.json").read_text())
    assert doc["answers"]["answerer"] == "none" and doc["answers"]["policy"]["count_tolerance"] == 0
    assert doc["provenance"]["stack"] == "not used by the none answerer"
    md = (tmp_path / "none" / "answers.md").read_text()
    assert f"| {CORPUS_ID} | all | {n} | {n} | 0.0000 | 0.0000 | 0.0000 |" in md
    assert "OUT of grammar" in md
    again = _answer("--out", str(tmp_path / "none2"), "--answerer", "none")
    assert again.exit_code == 0
    for name in ("answers.json", "answers.md", "answers.jsonl"):
        assert (tmp_path / "none" / name).read_bytes() == (tmp_path / "none2" / name).read_bytes()


def test_scoring_another_engines_answers(tmp_path):
    # an engine that knows every gold answer but skips R6: EM = answered = (n - n_R6) / n
    rows = [{"query_id": q["id"], "answer": q["answer"], "mechanism": "oracle"} for q in AGG if q["rule"] != "R6"]
    n, skipped = len(AGG), sum(1 for q in AGG if q["rule"] == "R6")
    assert n and skipped
    f = tmp_path / "answers.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _answer("--out", str(tmp_path / "ext"), "--answers", str(f))
    assert r.exit_code == 0, r.output
    share = f"{(n - skipped) / n:.4f}"
    assert f"external on {CORPUS_ID}, all: {n} questions, {skipped} declined, EM {share}, answered {share}" in r.output


def test_refusals(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    r = _answer("--out", str(tmp_path / "full"), "--answerer", "none")
    assert r.exit_code == 2 and "not empty" in r.output
    r = _answer("--out", str(tmp_path / "o"), "--answerer", "llm")
    assert r.exit_code == 2
    bad = tmp_path / "bad.jsonl"
    lookup = next(q["id"] for q in QUERIES if q["scored_on"] == "retrieval")
    bad.write_text(json.dumps({"query_id": lookup, "answer": {"type": "count", "count": 1}}) + "\n")
    r = _answer("--out", str(tmp_path / "o2"), "--answers", str(bad))
    assert r.exit_code == 2 and "not answer-scored" in r.output
    r = _answer("--out", str(tmp_path / "o3"), "--tolerance", "-1")
    assert r.exit_code == 2
