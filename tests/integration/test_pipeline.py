"""bench end to end on the real stack: fixtures/small, twice, byte-identical claims; compare with itself is zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnbench.engines.arms import builtin
from turnbench.harness.compare import SAME, compare
from turnbench.pipeline import bench as pipeline
from turnbench.pipeline.runs import write_run
from turnbench.results.directory import CLAIM_FILES, read_metrics

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-bench-test"

pytestmark = pytest.mark.integration


def bench(stack, out: Path, **kw):
    # the session's stack, reached as an external one: bench never tears down what it did not start
    return pipeline.bench(SMALL, [builtin("bm25")], out, pipeline.BenchOptions(
        provider="external", index=INDEX,
        stack_options={"opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw))


def test_bench_twice_is_byte_identical_and_compares_as_no_difference(stack, tmp_path):
    first = bench(stack, tmp_path / "a")
    second = bench(stack, tmp_path / "b")
    a, b = first[0].out_dir, second[0].out_dir
    for name in (*CLAIM_FILES, "answers.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    doc = read_metrics(a).tree
    prov = doc["provenance"]
    assert prov["stack"] == stack.versions()  # versions only: the provider is not part of the claim
    assert prov["arm"]["arm"]["name"] == "bm25" and prov["index"]["passages_sha256"]
    counts = doc["retrieval"]["counts"]
    assert counts["queries_ranked"] == 103 and counts["queries_judged"] + counts["queries_dropped_unjudgeable"] == 103
    assert "answers" in doc and (a / "runinfo.json").is_file()
    cmp = compare(read_metrics(a), read_metrics(b))
    assert cmp.rows and all(r.delta == 0.0 and r.verdict == SAME for r in cmp.rows)


def test_gold_meetings_scope_is_labelled_an_oracle_and_refuses_to_pair_with_corpus_scope(stack, tmp_path):
    from turnbench.errors import UnpairedComparison

    oracle = bench(stack, tmp_path / "o", scope="gold-meetings", control_name="oracle", answerer="skip")[0]
    assert oracle.out_dir == tmp_path / "o" / "oracle"
    md = (oracle.out_dir / "metrics.md").read_text()
    assert "**ORACLE scope `gold-meetings`" in md
    plain = bench(stack, tmp_path / "p", answerer="skip")[0]
    with pytest.raises(UnpairedComparison, match="scopes differ"):
        compare(read_metrics(plain.out_dir), read_metrics(oracle.out_dir))


def test_scoring_the_written_run_with_turnbench_score_gives_the_bench_numbers(stack, tmp_path):
    from click.testing import CliRunner

    from turnbench.cli import main
    from turnbench.corpus import open_corpus
    from turnbench.engines.retrieval import run_arm

    benched = bench(stack, tmp_path / "bench", answerer="skip")[0]
    rr = run_arm(stack, open_corpus(SMALL), "bm25", index=INDEX)
    run_dir = tmp_path / "run"
    write_run(run_dir, rr)
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(run_dir / "passages.jsonl"),
                                  "--run", str(run_dir / "run.trec"), "--arm-config", str(run_dir / "arm.json"),
                                  "--out", str(tmp_path / "scored")])
    assert r.exit_code == 0, r.output
    scored, ours = read_metrics(tmp_path / "scored").tree, read_metrics(benched.out_dir).tree
    assert scored["retrieval"] == ours["retrieval"]  # ties included: run.trec carries the raw scores
    for name in ("run.raw.trec", "qrels.passages.txt", "run.passages.trec", "bindings.jsonl"):
        assert (tmp_path / "scored" / name).read_bytes() == (benched.out_dir / name).read_bytes(), name
    assert scored["provenance"]["arm"] == ours["provenance"]["arm"]
    assert scored["provenance"]["stack"] == "external/unknown" != ours["provenance"]["stack"]


def test_bench_cli_claim_files_are_byte_identical_across_pythonhashseed(stack, tmp_path):
    import os
    import subprocess
    import sys

    outs = []
    for seed in ("0", "31337"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "TURNBENCH_OPENSEARCH_URL": stack.opensearch_url,
               "TURNBENCH_POSTGRES_DSN": stack.postgres_dsn}
        out = tmp_path / f"seed-{seed}"
        turnbench = str(Path(sys.executable).parent / "turnbench")
        done = subprocess.run([turnbench, "bench", "--corpus", str(SMALL), "--arm", "bm25",
                               "--out", str(out), "--provider", "external", "--index", INDEX],
                              env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert f"wrote {out / 'bm25'}/: metrics.md" in done.stdout and "stages:" in done.stderr
        assert "| **all** |" not in done.stdout  # the summary, not the tables (--full)
        assert "\x1b[" not in done.stderr  # no progress bar when stderr is not a terminal
        outs.append(out / "bm25")
    for name in (*CLAIM_FILES, "answers.md"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


X2_ARM = b"""name = "bm25-content-x2"
description = "bm25 with the content field boosted x2"
body = '''
{"query": {"bool": {"must": [{"match": {"content": {"query": {{query_text}}, "operator": "or", "boost": 2}}}],
                    "filter": {{filter}}}}}
'''
"""


def test_an_equivalent_arm_passes_the_gate_and_the_exports_reproduce_with_ir_measures(stack, tmp_path):
    """A/A on the real stack: bm25 with its content boosted x2 ranks exactly as bm25 does (a power of two scales a
    float without rounding), so compare must find nothing and the gate must pass; and ir_measures reproduces every
    number of the bench's results directory from its exported files alone."""
    from tests.unit.harness.helpers import reproduce_with_ir_measures
    from turnbench.corpus import open_corpus
    from turnbench.engines.arms import parse_arm
    from turnbench.engines.retrieval import run_arm
    from turnbench.harness.judgements import RelevancePolicy
    from turnbench.harness.score import EngineSide, score_run
    from turnbench.results.directory import write_results

    benched = bench(stack, tmp_path / "a", answerer="skip")[0]
    corpus = open_corpus(SMALL)
    twice = parse_arm(X2_ARM, "bm25-content-x2.toml", builtin=False)
    rr = run_arm(stack, corpus, twice, index=INDEX)
    assert {e.score for e in rr.entries} != {e.score for e in run_arm(stack, corpus, "bm25", index=INDEX).entries}
    results = score_run(corpus, rr.passages, rr.entries, policy=RelevancePolicy(),
                        engine=EngineSide(stack.versions(), "reused", rr.arm_config))
    out = write_results(tmp_path / "x2", results)
    cmp = compare(read_metrics(benched.out_dir), read_metrics(out))
    assert cmp.gate_failures() == [] and all(r.delta == 0.0 and r.verdict == SAME for r in cmp.rows)

    doc = read_metrics(benched.out_dir).tree
    again = reproduce_with_ir_measures(benched.out_dir)
    trec = json.loads((benched.out_dir / "trec.json").read_text())["measures"]
    for r in doc["retrieval"]["per_query"]:
        for m, v in r["values"].items():
            if m not in trec:
                continue  # words and seconds, not trec measures: re-derived in tests/unit/harness/test_spans.py
            assert round(again[r["query_id"]][m], 6) == v, (r["query_id"], m)


