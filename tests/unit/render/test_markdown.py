"""turnbench.render.markdown and turnbench.results.directory: metrics.md and results directories — labels, byte
identity, refusals, domain rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.harness.helpers import RP, meeting, query, score, small_run, turn, turn_passages, write_corpus
from turnbench.corpus import open_corpus
from turnbench.errors import BadInput
from turnbench.render.markdown import render_metrics_md
from turnbench.results.directory import CLAIM_FILES, read_metrics, write_results

REPO = Path(__file__).resolve().parents[3]


def test_empty_run_scores_zero_everywhere_and_oracle_scope_is_labelled(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, [], scope="gold-meetings")
    assert res.document["retrieval"]["counts"]["queries_unanswered"] == 3
    # span:P_best is the chunking's ceiling, not the run's: whole turns hold nothing but the gold they hold
    rows = res.results.retrieval.rows
    assert all(v in (0.0, None) for r in rows for m, v in r.means.items() if m != "span:P_best")
    assert {r.means.get("span:P_best") for r in rows if r.cls != "summarize"} == {1.0}
    md = render_metrics_md(res.results)
    assert md.startswith("# Retrieval metrics: tiny\n\n**ORACLE scope `gold-meetings`")
    assert res.document["scope"]["oracle"] is True


def test_write_results_is_byte_identical_and_refuses_a_non_empty_directory(tmp_path, small_corpus):
    corpus, passages = small_corpus
    a = write_results(tmp_path / "a", score(corpus, passages, small_run()))
    b = write_results(tmp_path / "b", score(corpus, passages, small_run()))
    for name in CLAIM_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    doc = read_metrics(a).tree
    assert doc["schema_version"] == 2 and doc["provenance"]["arm"] == {"k": 1, "name": "hand"}
    assert doc["provenance"]["metric_engine"]["name"] == "pytrec_eval-terrier"
    text = (a / "metrics.json").read_text()
    assert str(tmp_path) not in text and str(tmp_path) not in (a / "metrics.md").read_text()
    with pytest.raises(BadInput, match="not empty"):
        write_results(a, score(corpus, passages, small_run()))


_SCRIPT = """
import sys
from pathlib import Path
from tests.unit.harness.helpers import meeting, small_world, turn, turn_passages, write_corpus
from turnbench.corpus import open_corpus
from turnbench.harness.judgements import RelevancePolicy
from turnbench.results.directory import write_results
from turnbench.harness.score import UNKNOWN, EngineSide, score_run
from turnbench.rankings import RankedPassage
out = Path(sys.argv[1])
meetings, queries = small_world()
corpus = open_corpus(write_corpus(out / "corpus", [*meetings, meeting("m9", [turn(0, "fay", 0, 10, 10)])], queries))
run = [RankedPassage(q, p, 0, s) for q, p, s in [("q1", "m1:00001", 1.0), ("q1", "m1:00000", 1.0),
       ("q2", "m2:00000", 1.0), ("q2", "m1:00002", 1.0), ("q3", "m3:00000", 1.0), ("q3", "m2:00001", 0.5)]]
res = score_run(corpus, turn_passages(meetings), run, policy=RelevancePolicy(),
                engine=EngineSide({"provider": "none"}, UNKNOWN, {"name": "x", "set": "abc"}))
write_results(out / "results", res)
"""


def test_claim_files_are_byte_identical_across_pythonhashseed(tmp_path):
    outs = []
    for seed in ("0", "4242", "random"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", _SCRIPT, str(out)], check=True, env=env, cwd=REPO)
        outs.append(out / "results")
    for name in CLAIM_FILES:
        first = (outs[0] / name).read_bytes()
        assert all((o / name).read_bytes() == first for o in outs[1:]), name


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
    by_domain = res.document["retrieval"]["rows_by_domain"]
    assert sorted(by_domain) == ["committee", "product"]
    product = {r["class"]: r for r in by_domain["product"]}
    committee = {r["class"]: r for r in by_domain["committee"]}
    assert product["lookup"]["means"]["MRR"] == 1.0 and committee["lookup"]["means"]["MRR"] == 0.5
    assert product["summarize"]["passage_level_queries"] == 0
    assert committee["summarize"]["passage_level_queries"] == 1
    assert [p.domain for p in res.results.retrieval.per_query] == ["product", "committee", "committee", "product"]
    md = render_metrics_md(res.results)
    assert "## Domain: committee" in md and "## Domain: product" in md
    # summarize has one turn-level (q3) and one meeting-level (q4) query: the note must not call it meeting-only
    assert "`summarize` mixes 1 passage-level and 1 meeting-level queries" in md
    assert "`summarize` is judged at meeting level only" not in md


def test_a_corpus_without_domains_has_no_domain_rows(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())
    assert "rows_by_domain" not in res.document["retrieval"]
    assert "## Domain" not in render_metrics_md(res.results)
    assert all("domain" not in r for r in res.document["retrieval"]["per_query"])
