"""The commands that produce and judge results (turnbench.cli.evaluate): exit codes, messages, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.cli.helpers import one_meeting_corpus
from tests.unit.harness.helpers import small_run
from turnbench.cli import main
from turnbench.harness.score import UNKNOWN
from turnbench.passages import write_passages
from turnbench.results.directory import CLAIM_FILES, read_metrics
from turnbench.runfiles import write_jsonl_run, write_trec_run

ROOT = Path(__file__).resolve().parents[3]


def test_score_cli_scores_trec_and_jsonl_runs_alike(tmp_path, small_corpus):
    corpus, passages = small_corpus
    from turnbench.rankings import normalise

    run = normalise(small_run(), {p.id: p for p in passages})
    write_passages(tmp_path / "passages.jsonl", passages)
    write_trec_run(tmp_path / "run.trec", run, "hand")
    write_jsonl_run(tmp_path / "run.jsonl", run)
    (tmp_path / "arm.json").write_text(json.dumps({"name": "hand-arm", "depth": 3}))
    runner = CliRunner()
    base = ["score", "--corpus", str(corpus.root), "--passages", str(tmp_path / "passages.jsonl")]
    r1 = runner.invoke(main, [*base, "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "o1")])
    r2 = runner.invoke(main, [*base, "--run", str(tmp_path / "run.jsonl"), "--out", str(tmp_path / "o2")])
    assert r1.exit_code == 0, r1.output
    assert r2.exit_code == 0, r2.output
    assert "| tiny | **all** |" in r1.output
    for name in CLAIM_FILES:
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o2" / name).read_bytes()
    doc = read_metrics(tmp_path / "o1").tree
    assert doc["provenance"]["arm"] == doc["provenance"]["stack"] == doc["provenance"]["index"] == UNKNOWN
    assert json.loads((tmp_path / "o1" / "runinfo.json").read_text())["elapsed_seconds"]["judge_and_score"] >= 0
    r3 = runner.invoke(main, [*base, "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "o3"),
                              "--arm-config", str(tmp_path / "arm.json"), "--binary-relevance",
                              "--relevance-high", "0.6"])
    assert r3.exit_code == 0, r3.output
    doc3 = read_metrics(tmp_path / "o3").tree
    assert doc3["provenance"]["arm"] == {"depth": 3, "name": "hand-arm"}
    assert doc3["provenance"]["relevance_policy"]["name"] == "binary(high=0.6,low=0.0,answer=0.5)"
    # an existing results directory is bad input (exit 2); a run naming an unknown passage is a refusal (3)
    args = [*base, "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "o1")]
    assert runner.invoke(main, args).exit_code == 2
    (tmp_path / "bad.trec").write_text("q1 Q0 nowhere 1 1.0 x\n")
    bad = runner.invoke(main, [*base, "--run", str(tmp_path / "bad.trec"), "--out", str(tmp_path / "o4")])
    assert bad.exit_code == 3 and "UnjudgedPassage" in bad.output
    assert not (tmp_path / "o4").exists()


def test_bench_refuses_an_unknown_arm_and_a_bad_corpus_before_any_stack_starts(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["bench", "--corpus", str(ROOT / "fixtures" / "small"), "--arm", "no-such-arm",
                             "--out", str(tmp_path), "--provider", "external"])
    assert r.exit_code == 3 and "UnknownArm" in r.output
    r = runner.invoke(main, ["bench", "--corpus", str(tmp_path / "missing"), "--arm", "bm25",
                             "--out", str(tmp_path / "o"), "--provider", "external"])
    # a path that does not exist is bad input (exit 2), not a refusal
    assert r.exit_code == 2 and "BadInput" in r.output and "no such corpus directory" in r.output


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


def test_run_refuses_an_unknown_arm_naming_the_known_ones(tmp_path):
    root = one_meeting_corpus(tmp_path / "c")
    res = CliRunner().invoke(main, ["run", "--corpus", str(root), "--arm", "bm42", "--out", str(tmp_path / "o")])
    assert res.exit_code == 3
    assert "UnknownArm" in res.output and "known arms: bm25, bm25-title" in res.output


@pytest.mark.parametrize("args,message", [
    (["--seeds", "1,x"], "give seeds as integers separated by commas"),
    (["--seeds", "1,-2"], "a seed is 0..2147483647"),
    (["--seeds", "3,3"], "distinct seeds"),
    (["--seeds", "1", "--corpus", "fixtures/small"], "exactly one of --corpus DIR and --seeds"),
    ([], "exactly one of --corpus DIR and --seeds"),
    (["--seeds", "1", "--workers", "0"], "--workers 0: give 1 to 64 processes"),
])
def test_bench_seeds_hostile_inputs_refuse_before_any_corpus_or_stack(tmp_path, args, message):
    r = CliRunner().invoke(main, ["bench", "--arm", "bm25", "--out", str(tmp_path / "out"),
                                  "--corpora", str(tmp_path / "corpora"), *args])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "corpora").exists()


def test_bench_seeds_refuses_a_corpora_directory_holding_another_corpus(tmp_path):
    from tests.unit.cli.helpers import one_meeting_corpus

    one_meeting_corpus(tmp_path / "corpora" / "seed-4")
    r = CliRunner().invoke(main, ["bench", "--seeds", "4", "--arm", "bm25", "--out", str(tmp_path / "out"),
                                  "--corpora", str(tmp_path / "corpora")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "not seed 4's default corpus" in r.output
    assert not (tmp_path / "out").exists()
