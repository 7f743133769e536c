"""Answer scoring (docs/design.md §8) with hand-derived values."""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.harness.helpers import QUERIES, SUBMITTED, count, mset, q, spk, sub
from turnbench.engines.answer.engine import answer_queries
from turnbench.errors import BadInput
from turnbench.harness.answers import AnswerPolicy, answers_block, normalise_name, score_answer, score_answers, set_f1
from turnbench.render.markdown import render_answers_md


def test_count_is_exact_and_tolerance_is_a_parameter():
    assert score_answer(count(5), count(5)) == (1.0, 1.0, None)
    assert score_answer(count(5), count(6)) == (0.0, 0.0, None)
    assert score_answer(count(5), count(6), AnswerPolicy(count_tolerance=1)) == (1.0, 1.0, None)
    assert score_answer(count(5), count(7), AnswerPolicy(count_tolerance=1)) == (0.0, 0.0, None)
    assert score_answer(count(0), count(0)) == (1.0, 1.0, None)


def test_meeting_set_em_with_f1_beside_it():
    # 3 of 4 right: F1 = 2*3/(3+4) = 6/7; EM 0; partial = F1 by default, = EM under set_credit="exact"
    em, partial, f1 = score_answer(mset("m1", "m2", "m3", "m4"), mset("m1", "m2", "m3"))
    assert (em, partial, f1) == (0.0, 6 / 7, 6 / 7)
    assert score_answer(mset("m1", "m2", "m3", "m4"), mset("m1", "m2", "m3"), AnswerPolicy(set_credit="exact")) \
        == (0.0, 0.0, 6 / 7)
    # order is irrelevant; empty answered empty is a correct "none"
    assert score_answer(mset("a", "b"), mset("b", "a")) == (1.0, 1.0, 1.0)
    assert score_answer(mset(), mset()) == (1.0, 1.0, 1.0)
    # one spurious meeting against an empty gold: F1 = 0
    assert score_answer(mset(), mset("x")) == (0.0, 0.0, 0.0)
    assert set_f1(["a", "b"], ["b", "c"]) == 0.5


def test_speaker_needs_name_and_count_partial_is_share_of_fields():
    gold = spk("Ana Lima", 4)
    assert score_answer(gold, spk("ana   lima", 4)) == (1.0, 1.0, None)
    assert score_answer(gold, spk("ANA LIMA", 3)) == (0.0, 0.5, None)
    assert score_answer(gold, spk("Bo Chen", 4)) == (0.0, 0.5, None)
    assert score_answer(gold, spk("Bo Chen", 1)) == (0.0, 0.0, None)
    # casefolding, not just lowercasing: German sharp s
    assert normalise_name("Groß  Ana") == normalise_name("GROSS ana")
    # the only tolerance is case and whitespace: a missing space is a different name
    assert score_answer(gold, spk("AnaLima", 4)) == (0.0, 0.5, None)


def test_declined_and_wrong_type_score_zero():
    assert score_answer(count(2), None) == (0.0, 0.0, None)
    assert score_answer(mset("a"), None) == (0.0, 0.0, 0.0)
    assert score_answer(count(2), mset("a", "b")) == (0.0, 0.0, None)
    assert score_answer(spk("A", 2), count(2)) == (0.0, 0.0, None)


def test_rule_rows_by_hand():
    res = score_answers(QUERIES, SUBMITTED, corpus="c")
    rows = {r.rule: r for r in res.rule_rows()}
    assert list(rows) == ["R3", "R4", "R5", "R6", "R7", "all"]
    r3, r4, r5, r6, r7, al = (rows[k] for k in ["R3", "R4", "R5", "R6", "R7", "all"])
    assert (r3.questions, r3.declined, r3.em, r3.partial, r3.answered, r3.set_f1) == (2, 1, 0.5, 0.5, 0.5, None)
    # R4: EM (0 + 1)/2; F1 (6/7 + 1)/2 = 13/14
    assert (r4.questions, r4.declined, r4.em, r4.answered) == (2, 0, 0.5, 1.0)
    assert r4.partial == pytest.approx(13 / 14, abs=1e-6) and r4.set_f1 == pytest.approx(13 / 14, abs=1e-6)
    assert (r5.em, r5.partial, r5.answered) == (0.0, 0.0, 1.0)
    assert (r6.em, r6.partial, r6.answered) == (0.5, 0.75, 1.0)
    assert (r7.em, r7.answered) == (0.0, 1.0)  # a set submitted for a count: answered, wrong
    # all: EM = (1+0+0+1+0+1+0+0)/8 = 3/8; partial = (1+0+6/7+1+0.5+1+0+0)/8 = (49/14+12/14)/8 = 61/112; answered 7/8
    assert (al.questions, al.declined, al.em, al.answered) == (8, 1, 0.375, 0.875)
    assert al.partial == pytest.approx(61 / 112, abs=1e-6)
    # the retrieval-scored query is not an answer question
    assert "lookup-1" not in res.em_by_query()


