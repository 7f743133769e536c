"""score_run + results files: counting every query, id conventions, byte-identical claims, the score CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import meeting, query, turn, turn_passages, write_corpus
from turnbench.cli import main
from turnbench.corpus import open_corpus
from turnbench.errors import BadInput, UnjudgedPassage
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.report import CLAIM_FILES, read_metrics, render_metrics_md, write_results
from turnbench.harness.score import UNKNOWN, score_run
from turnbench.runs import Passage, RankedPassage, write_jsonl_run, write_passages, write_trec_run

HERE = Path(__file__).parent
PROV = {"stack": UNKNOWN, "index": UNKNOWN, "arm": {"name": "hand", "k": 1}}


def RP(q, p, s):
    return RankedPassage(q, p, 0, float(s))


def small_run():
    # q1 (lookup, gold = bob's turn m1:1, the answer turn): perfect.
    # q2 (multi_file, gold m1:2 and m2:0): both gold passages tied with a non-gold one in m1.
    # q3 (summarize, gold meetings m2, m3): only m3 retrieved.
    return [RP("q1", "m1:00001", 3), RP("q1", "m1:00000", 2),
            RP("q2", "m2:00000", 1), RP("q2", "m1:00002", 1), RP("q2", "m1:00000", 1),
            RP("q3", "m3:00000", 1)]


def score(corpus, passages, run, **kw):
    return score_run(corpus, passages, run, policy=kw.pop("policy", RelevancePolicy()), provenance=PROV, **kw)


def rows_by_class(results):
    return {r["class"]: r for r in results.retrieval["rows"]}


def test_small_corpus_counts_every_query_and_shows_meeting_only_columns_as_dashes(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())
    counts = res.retrieval["counts"]
    assert counts["queries_ranked"] == 4 and counts["queries_judged"] == 3
    assert counts["queries_dropped_unjudgeable"] == 1 and counts["queries_unanswered"] == 0
    assert counts["judged_passages_by_grade"] == {"2": 2, "3": 1}
    assert res.retrieval["dropped_unjudgeable"] == ["q4"]
    rows = rows_by_class(res)
    assert rows["lookup"]["dropped_unjudgeable"] == 1 and rows["lookup"]["queries"] == 1
    # q2: normalised order is m1:00000 (non-gold), m1:00002, m2:00000 (meeting, then index break the tie)
    # DCG@10 = 0 + 2/log2(3) + 2/log2(4) = 2.261860; IDCG = 2 + 2/log2(3) = 3.261860 -> 0.693426
    assert rows["multi_file"]["means"]["nDCG@10"] == 0.693426
    assert rows["multi_file"]["means"]["MRR"] == 0.5
    # q3 meeting level: gold {m2, m3}, run [m3] -> nDCG@10 = 1 / (1 + 1/log2(3)) = 0.613147, recall 0.5
    assert rows["summarize"]["means"]["meeting:nDCG@10"] == 0.613147
    assert rows["summarize"]["means"]["meeting:R@10"] == 0.5
    assert rows["summarize"]["means"]["nDCG@10"] is None
    # all: passage columns over the two passage-level queries, meeting columns over all three
    assert rows["all"]["means"]["nDCG@10"] == round((1.0 + 0.693426) / 2, 6)
    assert rows["all"]["passage_level_queries"] == 2 and rows["all"]["queries"] == 3
    md = render_metrics_md(res.document)
    assert "| tiny | summarize | 1 | 0 | 0 | — | — | — | — | — | — | — | 0.6131 | 0.5000 |" in md
    assert "| tiny | multi_file | 1 | 0 | 0 |" in md


def test_a_mean_over_what_was_returned_would_read_one_where_the_truth_is_half(tmp_path):
    m = meeting("m", [turn(0, "ann", 0, 10, 10), turn(1, "ann", 10, 20, 10)])
    corpus = open_corpus(write_corpus(tmp_path / "c", [m], [query("a", "lookup", {"m": [(0, 0)]}),
                                                             query("b", "lookup", {"m": [(1, 1)]})]))
    res = score(corpus, turn_passages([m]), [RP("a", "m:00000", 1)])  # b is never answered
    returned = [r for r in res.retrieval["per_query"] if r["answered"]]
    assert sum(r["values"]["nDCG@10"] for r in returned) / len(returned) == 1.0
    row = rows_by_class(res)["lookup"]
    assert row["means"]["nDCG@10"] == 0.5 and row["unanswered"] == 1 and row["queries"] == 2
    assert "| tiny | lookup | 2 | 1 | 0 | 0.5000 | 0.5000 |" in render_metrics_md(res.document)


def test_swapping_passage_id_conventions_leaves_every_metric_unchanged(tmp_path, small_corpus):
    corpus, passages = small_corpus
    # a second convention whose ids sort in the opposite order: "zz-..." for early passages
    rename = {p.id: f"{chr(ord('z') - p.index)}{chr(ord('z') - int(p.meeting[1:]))}-{p.meeting}" for p in passages}
    swapped = [Passage(rename[p.id], p.meeting, p.speaker, p.start, p.end, p.index, p.kind) for p in passages]
    run = small_run()
    swapped_run = [RP(e.query_id, rename[e.passage_id], e.score) for e in run]
    a, b = score(corpus, passages, run), score(corpus, swapped, swapped_run)
    assert a.retrieval == b.retrieval
    # ... which is not luck: fed raw to trec_eval, the swap moves q2's tie
    from turnbench.harness.metrics import Measure, evaluate

    qrels = {p: g for p, g in {"m1:00002": 2, "m2:00000": 2}.items()}
    raw = {"q2": [(e.passage_id, e.score) for e in run if e.query_id == "q2"]}
    raw_swapped = {"q2": [(rename[d], s) for d, s in raw["q2"]]}
    n10 = Measure("nDCG", 10)
    v1 = evaluate({"q2": qrels}, raw, [n10])["q2"][n10]
    v2 = evaluate({"q2": {rename[d]: g for d, g in qrels.items()}}, raw_swapped, [n10])["q2"][n10]
    assert v1 != v2


def test_refusals_and_bad_input(small_corpus):
    corpus, passages = small_corpus
    with pytest.raises(UnjudgedPassage):
        score(corpus, passages, [RP("q1", "nowhere:1", 1)])
    with pytest.raises(BadInput, match="not in corpus"):
        score(corpus, passages, [RP("q-unknown", "m1:00000", 1)])
    with pytest.raises(BadInput, match="provenance lacks"):
        score_run(corpus, passages, [], policy=RelevancePolicy(), provenance={"arm": UNKNOWN})
    with pytest.raises(BadInput, match="scope"):
        score(corpus, passages, [], scope="everything")


def test_empty_run_scores_zero_everywhere_and_oracle_scope_is_labelled(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, [], scope="gold-meetings")
    assert res.retrieval["counts"]["queries_unanswered"] == 3
    assert all(v in (0.0, None) for r in res.retrieval["rows"] for v in r["means"].values())
    md = render_metrics_md(res.document)
    assert md.startswith("# Retrieval metrics: tiny\n\n**ORACLE scope `gold-meetings`")
    assert res.document["scope"]["oracle"] is True


def test_write_results_is_byte_identical_and_refuses_a_non_empty_directory(tmp_path, small_corpus):
    corpus, passages = small_corpus
    a = write_results(tmp_path / "a", score(corpus, passages, small_run()))
    b = write_results(tmp_path / "b", score(corpus, passages, small_run()))
    for name in CLAIM_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    doc = read_metrics(a)
    assert doc["schema_version"] == 1 and doc["provenance"]["arm"] == {"k": 1, "name": "hand"}
    assert doc["provenance"]["metric_engine"]["name"] == "pytrec_eval-terrier"
    text = (a / "metrics.json").read_text()
    assert str(tmp_path) not in text and str(tmp_path) not in (a / "metrics.md").read_text()
    with pytest.raises(BadInput, match="not empty"):
        write_results(a, score(corpus, passages, small_run()))


_SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.unit.harness.helpers import meeting, small_world, turn, turn_passages, write_corpus
from turnbench.corpus import open_corpus
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.report import write_results
from turnbench.harness.score import UNKNOWN, score_run
from turnbench.runs import RankedPassage
out = Path(sys.argv[1])
meetings, queries = small_world()
corpus = open_corpus(write_corpus(out / "corpus", [*meetings, meeting("m9", [turn(0, "fay", 0, 10, 10)])], queries))
run = [RankedPassage(q, p, 0, s) for q, p, s in [("q1", "m1:00001", 1.0), ("q1", "m1:00000", 1.0),
       ("q2", "m2:00000", 1.0), ("q2", "m1:00002", 1.0), ("q3", "m3:00000", 1.0), ("q3", "m2:00001", 0.5)]]
res = score_run(corpus, turn_passages(meetings), run, policy=RelevancePolicy(),
                provenance={"stack": {"provider": "none"}, "index": UNKNOWN, "arm": {"name": "x", "set": "abc"}})
write_results(out / "results", res)
"""


