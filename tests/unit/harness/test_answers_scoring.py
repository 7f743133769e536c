"""Answer scoring (DESIGN §8) with hand-derived values."""

import random

import pytest

from turnbench.corpus.records import Answer, Query
from turnbench.engines.answer.engine import answer_queries
from turnbench.errors import BadInput
from turnbench.harness.answers import AnswerPolicy, normalise_name, score_answer, score_answers, set_f1
from turnbench.submissions import SubmittedAnswer, declined


def q(qid, rule, surface, answer, grammar="in", scored_on="answer"):
    return Query(id=qid, cls="aggregation", rule=rule, surface=surface, text=f"text of {qid}", scored_on=scored_on,
                 gold_meetings=tuple(answer.meetings or ()) if answer else (), answer=answer, gold_level="meeting",
                 meta={"grammar": grammar})


def count(n):
    return Answer("count", count=n)


def mset(*ms):
    return Answer("meeting_set", meetings=tuple(ms))


def spk(name, n):
    return Answer("speaker_count", count=n, speaker=name)


def sub(qid, answer, mechanism="test"):
    return SubmittedAnswer(qid, answer, mechanism, {})


# The worked example used by several tests; expected values are derived by hand below.
QUERIES = [
    q("q1", "R3", "r3-how-many", count(3)),
    q("q2", "R3", "r3-chatty", count(0), grammar="out"),
    q("q3", "R4", "r4-which", mset("m1", "m2", "m3", "m4")),
    q("q4", "R4", "r4-which", mset()),
    q("q5", "R6", "r6-who-most", spk("Ana Lima", 4)),
    q("q6", "R6", "r6-who-most", spk("Bo Chen", 2)),
    q("q7", "R5", "r5-deferred", count(5)),
    q("q8", "R7", "r7-in-month", count(2)),
    q("lookup-1", "R1", "plain", None, scored_on="retrieval"),
]
SUBMITTED = [
    sub("q1", count(3)),
    declined("q2", "out of grammar"),
    sub("q3", mset("m3", "m1", "m2")),
    sub("q4", mset()),
    sub("q5", spk("  ana \t LIMA ", 3)),
    sub("q6", spk("Bo Chen", 2)),
    sub("q7", count(6)),
    sub("q8", mset("m1", "m2")),
]


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