def test_any_concurrency_gives_the_same_run_byte_for_byte(stack, tmp_path):
    from turnbench.corpus import open_corpus
    from turnbench.engines.retrieval import run_arm

    bench(stack, tmp_path / "bench", answerer="skip")  # loads SMALL into INDEX
    corpus = open_corpus(SMALL)
    runs = {n: run_arm(stack, corpus, "bm25", index=INDEX, concurrency=n) for n in (1, 4)}
    for n, rr in runs.items():
        write_run(tmp_path / f"c{n}", rr)
    one, four = runs[1].entries, runs[4].entries
    assert (one.query_ids, list(one.passage_ids), list(one.scores)) == (
        four.query_ids, list(four.passage_ids), list(four.scores))
    assert len(one.query_ids) > 50 and len(one) > 1000
    for name in ("run.trec", "run.jsonl", "passages.jsonl", "arm.json"):
        assert (tmp_path / "c1" / name).read_bytes() == (tmp_path / "c4" / name).read_bytes(), name


def test_bench_scores_its_answers_with_the_tolerance_and_set_credit_given(stack, tmp_path):
    # the same answers, scored three ways: the defaults are the policy's own, a looser policy is written down
    default = bench(stack, tmp_path / "d")[0]
    loose = bench(stack, tmp_path / "l", tolerance=3, set_credit="exact")[0]
    d, ls = (read_metrics(o.out_dir).tree["answers"] for o in (default, loose))
    assert d["policy"]["count_tolerance"] == 0 and d["policy"]["set_credit"] == "f1"
    assert ls["policy"]["count_tolerance"] == 3 and ls["policy"]["set_credit"] == "exact"
    by_id = {r["query_id"]: r for r in ls["per_query"]}
    assert len(d["per_query"]) == len(by_id) > 0 and any(r["gold"]["type"] == "meeting_set" for r in d["per_query"])
    for r in d["per_query"]:  # a looser count never scores lower; exact credit makes partial = EM on sets
        assert by_id[r["query_id"]]["em"] >= r["em"]
        if r["gold"]["type"] == "meeting_set":
            assert by_id[r["query_id"]]["partial"] == by_id[r["query_id"]]["em"]