def test_grammar_and_surface_rows():
    res = score_answers(QUERIES, SUBMITTED, corpus="c")
    g = {r.grammar: r for r in res.grammar_rows()}
    # 3/7 = 0.4285714..., reported to six decimals like every mean in metrics.json
    assert (g["in"].questions, g["in"].declined, g["in"].em, g["in"].answered) == (7, 0, 0.428571, 1.0)
    assert (g["out"].questions, g["out"].declined, g["out"].em, g["out"].answered) == (1, 1, 0.0, 0.0)
    surfaces = [(r.rule, r.surface, r.grammar, r.questions) for r in res.surface_rows()]
    assert surfaces == [("R3", "r3-chatty", "out", 1), ("R3", "r3-how-many", "in", 1), ("R4", "r4-which", "in", 2),
                        ("R5", "r5-deferred", "in", 1), ("R6", "r6-who-most", "in", 2), ("R7", "r7-in-month", "in", 1)]


def test_unanswered_counts_a_mean_over_returned_would_read_one():
    queries = [q("a", "R3", "s", count(1)), q("b", "R3", "s", count(2))]
    res = score_answers(queries, [sub("a", count(1))])  # b never submitted
    naive = sum(s.em for s in res.scores if s.answered) / sum(1 for s in res.scores if s.answered)
    assert naive == 1.0
    al = res.rule_rows()[-1]
    assert (al.em, al.answered, al.declined, al.questions) == (0.5, 0.5, 1, 2)
    assert res.scores[1].submitted.mechanism == "declined"


def test_none_answerer_is_the_floor():
    answers = answer_queries(None, QUERIES, answerer="none")
    assert [a.query_id for a in answers] == ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]
    assert all(a.answer is None and a.mechanism == "declined" for a in answers)
    al = score_answers(QUERIES, answers, answerer="none").rule_rows()[-1]
    assert (al.em, al.partial, al.answered, al.declined, al.questions) == (0.0, 0.0, 0.0, 8, 8)


def test_refusals():
    with pytest.raises(BadInput, match="two answers"):
        score_answers(QUERIES, [sub("q1", count(3)), sub("q1", count(3))])
    with pytest.raises(BadInput, match="not answer-scored"):
        score_answers(QUERIES, [sub("lookup-1", count(3))])
    with pytest.raises(BadInput, match="no gold answer"):
        score_answers([q("x", "R3", "s", None)], [])
    with pytest.raises(BadInput, match="tolerance"):
        score_answers(QUERIES, [], tolerance=-1)
    with pytest.raises(BadInput, match="set credit"):
        AnswerPolicy(set_credit="half")
    with pytest.raises(BadInput, match="unknown answerer"):
        answer_queries(None, QUERIES, answerer="llm")


def test_submission_order_cannot_change_scores():
    base = score_answers(QUERIES, SUBMITTED)
    shuffled = list(SUBMITTED)
    random.Random(7).shuffle(shuffled)
    again = score_answers(list(reversed(QUERIES)), shuffled)
    assert again == base
    assert [s.query_id for s in base.scores] == sorted(s.query_id for s in base.scores)


TINY_Q = QUERIES[:3] + QUERIES[4:5]


TINY_S = SUBMITTED[:3] + SUBMITTED[4:5]


# Checked by hand: R3 = q1 right + q2 declined; R4 = q3 with 3 of 4 meetings (F1 6/7 = 0.8571);
# R6 = right name, wrong count (partial 0.5); in-grammar partial (1 + 6/7 + 0.5)/3 = 0.7857.
REPO = Path(__file__).resolve().parents[3]
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
    block = answers_block([res]).to_json()
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


_SCRIPT = """
import sys
from tests.unit.harness.helpers import QUERIES, SUBMITTED
from turnbench import canonical
from turnbench.harness.answers import answers_block, score_answers
from turnbench.render.markdown import render_answers_md
res = score_answers(QUERIES, SUBMITTED, corpus="c", answerer="reference")
sys.stdout.buffer.write(canonical.pretty(answers_block([res]).to_json()) + render_answers_md([res]).encode())
"""


def test_bytes_identical_across_hash_seeds():
    outs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True, capture_output=True,
                                cwd=REPO).stdout)
    assert len(outs) == 1
