"""compare over answer blocks written by the answer scorer: EM drops gate, policies must match."""

import sys
from pathlib import Path

import pytest

from turnbench.errors import UnpairedComparison
from turnbench.harness.answers import answers_block, score_answers
from turnbench.harness.compare import WORSE, compare

sys.path.insert(0, str(Path(__file__).parent))
from test_answers_scoring import count, mset, q, sub  # noqa: E402


def _doc(block):
    return {
        "schema_version": 1,
        "provenance": {"corpus": {"id": "c", "sha256": "s"}, "relevance_policy": {"name": "graded"},
                       "metric_engine": {"name": "pytrec_eval-terrier", "version": "0.5.11"}, "arm": {"name": "bm25"}},
        "scope": {"label": "corpus", "oracle": False},
        "answers": block,
    }


# 20 count questions: the reference gets all right; a broken candidate loses 10 of them
QS = [q(f"a{i:02d}", "R3" if i % 2 else "R7", "s", count(i)) for i in range(20)]
RIGHT = [sub(x.id, count(i)) for i, x in enumerate(QS)]
BROKEN = [sub(x.id, count(i + (1 if i < 10 else 0))) for i, x in enumerate(QS)]


def test_an_em_drop_is_worse_and_fails_the_gate():
    base = _doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    cand = _doc(answers_block([score_answers(QS, BROKEN, corpus="c", answerer="reference")]))
    cmp = compare(base, cand)
    em_all = next(r for r in cmp.rows if r.block == "answers" and r.measure == "em" and r.group("rule") == "all")
    assert (em_all.baseline, em_all.candidate, em_all.delta) == (1.0, 0.5, -0.5)
    assert em_all.verdict == WORSE and em_all.high < 0
    assert any("answers" in f and " em " in f for f in cmp.gate_failures())
    same = compare(base, base)
    assert same.gate_failures() == [] and all(r.delta == 0.0 for r in same.rows)


def test_none_against_reference_is_noted_and_worse():
    base = _doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    cand = _doc(answers_block([score_answers(QS, [], corpus="c", answerer="none")]))
    cmp = compare(base, cand)
    assert "answerers differ: baseline reference, candidate none" in cmp.notes
    answered = next(r for r in cmp.rows if r.measure == "answered" and r.group("rule") == "all")
    assert (answered.delta, answered.verdict) == (-1.0, WORSE)


def test_different_answer_policies_refuse():
    base = _doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    loose = _doc(answers_block([score_answers(QS, BROKEN, corpus="c", answerer="reference", tolerance=1)]))
    with pytest.raises(UnpairedComparison, match="answer scoring policies"):
        compare(base, loose)


def test_meeting_sets_compare_on_em_and_f1():
    qs = [q(f"s{i}", "R4", "which", mset("m1", "m2")) for i in range(6)]
    base = _doc(answers_block([score_answers(qs, [sub(x.id, mset("m1", "m2")) for x in qs], corpus="c")]))
    cand = _doc(answers_block([score_answers(qs, [sub(x.id, mset("m1")) for x in qs], corpus="c")]))
    rows = {r.measure: r for r in compare(base, cand).rows if r.group("rule") == "all"}
    # one of two meetings found: EM 0, F1 = 2*1/(1+2) = 0.666667
    assert rows["em"].delta == -1.0 and rows["set_f1"].candidate == 0.666667
