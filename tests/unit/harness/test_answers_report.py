"""answers.md and the metrics.json ``answers`` block: exact bytes, sorted sets, disjoint column names."""

import os
import subprocess
import sys
from pathlib import Path

from turnbench import canonical
from turnbench.corpus.records import Answer
from turnbench.harness.answers import answers_block, render_answers_md, score_answers
from turnbench.submissions import SubmittedAnswer, read_answers, write_answers

sys.path.insert(0, str(Path(__file__).parent))
from test_answers_scoring import QUERIES, SUBMITTED  # noqa: E402

TINY_Q = QUERIES[:3] + QUERIES[4:5]
TINY_S = SUBMITTED[:3] + SUBMITTED[4:5]

# Checked by hand: R3 = q1 right + q2 declined; R4 = q3 with 3 of 4 meetings (F1 6/7 = 0.8571);
# R6 = right name, wrong count (partial 0.5); in-grammar partial (1 + 6/7 + 0.5)/3 = 0.7857.
GOLDEN = (Path(__file__).parent / "golden_answers.md").read_text(encoding="utf-8")

# What the retrieval table names its columns; the answers block must share none of them.
RETRIEVAL_COLUMNS = {"n", "unanswered", "MRR", "mrr", "nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20",
                     "ndcg_cut_10", "recall_10", "recip_rank", "unjudgeable"}


def test_answers_md_golden():
    res = score_answers(TINY_Q, TINY_S, corpus="tiny", answerer="reference")
    assert render_answers_md([res]) == GOLDEN
    assert "| tiny | R3 | r3-chatty | OUT of grammar | 1 | 1 | 0.0000 |" in GOLDEN


def test_block_sorted_and_disjoint_from_retrieval_columns():
    res = score_answers(QUERIES, SUBMITTED, corpus="c", answerer="reference")
    block = answers_block([res])
    q3 = next(p for p in block["per_query"] if p["query_id"] == "q3")
    assert q3["submitted"]["meetings"] == ["m1", "m2", "m3"]  # submitted as m3, m1, m2
    assert q3["gold"]["meetings"] == ["m1", "m2", "m3", "m4"]
    assert [p["query_id"] for p in block["per_query"]] == sorted(p["query_id"] for p in block["per_query"])
    keys = set(block["rows"][0]) | set(block["per_query"][0])
    assert keys.isdisjoint(RETRIEVAL_COLUMNS)
    assert {"em", "partial", "answered", "set_f1", "declined", "questions", "mechanism"} <= keys
    assert block["policy"]["count_tolerance"] == 0  # a default is written out, not implied
    all_row = [r for r in block["rows"] if (r["rule"], r["surface"], r["grammar"]) == ("all", "all", "all")]
    assert len(all_row) == 1 and all_row[0]["em"] == 0.375


def test_answers_file_round_trip(tmp_path):
    sha = write_answers(tmp_path / "answers.jsonl", reversed(SUBMITTED))
    back = read_answers(tmp_path / "answers.jsonl")
    assert [a.query_id for a in back] == sorted(a.query_id for a in SUBMITTED)
    assert answers_block([score_answers(QUERIES, back)]) == answers_block([score_answers(QUERIES, SUBMITTED)])
    assert sha == canonical.sha256_file(tmp_path / "answers.jsonl")
    assert back[0] == SubmittedAnswer("q1", Answer("count", count=3), "test", {})


_SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from test_answers_scoring import QUERIES, SUBMITTED
from turnbench import canonical
from turnbench.harness.answers import answers_block, render_answers_md, score_answers
res = score_answers(QUERIES, SUBMITTED, corpus="c", answerer="reference")
sys.stdout.buffer.write(canonical.pretty(answers_block([res])) + render_answers_md([res]).encode())
"""


def test_bytes_identical_across_hash_seeds():
    script = _SCRIPT.format(here=str(Path(__file__).parent))
    outs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True).stdout)
    assert len(outs) == 1