def test_claim_files_are_byte_identical_across_pythonhashseed(tmp_path):
    outs = []
    for seed in ("0", "4242", "random"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", _SCRIPT, str(out), str(HERE)], check=True, env=env)
        outs.append(out / "results")
    for name in CLAIM_FILES:
        first = (outs[0] / name).read_bytes()
        assert all((o / name).read_bytes() == first for o in outs[1:]), name


def test_score_cli_scores_trec_and_jsonl_runs_alike(tmp_path, small_corpus):
    corpus, passages = small_corpus
    from turnbench.runs import normalise

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
    doc = read_metrics(tmp_path / "o1")
    assert doc["provenance"]["arm"] == doc["provenance"]["stack"] == doc["provenance"]["index"] == UNKNOWN
    assert json.loads((tmp_path / "o1" / "runinfo.json").read_text())["elapsed_seconds"]["judge_and_score"] >= 0
    r3 = runner.invoke(main, [*base, "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "o3"),
                              "--arm-config", str(tmp_path / "arm.json"), "--binary-relevance",
                              "--relevance-high", "0.6"])
    assert r3.exit_code == 0, r3.output
    doc3 = read_metrics(tmp_path / "o3")
    assert doc3["provenance"]["arm"] == {"depth": 3, "name": "hand-arm"}
    assert doc3["provenance"]["relevance_policy"]["name"] == "binary(high=0.6,low=0.0)"
    # an existing results directory is bad input (exit 2); a run naming an unknown passage is a refusal (3)
    args = [*base, "--run", str(tmp_path / "run.trec"), "--out", str(tmp_path / "o1")]
    assert runner.invoke(main, args).exit_code == 2
    (tmp_path / "bad.trec").write_text("q1 Q0 nowhere 1 1.0 x\n")
    bad = runner.invoke(main, [*base, "--run", str(tmp_path / "bad.trec"), "--out", str(tmp_path / "o4")])
    assert bad.exit_code == 3 and "UnjudgedPassage" in bad.output
    assert not (tmp_path / "o4").exists()


def _rule5_by_plain_sorting(entries, pmap):
    """DESIGN rule 5 spelled out with Python sorts: best score per passage, then (-score, kind, meeting, index, id)."""
    best = {}
    for e in entries:
        seen = best.setdefault(e.query_id, {})
        seen[e.passage_id] = max(e.score, seen.get(e.passage_id, e.score))
    return {q: [RankedPassage(q, pid, 0, 0.0) for pid in sorted(
        s, key=lambda pid: (-s[pid], pmap[pid].kind, pmap[pid].meeting, pmap[pid].index, pid))]
        for q, s in sorted(best.items())}


def test_the_fast_normalised_order_equals_runs_normalise_on_tie_heavy_input():
    import random

    from turnbench.runs import normalised_order as normalised_run

    normalise = _rule5_by_plain_sorting

    rng = random.Random(3)
    passages = [Passage(f"{rng.choice('abcxyz')}{i:03d}", f"m{rng.randrange(4)}", "s", 0.0, 1.0, rng.randrange(5),
                        rng.choice(("turn", "title"))) for i in range(60)]
    pmap = {p.id: p for p in passages}
    entries = [RankedPassage(f"q{rng.randrange(7)}", rng.choice(passages).id, 0, float(rng.choice((1, 1, 2, 0.5, 3))))
               for _ in range(600)]  # many repeats of one passage in one query, most scores tied
    reference = normalise(entries, pmap)
    assert normalised_run(entries, pmap) == {q: [e.passage_id for e in v] for q, v in reference.items()}
    assert normalised_run([], pmap) == {}
    with pytest.raises(UnjudgedPassage):
        normalised_run([RankedPassage("q", "nope", 1, 1.0)], pmap)


def test_domains_get_their_own_rows_and_a_class_mixing_levels_is_described_as_such(tmp_path):
    """QMSum-shaped data: queries carry a domain, and summarize mixes turn-level and meeting-level gold."""
    from dataclasses import replace

    m1 = meeting("m1", [turn(0, "ann", 0, 10, 10), turn(1, "bob", 10, 20, 10)])
    m2 = meeting("m2", [turn(0, "cat", 0, 10, 10), turn(1, "dan", 10, 20, 10)])
    qs = [
        replace(query("q1", "lookup", {"m1": [(1, 1)]}), meta={"domain": "product"}),
        replace(query("q2", "lookup", {"m2": [(0, 0)]}), meta={"domain": "committee"}),
        replace(query("q3", "summarize", {"m2": [(0, 1)]}), meta={"domain": "committee"}),
        replace(query("q4", "summarize", {"m1": [(0, 1)]}, level="meeting"), meta={"domain": "product"}),
    ]
    corpus = open_corpus(write_corpus(tmp_path / "c", [m1, m2], qs))
    passages = turn_passages([m1, m2])
    # q1 finds its gold turn first; q2 ranks a non-gold passage first, gold second; q3, q4 find their meeting
    run = [RP("q1", "m1:00001", 2), RP("q2", "m2:00001", 2), RP("q2", "m2:00000", 1),
           RP("q3", "m2:00000", 1), RP("q4", "m1:00000", 1)]
    res = score(corpus, passages, run)
    by_domain = res.retrieval["rows_by_domain"]
    assert sorted(by_domain) == ["committee", "product"]
    product = {r["class"]: r for r in by_domain["product"]}
    committee = {r["class"]: r for r in by_domain["committee"]}
    assert product["lookup"]["means"]["MRR"] == 1.0 and committee["lookup"]["means"]["MRR"] == 0.5
    assert product["summarize"]["passage_level_queries"] == 0
    assert committee["summarize"]["passage_level_queries"] == 1
    assert [p["domain"] for p in res.retrieval["per_query"]] == ["product", "committee", "committee", "product"]
    md = render_metrics_md(res.document)
    assert "## Domain: committee" in md and "## Domain: product" in md
    # summarize has one turn-level (q3) and one meeting-level (q4) query: the note must not call it meeting-only
    assert "`summarize` mixes 1 passage-level and 1 meeting-level queries" in md
    assert "`summarize` is judged at meeting level only" not in md


def test_a_corpus_without_domains_has_no_domain_rows(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())
    assert "rows_by_domain" not in res.retrieval
    assert "## Domain" not in render_metrics_md(res.document)
    assert all("domain" not in r for r in res.retrieval["per_query"])
